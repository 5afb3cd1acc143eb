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

// CallLeases keeps leases on reserved call IDs ([CallIDReservations]): the
// server running an MCP task holds one on its call's ID and renews it while
// the call runs, so that once it expires with no record written, any
// server sharing the store knows the call's server stopped (killed,
// crashed) and will never record it.
type CallLeases interface {
	// HoldCallLeases sets the leases of the reserved IDs ids, held by
	// owner, to expire at until: those no one holds are taken, those owner
	// holds unexpired (at now) renewed. It returns the IDs it could not
	// hold: another owner's, an expired one (its owner was given up for
	// gone, and is not revived), or an ID not reserved.
	HoldCallLeases(ctx context.Context, owner string, ids []string, now, until time.Time) (lost []string, err error)
	// CallLease returns the owner of a reserved ID's lease and when it
	// expires: "" and the zero time for an ID reserved without a lease,
	// an error wrapping [ErrNotFound] for an ID not reserved.
	CallLease(ctx context.Context, id string) (owner string, until time.Time, err error)
}
