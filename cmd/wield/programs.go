package main

import (
	"cmp"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/program"
	"github.com/wieldhq/wield/toolfile"
)

// programsToolset is the toolset of run_program alone, which `wield mcp
// --code` serves (and /mcp/programs with serve --programs).
const programsToolset = "programs"

// lateInvoker is the engine, once setup has made it: run_program is
// registered before the tool files load (so that toolsets and agents may
// name it), the engine after.
type lateInvoker struct{ eng atomic.Pointer[engine.Engine] }

func (l *lateInvoker) Call(ctx context.Context, c wield.Call) (*wield.Result, error) {
	e := l.eng.Load()
	if e == nil {
		return nil, wield.ErrClosed
	}
	return e.Call(ctx, c)
}

// programsMode is how the flags and wield.yaml offer run_program: "wait"
// or "fail" (inner calls that need approval wait, or stop the program), or
// "" when they do not.
func (a *app) programsMode() (string, error) {
	mode := a.programs
	if mode == "" && a.cfg != nil && a.cfg.Programs.Enabled {
		mode = cmp.Or(a.cfg.Programs.OnApproval, "wait")
	}
	switch mode {
	case "", "off":
		return "", nil
	case "wait", "fail":
		return mode, nil
	}
	return "", usagef("--programs=%s: use --programs (inner calls wait for approval), --programs=fail (they stop the program) or --programs=off", a.programs)
}

// offerPrograms registers run_program and the programs toolset when
// --programs (or mcp --code) asks for them. The returned function, called
// with the engine once there is one, hands it the engine and writes the
// description again with every tool loaded by then (and, when serving,
// once the MCP servers' tools are imported). It is nil without
// --programs.
//
// wield.yaml's programs: {enabled, on_approval, max_calls, timeout,
// max_steps, max_value, max_print, max_memory} says the same; the flag,
// when given, wins (--programs=off turns off what the file enables).
func (a *app) offerPrograms(reg *wield.Registry) (func(*engine.Engine), error) {
	mode, err := a.programsMode()
	if mode == "" || err != nil {
		return nil, err
	}
	var file toolfile.Programs
	if a.cfg != nil {
		file = a.cfg.Programs
	}
	late := &lateInvoker{}
	opts := program.Options{Invoker: late, Registry: reg, FailOnApproval: mode == "fail", MaxCalls: file.MaxCalls, Timeout: file.Timeout,
		MaxSteps: uint64(file.MaxSteps), MaxValue: file.MaxValue, MaxPrint: file.MaxPrint, MaxMemory: uint64(file.MaxMemory)}
	if err := reg.RegisterDefaults(program.Tool(opts)); err != nil {
		return nil, fmt.Errorf("register %s: %w", program.Name, err)
	}
	if err := reg.DefineToolset(wield.Toolset{Name: programsToolset, Description: "run_program alone: every other tool is a function inside it", Tools: []string{program.Name}}); err != nil {
		return nil, err
	}
	describe := func() {
		if t, ok := reg.Tool(program.Name); !ok || t.Source != "builtin" {
			return // a tool file replaced it
		}
		if err := reg.Update(program.Tool(opts)); err != nil {
			a.warnf("warning: describe %s: %v", program.Name, err)
		}
	}
	return func(eng *engine.Engine) {
		late.eng.Store(eng)
		describe()
		if !a.serving {
			return
		}
		a.whenImported(describe)
		// Tool files reloaded, tools imported, held or removed later: the
		// description follows.
		// A reload publishes an event per tool: the events only mark the
		// description stale, and one goroutine describes it again once
		// for however many came meanwhile (not once per tool, each a
		// listing of the whole registry).
		if bus := reg.Bus(); bus != nil {
			stale, done := make(chan struct{}, 1), make(chan struct{})
			go func() {
				for {
					select {
					case <-stale:
						describe()
					case <-done:
						return
					}
				}
			}()
			stop := bus.Listen(func(e *wield.Event) bool {
				switch e.Type {
				case wield.EventToolLoaded, wield.EventToolAdded, wield.EventToolUpdated, wield.EventToolRemoved, wield.EventToolHeld:
					return e.Tool != program.Name
				}
				return false
			}, func(wield.Event) {
				select {
				case stale <- struct{}{}:
				default: // already marked: the next description sees this change too
				}
			})
			a.closers = append(a.closers, func() error { stop(); close(done); return nil })
		}
	}, nil
}
