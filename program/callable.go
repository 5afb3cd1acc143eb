package program

import (
	"context"
	"hash/maphash"
	"reflect"
	"slices"
	"sync"

	"github.com/wieldhq/wield"
)

// Callable returns the tools a program run by caller may call, in the
// registry's order: the tools of kit (the caller's toolkit: an agent's, an
// API key's scope; every tool of reg when nil) that are callable, admit
// programs ([wield.Tool.AllowsCaller]) and that p lets the caller's
// programs call (decided without arguments, as lists are; the inner calls
// are decided again with theirs). A program's functions are this list,
// and so is the description of run_program its caller is shown: a tool
// not in it is not a function, and call() of it is refused
// (tool_not_found outside the toolkit, permission_denied by the policy).
func Callable(ctx context.Context, reg *wield.Registry, p wield.Policy, caller wield.Caller, kit *wield.Toolkit) []*wield.Tool {
	all := reg.List(wield.Query{})
	if kit != nil {
		all = kit.Tools()
	}
	ts := make([]*wield.Tool, 0, len(all))
	for _, t := range all {
		if t.Name != Name && t.Callable() && t.AllowsCaller(wield.CallerProgram) {
			ts = append(ts, t)
		}
	}
	return wield.VisibleTools(ctx, p, reg, innerCaller(caller, ""), ts)
}

// innerCaller is the caller of a program's inner calls: the program's
// caller as a program (type program, ID the program's call, which is ""
// when a list asks), with the program's call and its caller's ID in the
// variables.
func innerCaller(c wield.Caller, programCall string) wield.Caller {
	vars := make(map[string]any, len(c.Variables)+2)
	for k, v := range c.Variables {
		vars[k] = v
	}
	if programCall != "" {
		vars[wield.ProgramParentVariable] = programCall
	}
	vars[wield.ProgramCallerVariable] = c.ID
	c.Variables = vars
	c.Type = wield.CallerProgram
	c.ID = programCall
	return c
}

// policy is the policy that decides the program's functions: the one
// configured, else that of the engine running ctx's call, else the
// Invoker's.
func (o Options) policy(ctx context.Context) wield.Policy {
	if o.Policy != nil {
		return o.Policy
	}
	if p := wield.PolicyFrom(ctx); p != nil {
		return p
	}
	if pi, ok := o.Invoker.(interface{ Policy() wield.Policy }); ok {
		return pi.Policy()
	}
	return nil
}

// maxDescribed bounds the descriptions a run_program keeps, one per set of
// callable tools (per scope, toolkit and policy decision): past it they
// are made again.
const maxDescribed = 64

type described struct {
	tools []*wield.Tool
	tool  *wield.Tool
}

// describedFor is the ForCaller of run_program t: t described with the
// functions [Callable] gives the caller. The copies are kept by the set of
// tools they list (the tools' identities: a reloaded tool or a policy that
// decides otherwise is another set), so a list costs the policy decisions
// and a hash, not a description, when nothing changed.
func describedFor(t *wield.Tool, opts Options) func(context.Context, wield.Policy, wield.Caller, *wield.Toolkit) *wield.Tool {
	var (
		mu   sync.Mutex
		seed = maphash.MakeSeed()
		kept = map[uint64]described{}
	)
	return func(ctx context.Context, p wield.Policy, caller wield.Caller, kit *wield.Toolkit) *wield.Tool {
		if p == nil {
			p = opts.policy(ctx)
		}
		tools := Callable(ctx, opts.Registry, p, caller, kit)
		var h maphash.Hash
		h.SetSeed(seed)
		for _, ct := range tools {
			var b [8]byte
			ptr := uint64(reflect.ValueOf(ct).Pointer())
			for i := range b {
				b[i] = byte(ptr >> (8 * i))
			}
			h.Write(b[:])
		}
		key := h.Sum64()
		mu.Lock()
		defer mu.Unlock()
		if d, ok := kept[key]; ok && slices.Equal(d.tools, tools) {
			return d.tool
		}
		if len(kept) >= maxDescribed {
			clear(kept)
		}
		c := *t
		c.Description = Describe(tools)
		c.ForCaller = nil
		kept[key] = described{tools, &c}
		return &c
	}
}
