package wield

import (
	"context"
	"time"
)

// CallIDReservations is a [CallIDReserver] that tells when an ID was
// reserved: a call under that ID was started, by this process or another
// sharing the store, and is recorded once it finishes. An MCP task is such
// a call, so that any server sharing the store knows of it while it runs.
// CallIDReservedAt fails with an error wrapping [ErrNotFound] for an ID
// never reserved.
type CallIDReservations interface {
	CallIDReservedAt(ctx context.Context, id string) (time.Time, error)
}
