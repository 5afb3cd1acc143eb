package engine

import (
	"context"
	"fmt"

	"github.com/wieldhq/wield"
)

// lookup finds the tool, within the caller's toolkit if it has one.
func (e *Engine) lookup(k *call) bool {
	if kit := k.Toolkit; kit != nil && !kit.Has(k.Tool) {
		return k.fail(wield.ErrToolNotFound, kit.NotAvailable(k.Tool))
	}
	k.entry = e.reg.Entry(k.Tool)
	if k.entry == nil && k.resumed != nil {
		return k.fail(wield.ErrToolNotFound, fmt.Sprintf("Tool '%s' no longer exists: approval %s was given for this call, and it could not run", k.Tool, k.resumed.ID))
	}
	if k.entry == nil {
		return k.fail(wield.ErrToolNotFound, msgNotFound(k.Tool))
	}
	t := k.entry.Tool
	if !t.Callable() {
		return k.fail(wield.ErrToolNotFound, fmt.Sprintf("Tool '%s' is %s and cannot be called", k.Tool, t.Status))
	}
	if t.Handler == nil {
		return k.fail(wield.ErrExecutorNotFound, fmt.Sprintf("Tool '%s' has no executor loaded", k.Tool))
	}
	return e.callers(k)
}

// msgNotFound is the answer to a call of a tool that does not exist, in
// seed 001's words, which agents built on it match; a tool the policies
// hide from the caller gets it too (see hide).
func msgNotFound(tool string) string {
	return fmt.Sprintf("Can not find tool named '%s'", tool)
}

// hide turns the failure of a call of a tool the policies hide from its
// caller (a call of it without arguments is denied, so no list shows it:
// [wield.VisibleTools]) into the failure of a call of a tool that does not
// exist, and reports whether it did: the caller must not learn that the
// tool exists from a validation error, the policy that forbids it, its
// status, or what its record keeps of it (version, category, coerced
// arguments, the redaction of its secret parameters). It is asked only
// when a step before the run refused the call, so a call the policies
// allow costs no second decision; a call allowed with its arguments runs
// even when the tool is not listed for its caller.
func (e *Engine) hide(ctx context.Context, k *call) bool {
	if e.opts.Policy == nil || k.entry == nil {
		return false
	}
	if e.opts.Policy.Decide(ctx, wield.NewPolicyRequest(ctx, e.reg, k.entry.Tool, k.Caller, nil)).Allow {
		return false
	}
	e.log.Debug("call of a tool the policies hide from its caller: answered as not found", "tool", k.Tool, "call_id", k.ID, "requester", wield.RequesterFrom(ctx))
	k.entry, k.args = nil, nil
	k.res.ValidationErrors, k.res.Metadata = nil, nil
	k.fail(wield.ErrToolNotFound, msgNotFound(k.Tool))
	return true
}

// passed is ok; a call that did not pass a step is hidden, when the
// policies hide its tool from its caller (see hide). A validation failure
// is announced only then, when the tool is not hidden: the event names the
// tool and quotes its schema's rules to whoever reads the event stream.
func (e *Engine) passed(ctx context.Context, k *call, ok bool) bool {
	if !ok && !e.hide(ctx, k) && k.invalid {
		e.publish(k, wield.EventValidationError, k.res.Error)
	}
	return ok
}
