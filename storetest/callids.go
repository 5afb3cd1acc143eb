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
	if err := r.ReserveCallID(ctx, "chosen-1"); err != nil {
		t.Fatalf("ReserveCallID of a new ID: %v", err)
	}
	mustErr(t, "ReserveCallID of an ID reserved", r.ReserveCallID(ctx, "chosen-1"), wield.ErrCallIDTaken)

	saved := rec("echo", "conv-ids", true, time.Now())
	if err := e.s.Save(ctx, saved); err != nil {
		t.Fatal(err)
	}
	mustErr(t, "ReserveCallID of an ID just recorded", r.ReserveCallID(ctx, saved.Call.ID), wield.ErrCallIDTaken)

	errs := race(8, func(int) error { return r.ReserveCallID(context.Background(), "chosen-2") })
	oneWinner(t, errs, wield.ErrCallIDTaken, "reservation")
}
