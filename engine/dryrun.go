package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/limit"
)

// DryRun takes a call through the pipeline's own steps up to its handler
// and says what the call would do now, without running the tool: lookup,
// decode and coerce, validate, idempotent replay, permission, approval and
// limiter, with the timeout and retry policy it would run under. Nothing
// is kept or announced: no approval is asked for, no record written, no
// event published, no statistic counted, no capacity taken; one DEBUG log
// line says that a dry run was made (tool, outcome, requester).
//
// A call that a step would stop gets, in the report, the error type and
// message of the [wield.Result] a real call made at the same moment would
// get. A call of a confirm tool would wait for approval: the report says so
// and who would decide, and goes on to the limiter. The limiter's answer
// is a snapshot, and "unknown" for a [limit.Limiter] that is not a
// [limit.Checker] (the Redis limiter: asking would take a slot), whose
// figures then come from its Metrics.
//
// DryRun fails with [wield.ErrClosed] after Close, and with an error
// wrapping [wield.ErrCallIDTaken] when the ID the caller chose is taken by
// a call running here or recorded, as Call does.
func (e *Engine) DryRun(ctx context.Context, c wield.Call) (*wield.DryRun, error) {
	if !e.enter() {
		return nil, wield.ErrClosed
	}
	defer e.leave()
	k := &call{Call: c, dry: true}
	if k.ID != "" && k.ApprovalID == "" {
		if err := e.idTaken(ctx, k); err != nil {
			return nil, err
		}
	}
	e.arrive(k)
	d := &wield.DryRun{Tool: c.Tool}
	e.dryRun(ctx, k, d)
	if !d.WouldRun && d.Replay == "" {
		d.ErrorType, d.Error, d.ValidationErrors = k.res.ErrorType, k.res.Error, k.res.ValidationErrors
	}
	e.log.Debug("dry run", "tool", c.Tool, "would_run", d.WouldRun, "stage", string(d.Stage), "error_type", string(d.ErrorType), "requester", wield.RequesterFrom(ctx))
	return d, nil
}

// idTaken answers, as claimID would but taking nothing, whether the ID
// the caller chose is taken: by a call running here, or by a record. A
// reservation another server holds for a call still running is not seen
// (reading it would take it).
func (e *Engine) idTaken(ctx context.Context, k *call) error {
	e.idClaims.mu.Lock()
	_, running := e.idClaims.m[k.ID]
	e.idClaims.mu.Unlock()
	if running {
		return e.taken(k, "a call with this ID is running")
	}
	if cr, ok := e.store.(wield.CallReader); ok {
		if _, err := cr.Call(ctx, k.ID); err == nil {
			return e.taken(k, "a call with this ID is recorded")
		}
	}
	return nil
}

// dryRun fills d step by step, stopping where the call would stop.
func (e *Engine) dryRun(ctx context.Context, k *call, d *wield.DryRun) {
	// A tool the policies hide from the caller is, as in a call, a tool
	// that does not exist (see hide).
	hidden := func() bool {
		if !e.hide(ctx, k) {
			return false
		}
		*d = wield.DryRun{Tool: d.Tool, Stage: wield.StageLookup}
		return true
	}
	if !e.lookup(k) {
		d.Stage = wield.StageLookup
		hidden()
		return
	}
	t := k.entry.Tool
	d.Permission = t.EffectivePermission()
	d.Timeout, d.TimeoutFrom = e.timeoutFrom(k)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d.Timeout {
		d.Timeout, d.TimeoutFrom = time.Until(dl).Round(time.Millisecond), "caller deadline"
	}
	d.Retry = e.retryPolicy(t)
	if !e.decode(ctx, k) {
		d.Stage = wield.StageValidation
		hidden()
		return
	}
	d.Arguments = k.args
	// The policies first: an idempotency key does not answer a caller
	// they refuse from another caller's call.
	ok := e.policy(ctx, k)
	if pd, has := k.res.Metadata["policy"].(wield.PolicyDecision); has {
		d.Policy = &pd
	}
	if !ok {
		d.Stage = wield.StagePermission
		hidden()
		return
	}
	if e.dryReplay(ctx, k, d) {
		d.Stage = wield.StageReplay
		return
	}
	if d.Permission == wield.PermissionConfirm {
		d.Approval = &wield.DryRunApproval{Required: true, RequestedBy: wield.RequesterFrom(ctx),
			ExpiresAfter: e.opts.ApprovalTimeout, Digest: Digest(k.args)}
		if k.ApprovalID != "" {
			d.Approval.Deciders = "approval " + k.ApprovalID + ", which the call names (not checked by a dry run)"
		} else if !e.hasApprover(k) {
			d.Stage = wield.StageApproval
			return
		} else {
			d.Approval.Deciders = e.deciders()
		}
	}
	d.Limit = e.dryAcquire(k)
	if d.Limit.Outcome == string(limit.Rejected) && d.Approval == nil {
		// A confirm call meets the limiter only once approved, later.
		k.fail(wield.ErrRejected, msgRejected)
		d.Stage = wield.StageLimiter
		return
	}
	d.WouldRun = true
}

// dryReplay answers, as replay would, whether an earlier call with the
// call's idempotency key would answer it; it reports whether it would. An
// identical call still running is not waited for: the call would wait for
// it and take its result.
func (e *Engine) dryReplay(ctx context.Context, k *call, d *wield.DryRun) bool {
	if k.IdempotencyKey == "" {
		return false
	}
	e.flights.mu.Lock()
	_, running := e.flights.m[k.Tool+"\x00"+k.IdempotencyKey]
	e.flights.mu.Unlock()
	if running {
		d.Replay = "a call with this idempotency key, still running: this call would wait for it and take its result"
		return true
	}
	if !e.answered(ctx, k) {
		return false
	}
	if k.res.OK {
		d.Replay, _ = k.res.Metadata["replay_of"].(string)
		k.res.Metadata = nil
	}
	return true
}

// deciders says who would decide an approval the engine asks for: a
// durable approver is the approval inbox (package approval's, alone or
// behind the MCP server's).
func (e *Engine) deciders() string {
	if _, durable := e.approver.(wield.ApprovalClaimer); durable {
		return "a person, through the approval inbox (wield approvals, /v1/approvals, the console)"
	}
	return "the engine's approver"
}

// dryAcquire is what the limiter would answer the call now.
func (e *Engine) dryAcquire(k *call) *wield.DryRunLimit {
	req := k.limitRequest()
	ch, ok := e.lim.(limit.Checker)
	if !ok {
		// What it would do is unknown; what it holds now, its metrics say.
		m := e.lim.Metrics()
		d := &wield.DryRunLimit{Bucket: req.Bucket, Outcome: "unknown", InFlight: m.Current, Limit: m.Limit, Queued: m.QueueLength}
		if b, ok := m.Buckets[req.Bucket]; ok {
			d.Weight, d.BucketInFlight, d.BucketLimit = b.Weight, b.Current, b.Limit
		}
		if req.Bypass {
			d.Outcome = string(limit.Bypassed)
		}
		return d
	}
	c := ch.Check(req)
	return &wield.DryRunLimit{Bucket: c.Bucket, Weight: c.Weight, Outcome: string(c.Outcome),
		InFlight: c.Current, Limit: c.Limit, BucketInFlight: c.BucketCurrent, BucketLimit: c.BucketLimit,
		Queued: c.Queued, QueueSize: c.QueueSize, Strategy: string(c.Strategy), QueueTimeout: c.QueueTimeout}
}

// retryPolicy is the retry policy a call of t runs under (see run).
func (e *Engine) retryPolicy(t *wield.Tool) *wield.DryRunRetry {
	r := e.opts.Retry
	if !t.Annotations.Idempotent || r.MaxAttempts <= 1 {
		why := "the tool is not annotated idempotent: a failure is not retried"
		if t.Annotations.Idempotent {
			why = "retries are off in the engine's options"
		}
		return &wield.DryRunRetry{MaxAttempts: 1, Why: why}
	}
	return &wield.DryRunRetry{MaxAttempts: r.MaxAttempts, Backoff: r.Backoff, MaxBackoff: r.MaxBackoff,
		Why: fmt.Sprintf("the tool is annotated idempotent: a transient failure is retried, up to %d attempts in all, within the timeout", r.MaxAttempts)}
}
