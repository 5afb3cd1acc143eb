package approval_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
)

// TestWaiter: a pending approval's caller waits here; once it left, on a
// server that takes up decisions, nobody waits; another process's inbox
// knows neither and says elsewhere.
func TestWaiter(t *testing.T) {
	var runs atomic.Int64
	path := filepath.Join(t.TempDir(), "w.db")
	w := newWorld(t, path, &runs)
	defer w.close(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if _, err := w.inbox.Resume(ctx, w.eng); err != nil {
		t.Fatal(err)
	}
	cctx, leaveNow := context.WithCancel(context.Background())
	done := w.eng.Go(cctx, wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/w"}`)})
	a := pendingOne(t, w.inbox)
	if got := w.inbox.Waiter(a.ID); got != approval.WaiterHere {
		t.Errorf("while the caller waits: %q, want %q", got, approval.WaiterHere)
	}
	other := newWorld(t, path, &runs)
	defer other.close(t)
	if got := other.inbox.Waiter(a.ID); got != approval.WaiterElsewhere {
		t.Errorf("in another process: %q, want %q", got, approval.WaiterElsewhere)
	}
	leaveNow()
	if _, err := done.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := w.inbox.Waiter(a.ID); got != approval.WaiterNone {
		t.Errorf("after the caller left: %q, want %q", got, approval.WaiterNone)
	}
}
