package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/wieldhq/wield"
)

// finish stamps the result, counts it, records it and announces it.
func (e *Engine) finish(ctx context.Context, k *call) error {
	if k.adopted {
		return nil // the run it adopted timed, counted, recorded and announced it
	}
	r := k.res
	// One monotonic clock reading instead of a wall and a monotonic one:
	// reading the clock is a tenth of an echo call on a virtual machine.
	r.Duration = time.Since(k.rec.QueuedAt)
	r.FinishedAt = k.rec.QueuedAt.Add(r.Duration)
	if k.entry != nil {
		k.entry.Observe(r.OK, r.Duration)
	}
	var err error
	if e.store != nil && !k.parked {
		k.rec = wield.Record{Call: &k.Call, Arguments: k.args, Result: r, QueuedAt: k.rec.QueuedAt}
		if k.IdempotencyKey != "" && k.args != nil {
			k.rec.Digest = Digest(k.args)
		}
		rec := &k.rec
		var secrets []string
		if k.entry != nil {
			rec.ToolVersion = k.entry.Tool.Version
			rec.Category = k.entry.Tool.Category
			secrets = k.entry.Tool.Secrets
		}
		e.redactor.redactRecord(rec, secrets, k.entry == nil || e.redactor.needed(k.entry))
		// The record is kept even when the caller has gone away. (Not
		// asked whether it can: the Done of a cancelable context not yet
		// waited on makes its channel.)
		k.detached.Context = ctx
		if serr := e.store.Save(&k.detached, rec); serr != nil {
			e.log.Error("record call", "tool", k.Tool, "call_id", k.ID, "err", serr)
			err = fmt.Errorf("record call %s: %w", k.ID, serr)
		}
	}
	if r.OK {
		e.publish(k, wield.EventExecutionCompleted, "")
	} else {
		e.publish(k, wield.EventExecutionFailed, "")
	}
	return err
}

// detachedCtx is a context's values without its end, as
// context.WithoutCancel gives them, kept in the call instead of an
// allocation of every call's record. (Unlike WithoutCancel's, a
// context.Cause of it reads its parent's cause, as a runCtx's does; its
// Err stays nil, and a context derived from it ends only by itself.)
type detachedCtx struct{ context.Context }

func (*detachedCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*detachedCtx) Done() <-chan struct{}       { return nil }
func (*detachedCtx) Err() error                  { return nil }
