package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/wieldhq/wield"
)

// idClaims are the caller-chosen call IDs of the calls running in this
// process: a second call under one of them is refused even before the
// store knows the first (a store records a call once it is finished).
type idClaims struct {
	mu sync.Mutex
	m  map[string]struct{}
}

// claimID takes the ID a caller chose for k before anything runs: in this
// process, then in the store (a [wield.CallIDReserver] reserves it across
// servers; a [wield.CallReader] is asked whether a record has it). An ID
// taken is an error wrapping [wield.ErrCallIDTaken], and the call ends
// there, unrecorded and unannounced: its record would be refused, and the
// tool would run with no record of its own. A store that cannot answer
// fails the call as rejected (it did not run), as idempotent replays do.
func (e *Engine) claimID(ctx context.Context, k *call) (bool, error) {
	e.idClaims.mu.Lock()
	if _, ok := e.idClaims.m[k.ID]; ok {
		e.idClaims.mu.Unlock()
		return false, e.taken(k, "a call with this ID is running")
	}
	if e.idClaims.m == nil {
		e.idClaims.m = map[string]struct{}{}
	}
	e.idClaims.m[k.ID] = struct{}{}
	e.idClaims.mu.Unlock()
	k.idClaimed = true

	var err error
	switch s := e.store.(type) {
	case wield.CallIDReserver:
		err = s.ReserveCallID(ctx, k.ID)
	case wield.CallReader:
		_, err = s.Call(ctx, k.ID)
		switch {
		case err == nil:
			err = wield.ErrCallIDTaken
		case errors.Is(err, wield.ErrNotFound):
			err = nil
		}
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, wield.ErrCallIDTaken):
		e.unclaimID(k)
		return false, e.taken(k, "a call with this ID is recorded")
	}
	e.log.Error("call id check", "tool", k.Tool, "call_id", k.ID, "err", err)
	return k.fail(wield.ErrRejected, "The call record store is unavailable, so this call's ID cannot be checked; it was not run."), nil
}

// taken is the error of a call whose ID is taken.
func (e *Engine) taken(k *call, why string) error {
	return fmt.Errorf("call %s of tool %s: %s: %w; choose another ID, or leave it out and one is made", k.ID, k.Tool, why, wield.ErrCallIDTaken)
}

// unclaimID lets the ID of a finished call go from the claims of this
// process; the store has it from now on (its record, or its reservation).
func (e *Engine) unclaimID(k *call) {
	if !k.idClaimed {
		return
	}
	k.idClaimed = false
	e.idClaims.mu.Lock()
	delete(e.idClaims.m, k.ID)
	e.idClaims.mu.Unlock()
}
