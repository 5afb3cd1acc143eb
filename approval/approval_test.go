package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

type rmIn struct {
	Path string `json:"path"`
}

// world is an engine with a destructive tool and a durable inbox over a
// SQLite file, as a server has them.
type world struct {
	store *sqlite.Store
	inbox *approval.Inbox
	eng   *engine.Engine
	runs  *atomic.Int64
}

func newWorld(t *testing.T, path string, runs *atomic.Int64) *world {
	t.Helper()
	store, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	rm := wield.Func("rm", "Remove a file", func(_ context.Context, in rmIn) (string, error) {
		runs.Add(1)
		return "removed " + in.Path, nil
	})
	rm.Annotations.Destructive = true
	reg := wield.NewRegistry(nil)
	reg.MustRegister(rm)
	inbox := approval.New(store, &approval.Options{Poll: 20 * time.Millisecond})
	eng := engine.New(reg, &engine.Options{Store: store, Approver: inbox, ApprovalTimeout: time.Minute})
	return &world{store: store, inbox: inbox, eng: eng, runs: runs}
}

func (w *world) close(t *testing.T) {
	t.Helper()
	_ = w.eng.Close(context.Background())
	if err := w.store.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

func pendingOne(t *testing.T, in *approval.Inbox) *wield.Approval {
	t.Helper()
	for i := 0; i < 500; i++ {
		p, err := in.Pending(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(p) == 1 {
			return p[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no pending approval appeared")
	return nil
}

// TestApproveWhileWaiting: the call waits, a person approves, the call runs.
func TestApproveWhileWaiting(t *testing.T) {
	var runs atomic.Int64
	w := newWorld(t, filepath.Join(t.TempDir(), "w.db"), &runs)
	defer w.close(t)
	done := w.eng.Go(context.Background(), wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)})
	a := pendingOne(t, w.inbox)
	if runs.Load() != 0 {
		t.Fatal("ran before the decision")
	}
	if _, err := w.inbox.Decide(context.Background(), a.ID, "not-the-digest", wield.Decision{Approved: true}); !errors.Is(err, wield.ErrDigestMismatch) {
		t.Errorf("decision on other arguments: %v", err)
	}
	if _, err := w.inbox.Decide(context.Background(), a.ID, a.Digest, wield.Decision{Approved: true, By: "ann"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.inbox.Decide(context.Background(), a.ID, a.Digest, wield.Decision{Approved: false}); !errors.Is(err, wield.ErrAlreadyDecided) {
		t.Errorf("second decision: %v", err)
	}
	res, err := done.Wait(context.Background())
	if err != nil || !res.OK || runs.Load() != 1 {
		t.Fatalf("%v %+v, %d runs", err, res, runs.Load())
	}
}

// TestDecisionFromAnotherProcess: a second inbox on the same database (as
// another server) decides; the waiting call sees it by polling.
func TestDecisionFromAnotherProcess(t *testing.T) {
	var runs atomic.Int64
	path := filepath.Join(t.TempDir(), "w.db")
	w := newWorld(t, path, &runs)
	defer w.close(t)
	other := newWorld(t, path, &runs)
	defer other.close(t)
	done := w.eng.Go(context.Background(), wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/a"}`)})
	a := pendingOne(t, other.inbox)
	if _, err := other.inbox.Decide(context.Background(), a.ID, a.Digest, wield.Decision{Approved: false, Reason: "not today"}); err != nil {
		t.Fatal(err)
	}
	res, err := done.Wait(context.Background())
	if err != nil || res.ErrorType != wield.ErrApprovalDenied || runs.Load() != 0 {
		t.Fatalf("%v %s %q, %d runs", err, res.ErrorType, res.Error, runs.Load())
	}
}

// TestResumeAfterRestart: the process that waited is gone; after a restart
// the pending approval is still there, and deciding it runs the call under
// its original ID, recorded in the store.
func TestResumeAfterRestart(t *testing.T) {
	var runs atomic.Int64
	path := filepath.Join(t.TempDir(), "w.db")
	w := newWorld(t, path, &runs)
	ctx, stop := context.WithCancel(context.Background())
	done := w.eng.Go(ctx, wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/b"}`)})
	a := pendingOne(t, w.inbox)
	stop() // the caller and its process go away
	if res, _ := done.Wait(context.Background()); res == nil || res.ErrorType != wield.ErrCanceled {
		t.Fatalf("the abandoned call: %+v", res)
	}
	w.close(t)

	w2 := newWorld(t, path, &runs)
	defer w2.close(t)
	n, err := w2.inbox.Resume(context.Background(), w2.eng)
	if err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v; want 1", n, err)
	}
	if _, err := w2.inbox.Decide(context.Background(), a.ID, a.Digest, wield.Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	var rec *wield.Record
	for i := 0; i < 500; i++ {
		if rec, err = w2.store.Call(context.Background(), a.CallID); err == nil && rec.Result.OK {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rec == nil || !rec.Result.OK || runs.Load() != 1 || string(rec.Result.Output) != `"removed /b"` {
		t.Fatalf("resumed call: %+v (%v), %d runs", rec, err, runs.Load())
	}
}

// TestApprovalIDCannotBeForged: a call naming an approval for other
// arguments, another call or another tool does not run.
func TestApprovalIDCannotBeForged(t *testing.T) {
	var runs atomic.Int64
	w := newWorld(t, filepath.Join(t.TempDir(), "w.db"), &runs)
	done := w.eng.Go(context.Background(), wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/safe"}`)})
	a := pendingOne(t, w.inbox)
	if _, err := w.inbox.Decide(context.Background(), a.ID, a.Digest, wield.Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := done.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []wield.Call{
		{ID: a.CallID, Tool: "rm", Arguments: json.RawMessage(`{"path":"/etc"}`), ApprovalID: a.ID},
		{Tool: "rm", Arguments: json.RawMessage(`{"path":"/safe"}`), ApprovalID: a.ID},
		{ID: a.CallID, Tool: "rm", Arguments: json.RawMessage(`{"path":"/safe"}`), ApprovalID: "nope"},
	} {
		// A reused call ID is also refused by the store (err); the result
		// is what matters here.
		res, err := w.eng.Call(context.Background(), c)
		if res == nil || res.ErrorType != wield.ErrApprovalDenied {
			t.Errorf("%+v: %v %+v", c, err, res)
		}
	}
	if runs.Load() != 1 {
		t.Errorf("%d runs, want 1", runs.Load())
	}
	// The two calls that reused the ID keep their records out of the store
	// (the journal's writer refuses them, and Close counts them); the first
	// record stands.
	if rec, err := w.store.Call(context.Background(), a.CallID); err != nil || string(rec.Call.Arguments) != `{"path":"/safe"}` {
		t.Errorf("the first record of %s: %v %v", a.CallID, rec, err)
	}
	_ = w.eng.Close(context.Background())
	if err := w.store.Close(context.Background()); err != nil && !strings.Contains(err.Error(), "2 call records were refused") {
		t.Error(err)
	}
}

// TestExpiry: an approval nobody decides expires; the call is refused.
func TestExpiry(t *testing.T) {
	var runs atomic.Int64
	w := newWorld(t, filepath.Join(t.TempDir(), "w.db"), &runs)
	defer w.close(t)
	reg := w.eng.Registry()
	short := engine.New(reg, &engine.Options{Store: w.store, Approver: w.inbox, ApprovalTimeout: 200 * time.Millisecond})
	defer short.Close(context.Background())
	res, err := short.Call(context.Background(), wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/c"}`)})
	if err != nil || res.ErrorType != wield.ErrApprovalDenied || runs.Load() != 0 {
		t.Fatalf("%v %s %q", err, res.ErrorType, res.Error)
	}
	all, _ := w.store.Approvals(context.Background(), wield.ApprovalExpired)
	if len(all) != 1 {
		t.Errorf("%d expired approvals, want 1", len(all))
	}
}
