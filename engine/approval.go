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

// approve asks the approver about calls of confirm tools and waits for the
// decision, which is bound to a digest of the arguments.
func (e *Engine) approve(ctx context.Context, k *call) bool {
	if k.entry.Tool.EffectivePermission() != wield.PermissionConfirm {
		return true
	}
	if k.ApprovalID != "" {
		return e.approved(ctx, k)
	}
	if e.approver == nil {
		return k.fail(wield.ErrApprovalDenied, fmt.Sprintf("Tool '%s' needs a person's approval and no approver is configured", k.Tool))
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
	}
	announce := func() { e.publish(k, wield.EventPermissionRequested, "approval "+req.ID) }
	if pn, ok := e.approver.(wield.PendingNotifier); ok && pn.NotifiesPending() {
		req.Pending = announce // once the request is stored: whoever hears of it can read it
	} else {
		announce()
	}
	actx, cancel := context.WithDeadline(ctx, req.ExpiresAt)
	d, err := e.approver.Approve(actx, req)
	cancel()
	switch {
	case err != nil && ctx.Err() != nil:
		e.publish(k, wield.EventPermissionDecided, "canceled")
		if _, durable := e.approver.(wield.ApprovalClaimer); durable {
			// The approval outlives this caller: the call is parked, not
			// finished, and is recorded when it is resumed.
			k.parked = true
			return k.fail(wield.ErrCanceled, fmt.Sprintf("the caller left while the call waited for approval %s; it stays pending, and if it is approved the call runs then and is recorded under this call ID", req.ID))
		}
		return k.fail(wield.ErrCanceled, "the call was canceled while waiting for approval")
	case err != nil:
		msg := "no decision"
		if errors.Is(err, context.DeadlineExceeded) {
			msg = "expired"
		}
		e.publish(k, wield.EventPermissionDecided, msg)
		return k.fail(wield.ErrApprovalDenied, fmt.Sprintf("Approval for tool '%s' was not given: %s", k.Tool, msg))
	case !d.Approved:
		e.publish(k, wield.EventPermissionDecided, "denied")
		msg := fmt.Sprintf("The user denied the call of tool '%s'", k.Tool)
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		return k.fail(wield.ErrApprovalDenied, msg)
	}
	if c, ok := e.approver.(wield.ApprovalClaimer); ok && !e.claim(ctx, k, c, req.ID) {
		return false
	}
	e.publish(k, wield.EventPermissionDecided, "approved")
	k.res.StartedAt = time.Now() // admitted now
	return true
}

// claim takes the single use of an approval. When another run of the call
// has taken it (the call resumed elsewhere), this one does not run and
// leaves the record to that run.
func (e *Engine) claim(ctx context.Context, k *call, c wield.ApprovalClaimer, id string) bool {
	err := c.ClaimApproval(ctx, id)
	switch {
	case err == nil:
		return true
	case errors.Is(err, wield.ErrAlreadyDecided):
		k.parked = true
		return k.fail(wield.ErrApprovalDenied, fmt.Sprintf("approval %s was already used by another run of this call", id))
	}
	e.log.Error("claim approval", "approval_id", id, "call_id", k.ID, "err", err)
	return k.fail(wield.ErrApprovalDenied, "the approval store is unavailable; the call was not run")
}

// approved checks the approval a resumed call names: it must be approved,
// and for this call, this tool and exactly these arguments.
func (e *Engine) approved(ctx context.Context, k *call) bool {
	as, ok := e.store.(wield.ApprovalStore)
	if !ok {
		return k.fail(wield.ErrApprovalDenied, "the call names an approval, and the engine has no approval store to check it in")
	}
	a, err := as.Approval(ctx, k.ApprovalID)
	switch {
	case errors.Is(err, wield.ErrNotFound):
		return k.fail(wield.ErrApprovalDenied, fmt.Sprintf("approval %s does not exist", k.ApprovalID))
	case err != nil:
		e.log.Error("read approval", "approval_id", k.ApprovalID, "call_id", k.ID, "err", err)
		return k.fail(wield.ErrApprovalDenied, "the approval store is unavailable; the call was not run")
	case a.CallID != k.ID || a.Tool != k.Tool || a.Digest != Digest(k.args):
		return k.fail(wield.ErrApprovalDenied, fmt.Sprintf("approval %s was given for another call or other arguments", k.ApprovalID))
	case a.Status == wield.ApprovalDenied:
		msg := fmt.Sprintf("The user denied the call of tool '%s'", k.Tool)
		if a.Decision != nil && a.Decision.Reason != "" {
			msg += ": " + a.Decision.Reason
		}
		return k.fail(wield.ErrApprovalDenied, msg)
	case a.Status != wield.ApprovalApproved:
		return k.fail(wield.ErrApprovalDenied, fmt.Sprintf("Approval for tool '%s' was not given: %s", k.Tool, a.Status))
	}
	if c, ok := e.store.(wield.ApprovalClaimer); ok && !e.claim(ctx, k, c, a.ID) {
		return false
	}
	e.publish(k, wield.EventPermissionDecided, "approved")
	k.res.StartedAt = time.Now()
	return true
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
