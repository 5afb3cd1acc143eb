// Package program runs short programs that call tools: a model writes a
// Starlark script, the tools it may call are functions in it, and every
// inner call goes through the engine's whole pipeline (validation,
// permission, approval, limits, timeouts, a record) as a call of its own
// whose caller is the program (type [wield.CallerProgram], ID the
// program's call ID, variable [wield.ProgramParentVariable] naming it).
//
// # Why Starlark
//
// go.starlark.net is hermetic by design: a program has no file, network,
// clock or environment access unless the host gives it a function for it,
// and here the only functions are the tools. It counts execution steps
// (Thread.SetMaxExecutionSteps), can be interrupted from another goroutine
// between any two steps (Thread.Cancel, which busy loops cannot escape),
// forbids recursion, and is kept by the Bazel team. goja (JavaScript) has
// an interrupt too but no step count, and a richer global environment to
// take away.
//
// # The sandbox
//
// A program ends with a clear failure when it runs past its deadline (the
// tool's timeout, or the call's), past [Options].MaxSteps, makes more than
// [Options].MaxCalls tool calls, builds a value over [Options].MaxValue
// bytes (checked before allocating: see sandbox.go), grows the process's
// heap by more than [Options].MaxMemory, prints more than
// [Options].MaxPrint bytes, or calls a tool that does not admit programs
// (see [wield.Tool.AllowsCaller]). Its output is under the tool's output
// budget like any tool's. When it ends, an inner call still waiting for
// approval is ended on purpose, withdrawing its approval.
//
// docs/programs.md is the reference.
package program

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wieldhq/wield"
	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
)

// Name is the program tool's name.
const Name = "run_program"

// Defaults of [Options].
const (
	DefaultMaxSteps  = 10_000_000
	DefaultMaxCalls  = 1000
	DefaultMaxValue  = 16 << 20
	DefaultMaxPrint  = 64 << 10
	DefaultMaxMemory = 512 << 20
	DefaultTimeout   = 60 * time.Second
	// MaxSource is the longest program accepted, in bytes.
	MaxSource = 256 << 10
)

// Options configure [Run] and [Tool]; zero fields mean the defaults.
type Options struct {
	// Invoker runs the inner calls: the engine, so that each goes through
	// the pipeline. Required.
	Invoker wield.Invoker
	// Registry lists the tools a program sees when its call has no
	// toolkit. Required.
	Registry *wield.Registry
	MaxSteps uint64 // 10,000,000 Starlark steps
	MaxCalls int    // 1000 inner calls
	MaxValue int    // 16 MiB: the largest string or list a program may build
	MaxPrint int    // 64 KiB of print() output
	// MaxMemory is how much the process's heap may grow while a program
	// runs (512 MiB), read as the program allocates: a backstop behind
	// MaxValue for many values each under it.
	MaxMemory uint64
	// Policy is the engine's policy, when it has one: a program's functions
	// are the tools it lets the program's caller call (see [Callable]).
	// When nil, the Invoker's, if it has a Policy() method (the engine).
	Policy wield.Policy
	// FailOnApproval makes an inner call of a tool that needs approval fail
	// the program at once (permission_denied, saying so) instead of
	// waiting for the decision, which is the default.
	FailOnApproval bool
	// Timeout is the program tool's timeout (60 s); it bounds the whole
	// program, waits for approval included.
	Timeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxSteps == 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.MaxCalls <= 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.MaxValue <= 0 {
		o.MaxValue = DefaultMaxValue
	}
	if o.MaxPrint <= 0 {
		o.MaxPrint = DefaultMaxPrint
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// Input is the program tool's input.
type Input struct {
	Code string `json:"code" description:"The Starlark program. Call tools as functions with keyword arguments; set result to the value to return." minLength:"1" maxLength:"262144"`
}

// Output is what a program returns: the value of its global result, what
// it printed, and how many tool calls it made.
type Output struct {
	Result  any    `json:"result"`
	Printed string `json:"printed,omitempty"`
	Calls   int    `json:"calls"`
}

// Tool returns the run_program tool. Its registered description lists the
// tools of opts.Registry a program may call, as they are now; lists and
// exports show each caller the tool described for it ([wield.ListFor]
// calls its ForCaller): the functions of [Callable] for that caller, its
// toolkit or key scope, and the policy. Inside a call, the program's
// functions are the same list.
func Tool(opts Options) *wield.Tool {
	opts = opts.withDefaults()
	// Registered for no caller in particular: no policy, every tool.
	t := wield.Func(Name, Describe(Callable(context.Background(), opts.Registry, nil, wield.Caller{}, nil)), func(ctx context.Context, in Input) (Output, error) {
		return Run(ctx, in.Code, opts)
	})
	t.ForCaller = describedFor(t, opts)
	t.Category = wield.CategoryCode
	t.Tags = []string{"program", "builtin"}
	t.Timeout = opts.Timeout
	t.Version = "1.0.0"
	t.Source = "builtin"
	// A program is not a tool of programs: no nesting.
	t.AllowedCallers = []string{wield.AllowDirect}
	return t
}

// run is the state of one program.
type run struct {
	opts   Options
	parent *wield.Call // the program's call, nil outside the engine
	calls  atomic.Int64
	print  bytes.Buffer
	lim    *limits
}

// Run runs code and returns its [Output]. A program that fails (a syntax
// error, a limit, a failed tool call) returns a *[wield.Error] whose
// message says what and where; ctx ending stops it between two steps.
func Run(ctx context.Context, code string, opts Options) (Output, error) {
	opts = opts.withDefaults()
	if len(code) > MaxSource {
		return Output{}, wield.Errorf(wield.ErrValidation, "the program is %d bytes, over the limit of %d", len(code), MaxSource)
	}
	r := &run{opts: opts, parent: wield.CallFrom(ctx), lim: &limits{maxBytes: opts.MaxValue, maxHeap: opts.MaxMemory, base: heapBytes()}}
	f, err := options.Parse("program.star", code, 0)
	if err != nil {
		return Output{}, wield.Errorf(wield.ErrValidation, "the program does not parse: %s", err)
	}
	rewrite(f)
	pre := r.predeclared(ctx)
	prog, err := starlark.FileProgram(f, pre.Has)
	if err != nil {
		return Output{}, wield.Errorf(wield.ErrValidation, "the program is not valid: %s", err)
	}
	thread := &starlark.Thread{Name: "program", Print: r.printFn, Load: refuseLoad}
	thread.SetMaxExecutionSteps(opts.MaxSteps)
	// Inner calls end on purpose when the program ends, however it ends:
	// an inner call waiting for approval then ends its approval rather
	// than leaving it to be granted, and run, after the program is gone.
	inner, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(wield.ErrCallerCanceled)
	stop := context.AfterFunc(ctx, func() {
		cancel(wield.ErrCallerCanceled)
		thread.Cancel("its time is up")
	})
	defer stop()
	thread.SetLocal("ctx", inner)
	globals, err := prog.Init(thread, pre)
	out := Output{Printed: r.print.String(), Calls: int(r.calls.Load())}
	if err != nil {
		return out, r.failure(ctx, thread, err)
	}
	if v, ok := globals["result"]; ok {
		if n := deepSize(v, opts.MaxValue); n >= nestedTooDeep {
			return out, wield.Errorf(wield.ErrExecution, "the program's result is nested deeper than %d levels, the limit", MaxNesting)
		} else if n > opts.MaxValue {
			return out, wield.Errorf(wield.ErrExecution, "the program's result would be about %d bytes, over the limit of %d", n, opts.MaxValue)
		}
		b, err := encode(thread, v)
		if err != nil {
			return out, wield.Errorf(wield.ErrExecution, "the program's result cannot be returned as JSON: %s", err)
		}
		out.Result = json.RawMessage(b)
	}
	return out, nil
}

// failure turns the error a program ended with into the result's error.
func (r *run) failure(ctx context.Context, thread *starlark.Thread, err error) error {
	var werr *wield.Error
	if errors.As(err, &werr) {
		return werr // an inner call's failure, already worded
	}
	msg := err.Error()
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		msg = ee.Backtrace()
	}
	switch {
	case ctx.Err() != nil:
		return wield.Errorf(wield.ErrTimeout, "the program was stopped after %d steps: %s", thread.ExecutionSteps(), context.Cause(ctx))
	case thread.ExecutionSteps() >= r.opts.MaxSteps:
		return wield.Errorf(wield.ErrExecution, "the program was stopped: it ran more than %d steps (an endless loop?)", r.opts.MaxSteps)
	}
	return wield.Errorf(wield.ErrExecution, "the program failed: %s", msg)
}

func (r *run) printFn(_ *starlark.Thread, msg string) {
	if r.print.Len()+len(msg)+1 > r.opts.MaxPrint {
		return // checked again by the builtin below, which stops the program
	}
	r.print.WriteString(msg)
	r.print.WriteByte('\n')
}

// predeclared are the names a program sees: the checked operations, json,
// call, and one function per tool it may call.
func (r *run) predeclared(ctx context.Context) starlark.StringDict {
	d := starlark.StringDict{
		checkedBinary: starlark.NewBuiltin("binary", r.lim.binary),
		checkedGrow:   starlark.NewBuiltin("grow", r.lim.grow),
		checkedMethod: starlark.NewBuiltin("method", r.lim.method),
		"range":       starlark.NewBuiltin("range", r.lim.rangeFn),
		"json":        starjson.Module,
		"call":        starlark.NewBuiltin("call", r.callFn),
		"print":       starlark.NewBuiltin("print", r.printBuiltin),
	}
	for _, name := range []string{"list", "tuple", "dict", "set", "sorted", "reversed", "enumerate", "zip"} {
		d[name] = r.lim.copying(name, false)
	}
	for _, name := range []string{"str", "repr"} {
		d[name] = r.lim.copying(name, true)
	}
	for _, t := range r.tools(ctx) {
		if n := funcName(t.Name); n != "" {
			name := t.Name
			d[n] = starlark.NewBuiltin(n, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				if len(args) > 0 {
					return nil, fmt.Errorf("%s takes keyword arguments only, e.g. %s(name=value)", name, name)
				}
				d := starlark.NewDict(len(kwargs))
				for _, kv := range kwargs {
					if err := d.SetKey(kv[0], kv[1]); err != nil {
						return nil, err
					}
				}
				return r.invoke(thread, name, d)
			})
		}
	}
	return d
}

// tools are the tools the program may call ([Callable]): within the
// caller's toolkit, or the registry, those the policy lets its caller
// call.
func (r *run) tools(ctx context.Context) []*wield.Tool {
	var caller wield.Caller
	var kit *wield.Toolkit
	if r.parent != nil {
		caller, kit = r.parent.Caller, r.parent.Toolkit
	}
	return Callable(ctx, r.opts.Registry, r.opts.policy(ctx), caller, kit)
}

func (r *run) printBuiltin(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	n := 0
	for _, a := range args {
		if n += deepSize(a, r.opts.MaxPrint); n >= nestedTooDeep {
			return nil, tooDeep("what the program prints")
		}
	}
	if r.print.Len()+n > r.opts.MaxPrint+2*len(args) {
		return nil, fmt.Errorf("the program printed more than %d bytes", r.opts.MaxPrint)
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if s, ok := a.(starlark.String); ok {
			b.WriteString(string(s))
		} else {
			b.WriteString(a.String())
		}
		if b.Len() > r.opts.MaxPrint {
			break
		}
	}
	if r.print.Len()+b.Len()+1 > r.opts.MaxPrint {
		return nil, fmt.Errorf("the program printed more than %d bytes", r.opts.MaxPrint)
	}
	r.printFn(thread, b.String())
	return starlark.None, nil
}

// callFn is call("tool name", {arguments}): every tool, whatever its name.
func (r *run) callFn(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var a *starlark.Dict
	if err := starlark.UnpackPositionalArgs("call", args, kwargs, 1, &name, &a); err != nil {
		return nil, err
	}
	if a == nil {
		a = starlark.NewDict(0)
	}
	return r.invoke(thread, name, a)
}

// invoke runs one inner call through the engine.
func (r *run) invoke(thread *starlark.Thread, tool string, args *starlark.Dict) (starlark.Value, error) {
	ctx, _ := thread.Local("ctx").(context.Context)
	if n := r.calls.Add(1); n > int64(r.opts.MaxCalls) {
		return nil, wield.Errorf(wield.ErrExecution, "the program was stopped: it made more than %d tool calls", r.opts.MaxCalls)
	}
	if n := deepSize(args, r.opts.MaxValue); n > r.opts.MaxValue {
		return nil, r.lim.tooBig("the arguments of "+tool, n)
	}
	raw, err := encode(thread, args)
	if err != nil {
		return nil, fmt.Errorf("arguments of %s cannot be sent as JSON: %s", tool, err)
	}
	c := wield.Call{Tool: tool, Arguments: json.RawMessage(raw), Caller: wield.Caller{Type: wield.CallerProgram}}
	if p := r.parent; p != nil {
		c.Caller = innerCaller(p.Caller, p.ID)
		c.Toolkit = p.Toolkit
	}
	if r.opts.FailOnApproval {
		if t, ok := r.opts.Registry.Tool(tool); ok && t.EffectivePermission() == wield.PermissionConfirm && t.AllowsCaller(wield.CallerProgram) {
			return nil, wield.Errorf(wield.ErrPermissionDenied, "the program was stopped: tool '%s' needs a person's approval, and programs here do not wait for one; call it directly", tool)
		}
	}
	res, err := r.opts.Invoker.Call(ctx, c)
	if err != nil {
		return nil, wield.Errorf(wield.ErrExecution, "the program was stopped: the call of %s could not be made", tool)
	}
	if !res.OK {
		if ctx.Err() != nil {
			// The inner call ended because the program's own time did (the
			// inner reads it as canceled): told as the program's end, as
			// when its deadline falls between two steps.
			return nil, r.failure(ctx, thread, ctx.Err())
		}
		return nil, &wield.Error{Type: res.ErrorType, Message: fmt.Sprintf("the program was stopped: %s failed (%s): %s", tool, res.ErrorType, res.Error)}
	}
	if len(res.Output) == 0 {
		return starlark.None, nil
	}
	if n := len(res.Output); n > r.opts.MaxValue {
		return nil, r.lim.tooBig("the output of "+tool, n)
	}
	return decode(thread, res.Output, "the output of "+tool)
}

func encode(thread *starlark.Thread, v starlark.Value) (string, error) {
	out, err := starlark.Call(thread, starjson.Module.Members["encode"], starlark.Tuple{v}, nil)
	if err != nil {
		return "", err
	}
	return string(out.(starlark.String)), nil
}

func decode(thread *starlark.Thread, b []byte, what string) (starlark.Value, error) {
	if !json.Valid(b) { // a tool whose output is text
		return starlark.String(b), nil
	}
	if textNesting(string(b)) { // Starlark's decoder recurses: its stack would overflow
		return nil, tooDeep(what)
	}
	return starlark.Call(thread, starjson.Module.Members["decode"], starlark.Tuple{starlark.String(b)}, nil)
}

// refuseLoad is a program's load(): there are no modules to load, and the
// error says what a program has instead (Starlark's own, "load not
// implemented by this application", tells a model nothing).
func refuseLoad(_ *starlark.Thread, module string) (starlark.StringDict, error) {
	return nil, fmt.Errorf("load(%q): a program loads no modules; the tools are its functions already, beside call(), json and the built-ins", module)
}
