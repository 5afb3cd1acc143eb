package approval_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/sqlite"
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

// seenStore is a SQLite store that asks the inbox, the moment an approval
// is stored, who waits for it: what a console listing it then would show.
type seenStore struct {
	*sqlite.Store
	inbox *approval.Inbox
	seen  chan approval.Waiter
}

func (s *seenStore) CreateApproval(ctx context.Context, req *wield.ApprovalRequest) error {
	err := s.Store.CreateApproval(ctx, req)
	s.seen <- s.inbox.Waiter(req.ID)
	return err
}

// TestWaiterFromTheStart: an approval is never seen pending without its
// waiting caller (a console read "elsewhere" in the instant between the
// store's write and the wait).
func TestWaiterFromTheStart(t *testing.T) {
	var runs atomic.Int64
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := &seenStore{Store: store, seen: make(chan approval.Waiter, 1)}
	w := newWorldOver(store, seen, nil, &runs)
	seen.inbox = w.inbox
	defer w.close(t)
	cctx, leave := context.WithCancel(context.Background())
	done := w.eng.Go(cctx, wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/w"}`)})
	if got := <-seen.seen; got != approval.WaiterHere {
		t.Errorf("as the approval is stored: %q, want %q", got, approval.WaiterHere)
	}
	leave()
	if _, err := done.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}
