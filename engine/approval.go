package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wieldhq/wield"
)

// errApproverPanicked stands for the answer of an approver that panicked:
// no decision, so the call does not run.
var errApproverPanicked = errors.New("the approver panicked")

// approve asks the approver about calls of confirm tools and waits for the
// decision, which is bound to a digest of the arguments. With a durable
// approver (a [wield.ApprovalClaimer]) every decision is claimed before it
// is acted on, so that a call runs, or its refusal is recorded, once: here,
// or by a run that took it up after its caller left (see [Engine.Resume]).
func (e *Engine) approve(ctx context.Context, k *call) bool {
	if k.entry.Tool.EffectivePermission() != wield.PermissionConfirm {
		return true
	}
	if k.ApprovalID != "" || k.resumed != nil {
		return e.approved(ctx, k)
	}
	if !e.hasApprover(k) {
		return false
	}
	if e.ending.Err() != nil {
		return k.fail(wield.ErrCanceled, fmt.Sprintf("the server is shutting down: tool '%s' needs a person's approval, which it no longer waits for; call again once it is back", k.Tool))
	}
	now := time.Now()
	req := &wield.ApprovalRequest{
		ID:        wield.NewID(),
		CallID:    k.ID,
		Tool:      k.Tool,
		Caller:    k.Caller,
		Arguments: k.args,
		Digest:    Digest(k.args),
		CreatedAt: now,
		ExpiresAt: now.Add(e.opts.ApprovalTimeout),
		Timeout:   k.Timeout,
		// Who asked, as the server authenticated them: the decision may be
		// refused to them (a model must not approve its own call).
		RequestedBy: wield.RequesterFrom(ctx),
	}
	k.approvalID = req.ID
	announce := func() { e.publish(k, wield.EventPermissionRequested, "approval "+req.ID) }
	if pn, ok := e.approver.(wield.PendingNotifier); ok && pn.NotifiesPending() {
		req.Pending = announce // once the request is stored: whoever hears of it can read it
	} else {
		announce()
	}
	if k.Timeout > 0 {
		// The caller's own timeout bounds its wait for approval too: when
		// it elapses, the caller is done with the call, on purpose.
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, k.Timeout, wield.ErrCallerCanceled)
		defer stop()
	}
	actx, cancel := context.WithDeadline(ctx, req.ExpiresAt)
	if outer, ok := ctx.Value(wield.ProgressKey).(*progressRef); ok {
		// A program's inner call: what the approver reports of the wait
		// is the inner call's, not the program's own (see progress.inner).
		actx = context.WithValue(actx, wield.ProgressKey, innerReports{outer.state()})
	}
	// A server that shuts down ends the wait (EndApprovalWaits), as a
	// caller that leaves would: the approval stays pending. The approver
	// can tell the two apart by the cause, ErrApprovalWaitEnded.
	actx, endWait := context.WithCancelCause(actx)
	defer endWait(nil)
	unhook := context.AfterFunc(e.ending, func() { endWait(ErrApprovalWaitEnded) })
	var d wield.Decision
	var err error
	if !wield.Protect(e.log, wield.CallbackApprover, func() { d, err = e.approver.Approve(actx, req) }) {
		err = errApproverPanicked // no decision; what it said stays in the log
	}
	ended := !unhook() && ctx.Err() == nil // the wait was ended by EndApprovalWaits
	cancel()
	claimer, durable := e.approver.(wield.ApprovalClaimer)
	switch {
	case err != nil && ended:
		e.publish(k, wield.EventPermissionDecided, "canceled")
		if durable {
			k.parked = true
			return k.fail(wield.ErrCanceled, fmt.Sprintf("the server shut down while the call waited for approval %s; it stays pending, and if it is approved the call runs then (on a server sharing this store, or this one once it is back) and is recorded under this call ID", req.ID))
		}
		return k.fail(wield.ErrCanceled, "the server shut down while the call waited for approval; the call did not run")
	case err != nil && ctx.Err() != nil:
		e.publish(k, wield.EventPermissionDecided, "canceled")
		if errors.Is(err, wield.ErrApprovalCanceled) {
			// The caller ended the call on purpose and the approver ended
			// the approval: nobody will take it up, so it is recorded here.
			return k.fail(wield.ErrCanceled, fmt.Sprintf("the caller canceled the call while it waited for approval %s; the approval is ended and the call did not run", req.ID))
		}
		if durable {
			// The approval outlives this caller: the call is parked, not
			// finished; once decided, it runs (or is refused) and is
			// recorded by whoever takes the approval up.
			k.parked = true
			return k.fail(wield.ErrCanceled, fmt.Sprintf("the caller left while the call waited for approval %s; it stays pending, and if it is approved the call runs then and is recorded under this call ID", req.ID))
		}
		return k.fail(wield.ErrCanceled, "the caller canceled the call while waiting for approval")
	case err != nil:
		msg := "no decision"
		expired := errors.Is(err, context.DeadlineExceeded)
		if expired {
			msg = "expired"
		}
		e.publish(k, wield.EventPermissionDecided, msg)
		k.fail(wield.ErrApprovalDenied, fmt.Sprintf("Approval for tool '%s' was not given: %s", k.Tool, msg))
		if expired && durable {
			e.claim(ctx, k, claimer, req.ID, false)
		}
		return false
	case !d.Approved:
		e.publish(k, wield.EventPermissionDecided, "denied")
		msg := fmt.Sprintf("The user denied the call of tool '%s'", k.Tool)
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		k.fail(wield.ErrApprovalDenied, msg)
		if durable {
			e.claim(ctx, k, claimer, req.ID, false)
		}
		return false
	}
	if durable && !e.claim(ctx, k, claimer, req.ID, true) {
		return false
	}
	e.publish(k, wield.EventPermissionDecided, "approved")
	k.res.StartedAt = time.Now() // admitted now
	return true
}

// hasApprover fails a call that needs approval when no approver is
// configured.
func (e *Engine) hasApprover(k *call) bool {
	if e.approver == nil {
		return k.fail(wield.ErrApprovalDenied, fmt.Sprintf("Tool '%s' needs a person's approval and no approver is configured", k.Tool))
	}
	return true
}

// claim takes the single use of decision id for this call: to run it
// (approved) or to record its refusal (the result already says which). It
// reports whether the call goes on to run. When another run took the
// decision up first (the caller was thought gone, or another server
// resumed it), this call adopts that run's result instead of acting again.
//
// The claim is made whatever the caller does meanwhile: under a context
// that ended it fails, or seems to (a SQLite statement that finishes as
// the context ends reports the context's error), and the call would be
// refused as if the store were down, its decision left for a resumed run
// to act on again, or claimed and acted on by nobody.
func (e *Engine) claim(ctx context.Context, k *call, c wield.ApprovalClaimer, id string, approved bool) bool {
	err := c.ClaimApproval(context.WithoutCancel(ctx), id)
	switch {
	case err == nil:
		return approved
	case errors.Is(err, wield.ErrAlreadyDecided):
		e.adopt(ctx, k, id, approved)
		return false
	case errors.Is(err, wield.ErrNotFound) && !approved:
		// Not a durable approval (an MCP client answered): nobody else
		// can record the refusal.
		return false
	}
	e.log.Error("claim approval", "approval_id", id, "call_id", k.ID, "err", err)
	if !approved {
		return false // the refusal stands and is recorded here
	}
	return k.fail(wield.ErrApprovalDenied, "the approval store is unavailable; the call was not run")
}

// adoptPoll is how often a call whose approval another run took looks for
// that run's record.
const adoptPoll = 50 * time.Millisecond

// adopt waits for the record of the run that took approval id up and makes
// its result this call's: the caller still waiting gets the one run's
// result. It waits as long as that run may take (the call's timeout and a
// margin) or until the caller leaves; without a record by then, the call
// ends without one of its own, saying where the result will be.
func (e *Engine) adopt(ctx context.Context, k *call, id string, approved bool) {
	k.parked = true // the run that took the approval records the call
	cr, ok := e.store.(wield.CallReader)
	if ok {
		limit := 5 * time.Second
		if approved {
			limit += e.timeout(k) + e.opts.Retry.MaxBackoff
		}
		deadline := time.Now().Add(limit)
		tick := time.NewTicker(adoptPoll)
		defer tick.Stop()
		for {
			rec, err := cr.Call(ctx, k.ID)
			if err == nil && rec.Result != nil {
				k.result = *rec.Result
				k.res = &k.result
				k.adopted = true
				return
			}
			if ctx.Err() != nil || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}
	if approved {
		k.fail(wield.ErrApprovalDenied, fmt.Sprintf("approval %s was taken up by another run of this call, whose result is not recorded yet: look for call %s in the records", id, k.ID))
	}
}

// approved checks the approval a resumed call names: it must be decided,
// and for this call, this tool and exactly these arguments. Its decision is
// claimed here (unless Engine.Resume claimed it already): an approved call
// runs, a denied or expired one is refused, once.
func (e *Engine) approved(ctx context.Context, k *call) bool {
	a := k.resumed
	if a == nil {
		as, ok := e.store.(wield.ApprovalStore)
		if !ok {
			return k.fail(wield.ErrApprovalDenied, "the call names an approval, and the engine has no approval store to check it in")
		}
		// Read whatever the caller does meanwhile, as the decision is
		// claimed (see claim): a read its end failed would refuse the
		// call as if the store were down and leave the decision to be
		// acted on again.
		var err error
		a, err = as.Approval(context.WithoutCancel(ctx), k.ApprovalID)
		switch {
		case errors.Is(err, wield.ErrNotFound):
			return k.fail(wield.ErrApprovalDenied, fmt.Sprintf("approval %s does not exist", k.ApprovalID))
		case err != nil:
			e.log.Error("read approval", "approval_id", k.ApprovalID, "call_id", k.ID, "err", err)
			return k.fail(wield.ErrApprovalDenied, "the approval store is unavailable; the call was not run")
		}
	}
	k.approvalID = a.ID
	if a.CallID != k.ID || a.Tool != k.Tool || a.Digest != Digest(k.args) {
		return k.fail(wield.ErrApprovalDenied, fmt.Sprintf("approval %s was given for another call or other arguments", a.ID))
	}
	switch a.Status {
	case wield.ApprovalApproved:
	case wield.ApprovalDenied:
		msg := fmt.Sprintf("The user denied the call of tool '%s'", k.Tool)
		if a.Decision != nil && a.Decision.Reason != "" {
			msg += ": " + a.Decision.Reason
		}
		k.fail(wield.ErrApprovalDenied, msg)
	default:
		k.fail(wield.ErrApprovalDenied, fmt.Sprintf("Approval for tool '%s' was not given: %s", k.Tool, a.Status))
		if a.Status == wield.ApprovalPending {
			return false
		}
	}
	approved := a.Status == wield.ApprovalApproved
	if k.resumed == nil {
		if c, ok := e.store.(wield.ApprovalClaimer); ok && !e.claim(ctx, k, c, a.ID, approved) {
			return false
		}
	}
	if !approved {
		e.publish(k, wield.EventPermissionDecided, string(a.Status))
		return false
	}
	e.publish(k, wield.EventPermissionDecided, "approved")
	k.res.StartedAt = time.Now()
	return true
}

// Resume acts on decision a for a call whose caller no longer waits for it
// (the caller left, or its process stopped): an approved call runs now, with
// the stored arguments and its own timeout counted from now, through the
// same steps as any call (looked up, validated, under the tool's current
// permission and the limiter); a denied or expired one is refused. Either
// way the call is recorded under its original call ID and announced on the
// bus. A call of a tool that no longer exists is recorded as
// tool_not_found, saying so.
//
// Resume first claims the decision (the approver's or the store's
// [wield.ApprovalClaimer]), so that however many runs resume it, on one
// server or several, exactly one acts: the others, and a decision already
// acted on, get nil, nil. A refusal found recorded already (by a caller that
// still waited) is not recorded again; its record's result is returned.
// Resume fails for a pending approval, without a claimer, when the claim
// fails, and with [wield.ErrClosed] after Close.
func (e *Engine) Resume(ctx context.Context, a *wield.Approval) (*wield.Result, error) {
	if a.Status == wield.ApprovalPending {
		return nil, fmt.Errorf("resume approval %s: it is pending", a.ID)
	}
	c, ok := e.approver.(wield.ApprovalClaimer)
	if !ok {
		if c, ok = e.store.(wield.ApprovalClaimer); !ok {
			return nil, fmt.Errorf("resume approval %s: the engine has no approval store to claim it in", a.ID)
		}
	}
	if !e.enter() {
		return nil, wield.ErrClosed
	}
	defer e.leave()
	err := c.ClaimApproval(ctx, a.ID)
	switch {
	case errors.Is(err, wield.ErrAlreadyDecided):
		return nil, nil // another run acts on it
	case err != nil:
		return nil, fmt.Errorf("resume approval %s: %w", a.ID, err)
	}
	if cr, ok := e.store.(wield.CallReader); ok && a.Status != wield.ApprovalApproved {
		if rec, err := cr.Call(ctx, a.CallID); err == nil && rec.Result != nil {
			return rec.Result, nil
		}
	}
	// The call runs as whoever asked for it, not as whoever resumes it (an
	// approver's request, a server after a restart): a tool that keeps
	// things per requester (the artifact tools) finds the requester's own.
	ctx = wield.WithRequester(ctx, a.RequestedBy)
	k := &call{Call: wield.Call{ID: a.CallID, Tool: a.Tool, Arguments: a.Arguments, Caller: a.Caller, Timeout: a.Timeout, ApprovalID: a.ID}, resumed: a}
	if a.Status == wield.ApprovalApproved {
		return e.pipeline(ctx, k)
	}
	// A refusal: nothing to look up or validate, only to record (with the
	// tool's secrets redacted, when it still exists).
	e.arrive(k)
	k.entry = e.reg.Entry(k.Tool)
	k.args = a.Arguments
	e.approved(ctx, k)
	err = e.finish(ctx, k)
	return k.res, err
}

// Digest is the SHA-256, in hex, of the canonical form of JSON arguments
// (object keys sorted, no spaces), to bind an approval to exactly those
// arguments.
func Digest(args []byte) string {
	canon := args
	// Numbers stay as written: as float64s, integers past 2^53 would collide.
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if d.Decode(&v) == nil && d.Decode(new(any)) == io.EOF {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}
