package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

// testCallIDs: a store takes the call IDs callers choose before their
// calls run. An ID reserved, or recorded (just saved included, whatever
// the store buffers), is taken; of 8 reservations of one ID at once, one
// wins.
func testCallIDs(t *testing.T, e *env) {
	ctx := t.Context()
	r, ok := e.s.(wield.CallIDReserver)
	if !ok {
		t.Fatalf("%T is not a wield.CallIDReserver: a caller-chosen ID taken would be found only once the tool ran", e.s)
	}
	before := time.Now().Add(-time.Second)
	if err := r.ReserveCallID(ctx, "chosen-1"); err != nil {
		t.Fatalf("ReserveCallID of a new ID: %v", err)
	}
	rs, ok := e.s.(wield.CallIDReservations)
	if !ok {
		t.Fatalf("%T is not a wield.CallIDReservations: an MCP task running on another server would be unknown", e.s)
	}
	if at, err := rs.CallIDReservedAt(ctx, "chosen-1"); err != nil || at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("CallIDReservedAt of an ID reserved now = %v, %v", at, err)
	}
	_, err := rs.CallIDReservedAt(ctx, "never-reserved")
	mustErr(t, "CallIDReservedAt of an ID never reserved", err, wield.ErrNotFound)
	mustErr(t, "ReserveCallID of an ID reserved", r.ReserveCallID(ctx, "chosen-1"), wield.ErrCallIDTaken)

	saved := rec("echo", "conv-ids", true, time.Now())
	if err := e.s.Save(ctx, saved); err != nil {
		t.Fatal(err)
	}
	mustErr(t, "ReserveCallID of an ID just recorded", r.ReserveCallID(ctx, saved.Call.ID), wield.ErrCallIDTaken)

	errs := race(8, func(int) error { return r.ReserveCallID(context.Background(), "chosen-2") })
	oneWinner(t, errs, wield.ErrCallIDTaken, "reservation")
}
