package engine

import (
	"context"
	"errors"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/limit"
)

// acquire waits for capacity. A call that gets none did not run, which the
// rejected error type tells the model (unlike timeout, which may have had
// effects).
func (e *Engine) acquire(ctx context.Context, k *call) (limit.Permit, bool) {
	p, err := e.lim.Acquire(ctx, k.limitRequest())
	if err == nil && !p.Queued() {
		// Granted at once: the run starts when the call was admitted (its
		// arrival, or the approval), give or take the microseconds of
		// validation, and the clock need not be read again.
		return p, true
	}
	now := time.Now()
	if wait := now.Sub(k.res.StartedAt); p.Queued() || wait > 50*time.Microsecond {
		k.res.QueueWait = wait
	}
	k.res.StartedAt = now
	switch {
	case err == nil:
		return p, true
	case errors.Is(err, limit.ErrRejected):
		k.fail(wield.ErrRejected, msgRejected)
	case errors.Is(err, limit.ErrQueueTimeout):
		k.fail(wield.ErrRejected, "No capacity became free in time; this call was not run. Try again later.")
	case ctx.Err() != nil:
		k.fail(wield.ErrCanceled, canceledBecause(ctx, "the call was canceled while waiting for capacity"))
	default:
		e.log.Error("limiter failed", "tool", k.Tool, "call_id", k.ID, "err", err)
		k.fail(wield.ErrRejected, "The concurrency limiter is unavailable; this call was not run.")
	}
	return limit.Permit{}, false
}

// msgRejected is the answer to a call refused by a full limiter.
const msgRejected = "Too many tool calls are running; this call was not run. Try again later."

// limitRequest is what the call asks of the limiter.
func (k *call) limitRequest() limit.Request {
	return limit.Request{
		Bucket:   string(k.entry.Tool.Category),
		Priority: k.Priority,
		Bypass:   k.Caller.Type == wield.CallerWorkflowNode,
	}
}
