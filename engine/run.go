package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/limit"
)

// timeout is the time a call may run: the call's own, else the tool's, else
// the default for its category.
func (e *Engine) timeout(k *call) time.Duration {
	d, _ := e.timeoutFrom(k)
	return d
}

// timeoutFrom is timeout, and where it comes from.
func (e *Engine) timeoutFrom(k *call) (time.Duration, string) {
	switch t := k.entry.Tool; {
	case k.Timeout > 0:
		return k.Timeout, "call"
	case t.Timeout > 0:
		return t.Timeout, "tool"
	case t.Category.IsNetwork():
		return e.opts.NetworkTimeout, "network default"
	}
	return e.opts.DefaultTimeout, "default"
}

// run calls the handler under the timeout, retrying transient failures of
// idempotent tools, and gives the permit back: at once when the handler has
// returned, or when it does return if the call timed out first (so limits
// count the handlers that really run).
func (e *Engine) run(ctx context.Context, k *call, permit limit.Permit) {
	k.slot.hold(e, k.limitRequest(), permit)
	released := false
	defer func() {
		if !released {
			k.slot.finish()
		}
	}()
	t := k.entry.Tool
	limit := e.timeout(k)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < limit {
		limit = time.Until(dl).Round(time.Millisecond) // the caller's deadline comes first
	}
	rctx := k.rctx.init(ctx, &k.Call, k.res.StartedAt, limit)
	rctx.slot, rctx.policy = &k.slot, e.opts.Policy
	k.prog.e, k.prog.k = e, k
	rctx.progress = &k.prog
	defer rctx.release()
	defer k.prog.end() // before the call's end is announced

	e.publish(k, wield.EventExecutionStarted, "")
	backoff := e.opts.Retry.Backoff
	for n := 1; ; n++ {
		k.res.Attempts = n
		// A fresh copy of the arguments per attempt (the handler owns it, and
		// the record and the next attempt need the original), unless the
		// handler only reads them, as typed handlers do.
		args := k.args
		if !readsArgsOnly(t.Handler) {
			args = append([]byte(nil), k.args...)
		}
		var out json.RawMessage
		var err error
		var p any
		var stack []byte
		if t.Inline {
			out, err, p, stack = runInline(rctx, t.Handler, args)
		} else {
			a := e.workers.get()
			a.ctx, a.h, a.args = rctx, t.Handler, args
			e.workers.start(a)
			if !a.wait(rctx) && a.abandon(&k.slot, &e.stray) {
				released = true
				e.ended(ctx, k, limit)
				return
			}
			out, err, p, stack = a.out, a.err, a.panic, a.stack
			e.workers.put(a)
		}
		trusted := false
		if v, ok := t.Handler.(interface{ ValidJSONOutput() bool }); ok {
			trusted = v.ValidJSONOutput()
		}
		switch {
		case p != nil:
			e.log.Error("tool panicked", "tool", k.Tool, "call_id", k.ID, "panic", fmt.Sprint(p), "stack", string(stack))
			k.fail(wield.ErrExecution, fmt.Sprintf("Tool '%s' failed unexpectedly (internal error)", k.Tool))
			return
		case err == nil:
			k.succeed(out, trusted)
			return
		case rctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
			e.ended(ctx, k, limit)
			return
		}
		k.failWith(err)
		if !t.Annotations.Idempotent || !wield.IsTransient(err) || n >= e.opts.Retry.MaxAttempts {
			return
		}
		timer := time.NewTimer(backoff)
		select {
		case <-timer.C:
		case <-rctx.Done():
			timer.Stop()
			return // the last attempt's failure stands
		}
		backoff = min(2*backoff, e.opts.Retry.MaxBackoff)
	}
}

func readsArgsOnly(h wield.Handler) bool {
	v, ok := h.(interface{ ReadsArgsOnly() bool })
	return ok && v.ReadsArgsOnly()
}

// runInline runs a handler on the caller's goroutine, containing a panic.
func runInline(ctx context.Context, h wield.Handler, args []byte) (out json.RawMessage, err error, p any, stack []byte) {
	defer func() {
		if p = recover(); p != nil {
			stack = debug.Stack()
		}
	}()
	out, err = h.Handle(ctx, args)
	return out, err, nil, nil
}

// ended reports a call whose context ended while it ran.
func (e *Engine) ended(ctx context.Context, k *call, limit time.Duration) {
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		k.fail(wield.ErrCanceled, canceledBecause(ctx, "the call was canceled before the tool finished"))
		return
	}
	// Seed 003's ToolTimeoutError words it so.
	k.fail(wield.ErrTimeout, fmt.Sprintf("Tool execution timed out after %dms", limit.Milliseconds()))
}

// canceledBecause is msg, followed by why ctx was canceled when whoever
// canceled it said so in words a model may read: a *wield.Error of type
// canceled as the cause (context.WithCancelCause), as a server that shuts
// down gives. Any other cause stays out of the result.
func canceledBecause(ctx context.Context, msg string) string {
	var we *wield.Error
	if errors.As(context.Cause(ctx), &we) && we.Type == wield.ErrCanceled && we.Message != "" {
		return msg + ": " + we.Message
	}
	return msg
}

func (k *call) succeed(out json.RawMessage, trusted bool) {
	if len(out) == 0 {
		out = json.RawMessage("null")
	} else if !trusted && !json.Valid(out) {
		k.fail(wield.ErrExecution, fmt.Sprintf("Tool '%s' returned output that is not valid JSON", k.Tool))
		return
	}
	k.res.OK = true
	k.res.Output = out
	k.res.Error, k.res.ErrorType = "", ""
}

// failWith turns a handler's error into the result: an *wield.Error keeps its
// type, anything else is an execution error with the error's text.
func (k *call) failWith(err error) {
	var we *wield.Error
	if errors.As(err, &we) && we.Type != "" {
		k.fail(we.Type, we.Error())
		return
	}
	k.fail(wield.ErrExecution, err.Error())
}
