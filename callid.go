package wield

import (
	"context"
	"errors"
	"strings"
)

// ErrCallIDTaken is returned, as a Go error and before anything runs, for a
// call whose caller-chosen ID another call has (recorded, running, or
// waiting for approval): a second call under one ID would run without a
// record of its own, since a store keeps one record per ID. Servers answer
// it with 409 Conflict. Choose another ID, or none and one is made.
var ErrCallIDTaken = errors.New("wield: the call id is taken")

// CallIDReserver is a store that takes a caller-chosen call ID for good
// before the call runs. ReserveCallID fails with an error wrapping
// [ErrCallIDTaken] when a record or an earlier reservation has the ID,
// across every process and server that share the store; of two
// reservations of one ID at once, one wins. The engine reserves only the
// IDs its callers choose: those it makes ([NewID]) are new by their random
// bits.
type CallIDReserver interface {
	ReserveCallID(ctx context.Context, id string) error
}

// LooksLikeNewID reports whether s has the shape of the IDs [NewID] makes
// ([IDLen] characters of lowercase Crockford base32). A server refuses such IDs
// from its clients: a client that read the ID of a call still running or
// waiting for approval (from the event stream, the approval inbox) could
// otherwise run a call under it before that call is recorded, and leave one
// of the two without a record.
func LooksLikeNewID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for i := range len(s) {
		if strings.IndexByte(crockford, s[i]) < 0 {
			return false
		}
	}
	return true
}
