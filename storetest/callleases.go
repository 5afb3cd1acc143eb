package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

// testCallLeases: a store keeps the leases of MCP tasks on their reserved
// call IDs. A lease no one holds is taken; its owner renews it while it has
// not expired; another owner cannot take it, nor anyone an expired one (its
// owner given up for gone stays so); an ID not reserved has none. A lease
// reads back with its owner and expiry (to the microsecond); an ID
// reserved without one reads "".
func testCallLeases(t *testing.T, e *env) {
	ctx := t.Context()
	ls, ok := e.s.(wield.CallLeases)
	if !ok {
		t.Fatalf("%T is not a wield.CallLeases: a task whose server was killed would read working forever", e.s)
	}
	r := e.s.(wield.CallIDReserver)
	for _, id := range []string{"lease-1", "lease-2"} {
		if err := r.ReserveCallID(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if owner, until, err := ls.CallLease(ctx, "lease-1"); err != nil || owner != "" || !until.IsZero() {
		t.Errorf("CallLease of an ID reserved without a lease = %q, %v, %v", owner, until, err)
	}
	_, _, err := ls.CallLease(ctx, "never-reserved")
	mustErr(t, "CallLease of an ID never reserved", err, wield.ErrNotFound)

	now := time.Now().Truncate(time.Microsecond)
	lost, err := ls.HoldCallLeases(ctx, "server-a", []string{"lease-1", "lease-2", "not-reserved"}, now, now.Add(time.Minute))
	if err != nil || fmt.Sprint(lost) != "[not-reserved]" {
		t.Fatalf("HoldCallLeases of two reserved IDs and one not = lost %v, %v", lost, err)
	}
	if owner, until, err := ls.CallLease(ctx, "lease-1"); err != nil || owner != "server-a" || !until.Equal(now.Add(time.Minute)) {
		t.Errorf("CallLease = %q, %v, %v; want server-a until %v", owner, until, err, now.Add(time.Minute))
	}
	if lost, err := ls.HoldCallLeases(ctx, "server-a", []string{"lease-1"}, now.Add(time.Second), now.Add(2*time.Minute)); err != nil || len(lost) != 0 {
		t.Errorf("renewal by the owner = lost %v, %v", lost, err)
	}
	if lost, err := ls.HoldCallLeases(ctx, "server-b", []string{"lease-1"}, now.Add(time.Second), now.Add(3*time.Minute)); err != nil || fmt.Sprint(lost) != "[lease-1]" {
		t.Errorf("another owner's hold = lost %v, %v; want lease-1 lost", lost, err)
	}
	// lease-2 expires at now+1m: past it, not even its owner revives it.
	later := now.Add(time.Minute + time.Second)
	if lost, err := ls.HoldCallLeases(ctx, "server-a", []string{"lease-2"}, later, later.Add(time.Minute)); err != nil || fmt.Sprint(lost) != "[lease-2]" {
		t.Errorf("renewal of an expired lease = lost %v, %v; want lease-2 lost", lost, err)
	}
	if owner, until, err := ls.CallLease(ctx, "lease-2"); err != nil || owner != "server-a" || !until.Equal(now.Add(time.Minute)) {
		t.Errorf("CallLease of the expired lease = %q, %v, %v; want it unchanged", owner, until, err)
	}
	if lost, err := ls.HoldCallLeases(ctx, "server-a", nil, now, now); err != nil || len(lost) != 0 {
		t.Errorf("HoldCallLeases of no ID = %v, %v", lost, err)
	}
}
