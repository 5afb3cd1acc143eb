package approval_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/sqlite"
)

// TestCallerCancelsWhileWaiting: a caller that ends its call on purpose
// while it waits for approval (cancel with wield.ErrCallerCanceled, as an
// MCP client's notifications/cancelled, or its own timeout elapsing) ends
// the approval (denied, the reason saying the caller canceled, claimed)
// and the call is recorded as canceled at once. A caller that merely left
// (a plain cancel, as a disconnected HTTP client) leaves the approval
// pending and the call unrecorded, for a person to decide.
func TestCallerCancelsWhileWaiting(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration                 // the call's own timeout
		cancel  func(context.CancelCauseFunc) // how the caller ends it; nil: not at all
		want    wield.ApprovalStatus          // the approval's status after
		record  bool                          // the call is recorded
	}{
		{"notifications/cancelled", 0, func(c context.CancelCauseFunc) { c(wield.ErrCallerCanceled) }, wield.ApprovalDenied, true},
		{"the call's timeout", 300 * time.Millisecond, nil, wield.ApprovalDenied, true},
		{"disconnected", 0, func(c context.CancelCauseFunc) { c(nil) }, wield.ApprovalPending, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			w := newWorld(t, filepath.Join(t.TempDir(), "w.db"), &runs)
			defer w.close(t)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tt.cancel != nil {
				go func() {
					pendingOne(t, w.inbox)
					tt.cancel(cancel)
				}()
			}
			res, err := w.eng.Call(ctx, wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/tmp/x"}`), Timeout: tt.timeout})
			if err != nil {
				t.Fatal(err)
			}
			checkCanceled(t, w, res, tt.want, tt.record)
		})
	}
}

// checkCanceled checks what a call of rm canceled while it waited for
// approval left: result res canceled and rm not run, the one approval in
// status want (denied: by the caller, saying so, and claimed), and the call
// recorded as canceled or, when record is false, not at all.
func checkCanceled(t *testing.T, w *world, res *wield.Result, want wield.ApprovalStatus, record bool) {
	t.Helper()
	if res.ErrorType != wield.ErrCanceled || w.runs.Load() != 0 {
		t.Errorf("result %s %q, %d runs; want canceled, not run", res.ErrorType, res.Error, w.runs.Load())
	}
	list, err := w.store.Approvals(context.Background(), "")
	if err != nil || len(list) != 1 {
		t.Fatalf("approvals: %v %d", err, len(list))
	}
	a := list[0]
	if a.Status != want {
		t.Errorf("approval status %s, want %s", a.Status, want)
	}
	if want == wield.ApprovalDenied {
		if a.Decision == nil || a.Decision.By != "caller" || !strings.Contains(a.Decision.Reason, "the caller canceled the call while waiting for approval") || a.ClaimedAt.IsZero() {
			t.Errorf("approval %+v decision %+v; want denied by the caller, saying so, and claimed", a, a.Decision)
		}
		if !strings.Contains(res.Error, "the caller canceled the call while it waited for approval "+a.ID) {
			t.Errorf("result error %q does not say the caller canceled while waiting for approval %s", res.Error, a.ID)
		}
	}
	rec, err := w.store.Call(context.Background(), res.CallID)
	if got := err == nil && rec.Result != nil; got != record {
		t.Errorf("recorded %v (%v), want %v", got, err, record)
	} else if got && rec.Result.ErrorType != wield.ErrCanceled {
		t.Errorf("record error type %s, want canceled", rec.Result.ErrorType)
	}
}

// storedLate is the SQLite store as its driver answers when the caller's
// context ends while the INSERT of an approval finishes: the approval is
// stored, and CreateApproval reports the context's error all the same.
// CreateApproval answers once the caller has canceled (canceled is
// closed), whose cancel comes after the approval is seen pending.
type storedLate struct {
	*sqlite.Store
	canceled chan struct{}
}

func (s *storedLate) CreateApproval(ctx context.Context, req *wield.ApprovalRequest) error {
	err := s.Store.CreateApproval(ctx, req)
	select {
	case <-s.canceled:
	case <-time.After(10 * time.Second):
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// TestCallerCancelsWhileStoring: a caller that cancels on purpose before
// its approval is stored, or while it is stored (the store saying the
// context ended though it stored the approval), ends that approval as one
// that cancels while it waits: denied, claimed, the call recorded as
// canceled. (Before, the approval stayed pending and the call was left
// unrecorded, as for a caller that merely left.)
func TestCallerCancelsWhileStoring(t *testing.T) {
	for _, name := range []string{"before", "while stored"} {
		t.Run(name, func(t *testing.T) {
			var runs atomic.Int64
			store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			late := &storedLate{Store: store, canceled: make(chan struct{})}
			w := newWorldOver(store, late, nil, &runs)
			defer w.close(t)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if name == "before" {
				cancel(wield.ErrCallerCanceled)
				close(late.canceled)
			} else {
				go func() {
					defer close(late.canceled)
					pendingOne(t, w.inbox)
					cancel(wield.ErrCallerCanceled)
				}()
			}
			res, err := w.eng.Call(ctx, wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)})
			if err != nil {
				t.Fatal(err)
			}
			checkCanceled(t, w, res, wield.ApprovalDenied, true)
		})
	}
}

// leavesOnDecision is the inbox, as a caller sees it that leaves (a plain
// cancel) as the decision comes: after the inbox has it, before the engine
// claims it.
type leavesOnDecision struct {
	*approval.Inbox
	cancel context.CancelCauseFunc
}

func (a leavesOnDecision) Approve(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
	d, err := a.Inbox.Approve(ctx, req)
	a.cancel(nil)
	return d, err
}

// TestCallerLeavesAsApproved: a caller that leaves as its call is
// approved, after the decision and before the engine claims it, has the
// claim made all the same: the approval is claimed once, by this call,
// which ends canceled (its caller gone before it could run), as its record
// says. (Before, the claim under the ended context
// failed, and the call was refused as if the store were unavailable, its
// approval approved and unclaimed for a resumed run to act on again.)
func TestCallerLeavesAsApproved(t *testing.T) {
	var runs atomic.Int64
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	w := newWorldOver(store, store, func(in *approval.Inbox) wield.Approver { return leavesOnDecision{in, cancel} }, &runs)
	defer w.close(t)
	decided := make(chan error, 1)
	go func() {
		a := pendingOne(t, w.inbox)
		_, err := w.inbox.Decide(context.Background(), a.ID, a.Digest, wield.Decision{Approved: true, By: "alice"})
		decided <- err
	}()
	res, err := w.eng.Call(ctx, wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-decided; err != nil {
		t.Fatal(err)
	}
	if res.ErrorType != wield.ErrCanceled || runs.Load() != 0 {
		t.Errorf("result %s %q, %d runs; want canceled (its caller gone), not run", res.ErrorType, res.Error, runs.Load())
	}
	list, err := w.store.Approvals(context.Background(), "")
	if err != nil || len(list) != 1 {
		t.Fatalf("approvals: %v %d", err, len(list))
	}
	if a := list[0]; a.Status != wield.ApprovalApproved || a.ClaimedAt.IsZero() {
		t.Errorf("approval %s, claimed at %v; want approved and claimed", a.Status, a.ClaimedAt)
	}
	rec, err := w.store.Call(context.Background(), res.CallID)
	if err != nil || rec.Result == nil {
		t.Fatalf("record: %v", err)
	}
	if rec.Result.OK != res.OK || rec.Result.ErrorType != res.ErrorType {
		t.Errorf("record %v %s, result %v %s; want the same", rec.Result.OK, rec.Result.ErrorType, res.OK, res.ErrorType)
	}
}

// TestCallerLeavesNamingApproval: a call that names its approved approval
// (as an MCP client's retry with its requestState does) whose caller is
// gone by the time the engine reads it has the approval read and claimed
// all the same: claimed once, by this call, which ends canceled, as its
// record says. (Before, the read under the ended context failed, and the
// call was refused and recorded as if the store were unavailable, its
// approval approved and unclaimed for a resumed run to act on again.)
func TestCallerLeavesNamingApproval(t *testing.T) {
	var runs atomic.Int64
	w := newWorld(t, filepath.Join(t.TempDir(), "w.db"), &runs)
	defer w.close(t)
	left, leave := context.WithCancel(context.Background())
	go func() {
		pendingOne(t, w.inbox)
		leave()
	}()
	call := wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)}
	first, err := w.eng.Call(left, call)
	if err != nil {
		t.Fatal(err)
	}
	list, err := w.store.Approvals(context.Background(), wield.ApprovalPending)
	if err != nil || len(list) != 1 {
		t.Fatalf("pending approvals: %v %d", err, len(list))
	}
	if _, err := w.inbox.Decide(context.Background(), list[0].ID, list[0].Digest, wield.Decision{Approved: true, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	call.ID, call.ApprovalID = first.CallID, list[0].ID
	res, err := w.eng.Call(gone, call)
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorType != wield.ErrCanceled || runs.Load() != 0 {
		t.Errorf("result %s %q, %d runs; want canceled (its caller gone), not run", res.ErrorType, res.Error, runs.Load())
	}
	a, err := w.store.Approval(context.Background(), list[0].ID)
	if err != nil || a.ClaimedAt.IsZero() {
		t.Errorf("approval %+v (%v); want claimed", a, err)
	}
	rec, err := w.store.Call(context.Background(), res.CallID)
	if err != nil || rec.Result == nil {
		t.Fatalf("record: %v", err)
	}
	if rec.Result.ErrorType != res.ErrorType {
		t.Errorf("record %s, result %s; want the same", rec.Result.ErrorType, res.ErrorType)
	}
}
