package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/wieldhq/wield"
)

// flights keeps calls with an idempotency key that are running in this
// process, so that a duplicate arriving meanwhile waits for the first
// instead of running too (the store knows a call only once it is recorded).
type flights struct {
	mu sync.Mutex
	m  map[string]*flight
}

type flight struct {
	done chan struct{}
	rec  *wield.Record // the first call's record, when it succeeded
}

// replay answers a call that carries an idempotency key from the first
// successful call with that key, if there is one. It reports whether the
// call is answered (replayed or refused); false means run it.
func (e *Engine) replay(ctx context.Context, k *call) bool {
	if k.IdempotencyKey == "" {
		return false
	}
	key := k.Tool + "\x00" + k.IdempotencyKey
	for {
		e.flights.mu.Lock()
		if e.flights.m == nil {
			e.flights.m = map[string]*flight{}
		}
		f, ok := e.flights.m[key]
		if !ok {
			f = &flight{done: make(chan struct{})}
			e.flights.m[key] = f
			e.flights.mu.Unlock()
			k.flight = f
			break
		}
		e.flights.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			k.fail(wield.ErrCanceled, "the call was canceled while an identical call was running")
			return true
		}
		if f.rec != nil {
			return e.replayFrom(k, f.rec)
		}
		// The other call failed or was itself answered from the store:
		// look again, from the start.
	}
	return e.answered(ctx, k)
}

// answered answers a call with an idempotency key from an earlier call
// with the key, remembered here or recorded in the store, as replay does
// once no identical call is running. It reports whether the call is
// answered (replayed or refused).
func (e *Engine) answered(ctx context.Context, k *call) bool {
	rec, remembered := e.window.find(k.Tool, k.IdempotencyKey)
	if rec != nil {
		return e.replayFrom(k, rec)
	}
	if rp, ok := e.store.(wield.Replayer); ok {
		rec, err := rp.Replay(ctx, k.Tool, k.IdempotencyKey)
		if err != nil {
			e.log.Error("replay lookup", "tool", k.Tool, "call_id", k.ID, "err", err)
			k.fail(wield.ErrRejected, "The call record store is unavailable, so this idempotent call cannot be checked; it was not run.")
			return true
		}
		if rec != nil {
			return e.replayFrom(k, rec)
		}
	}
	if remembered {
		// The key ran here, and its output is neither in memory nor in a
		// store: running it again would be what the key forbids.
		// The key is not repeated: the caller has it, and a server may have
		// made it its client's own (httpapi: key:ID/ before it).
		k.fail(wield.ErrRejected, fmt.Sprintf("the idempotency key was already used for tool '%s', whose output is no longer kept to replay; the call was not run again (use a new key to run it)", k.Tool))
		return true
	}
	return false
}

// replayFrom answers k with the output of an earlier successful call made
// with the same key, if the arguments are the same.
func (e *Engine) replayFrom(k *call, rec *wield.Record) bool {
	digest := rec.Digest
	if digest == "" {
		digest = Digest(rec.Arguments)
	}
	if digest != Digest(k.args) {
		k.fail(wield.ErrValidation, fmt.Sprintf("the idempotency key was already used with other arguments for tool '%s'", k.Tool))
		return true
	}
	k.res.OK = true
	k.res.Output = rec.Output()
	m := map[string]any{"replayed": true, "replay_of": rec.Call.ID}
	if d, ok := k.res.Metadata["policy"]; ok {
		m["policy"] = d // the decision that let this caller have the answer
	}
	k.res.Metadata = m
	return true
}

// land ends the flight of a call that held one: duplicates waiting on it
// replay its result if it succeeded.
func (e *Engine) land(k *call) {
	if k.flight == nil {
		return
	}
	if k.res.OK && k.res.Metadata["replayed"] == nil {
		k.flight.rec = &wield.Record{Call: &k.Call, Arguments: k.args, Result: k.res}
		// Remembered before the flight ends, so that no duplicate finds
		// neither.
		e.window.keep(k.Tool, k.IdempotencyKey, k.ID, Digest(k.args), e.recordedOutput(k))
	}
	e.flights.mu.Lock()
	delete(e.flights.m, k.Tool+"\x00"+k.IdempotencyKey)
	e.flights.mu.Unlock()
	close(k.flight.done)
}

// recordedOutput is k's output as its record keeps it, secrets redacted,
// whether or not there is a store: a replay gives the same output from
// memory as from a store.
func (e *Engine) recordedOutput(k *call) json.RawMessage {
	if k.rec.Result != nil { // finish made the record
		return k.rec.Output()
	}
	rec := wield.Record{Call: &k.Call, Arguments: k.args, Result: k.res}
	var secrets []string
	if k.entry != nil {
		secrets = k.entry.Tool.Secrets
	}
	e.redactor.redactRecord(&rec, secrets, false)
	return rec.Output()
}
