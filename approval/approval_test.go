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
	return newWorldOver(store, store, nil, runs)
}

// newWorldOver is newWorld over store, with the inbox keeping its
// approvals through approvals (store itself, or a wrapper of it), and the
// engine asking wrap(inbox) (nil: the inbox).
func newWorldOver(store *sqlite.Store, approvals wield.ApprovalStore, wrap func(*approval.Inbox) wield.Approver, runs *atomic.Int64) *world {
	rm := wield.Func("rm", "Remove a file", func(_ context.Context, in rmIn) (string, error) {
		runs.Add(1)
		return "removed " + in.Path, nil
	})
	rm.Annotations.Destructive = true
	reg := wield.NewRegistry(nil)
	reg.MustRegister(rm)
	inbox := approval.New(approvals, &approval.Options{Poll: 20 * time.Millisecond})
	var approver wield.Approver = inbox
	if wrap != nil {
		approver = wrap(inbox)
	}
	eng := engine.New(reg, &engine.Options{Store: store, Approver: approver, ApprovalTimeout: time.Minute})
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

// recorded waits (a bounded while) for the record of a call.
func recorded(t *testing.T, s *sqlite.Store, callID string) *wield.Record {
	t.Helper()
	for range 300 {
		if rec, err := s.Call(context.Background(), callID); err == nil {
			return rec
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no record of call %s after 3s", callID)
	return nil
}

// leave starts a call and lets its caller go away once it is pending; it
// returns the pending approval.
func leave(t *testing.T, w *world, path string) *wield.Approval {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	done := w.eng.Go(ctx, wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"` + path + `"}`)})
	a := pendingOne(t, w.inbox)
	stop()
	if res, _ := done.Wait(context.Background()); res == nil || res.ErrorType != wield.ErrCanceled {
		t.Fatalf("the abandoned call: %+v", res)
	}
	return a
}

// TestCallerLeft: the caller goes away while its call waits; the decision,
// made afterwards from another process (the CLI on the same database), is
// acted on by the server, once, and recorded under the call's ID.
func TestCallerLeft(t *testing.T) {
	tests := []struct {
		name     string
		decision *wield.Decision // nil: none, it expires
		want     wield.ErrorType
		error    string
		runs     int64
	}{
		{name: "approved", decision: &wield.Decision{Approved: true, By: "ann"}, runs: 1},
		{name: "denied", decision: &wield.Decision{By: "ann", Reason: "not that"}, want: wield.ErrApprovalDenied, error: "The user denied the call of tool 'rm': not that"},
		{name: "expired", want: wield.ErrApprovalDenied, error: "Approval for tool 'rm' was not given: expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			path := filepath.Join(t.TempDir(), "w.db")
			w := newWorld(t, path, &runs)
			defer w.close(t)
			eng := w.eng
			if tt.decision == nil {
				eng = engine.New(w.eng.Registry(), &engine.Options{Store: w.store, Approver: w.inbox, ApprovalTimeout: 300 * time.Millisecond})
				defer eng.Close(context.Background())
			}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			if _, err := w.inbox.Resume(ctx, eng); err != nil {
				t.Fatal(err)
			}
			a := leave(t, &world{store: w.store, inbox: w.inbox, eng: eng}, "/left")
			if tt.decision != nil {
				cli := newWorld(t, path, &runs) // another process: no notification reaches the server
				if _, err := cli.inbox.Decide(context.Background(), a.ID, a.Digest, *tt.decision); err != nil {
					t.Fatal(err)
				}
				cli.close(t)
			}
			rec := recorded(t, w.store, a.CallID)
			if rec.Result.ErrorType != tt.want || rec.Result.Error != tt.error || runs.Load() != tt.runs {
				t.Errorf("record %s %q, %d runs; want %q %q, %d", rec.Result.ErrorType, rec.Result.Error, runs.Load(), tt.want, tt.error, tt.runs)
			}
			if got, err := w.store.Approval(context.Background(), a.ID); err != nil || got.ClaimedAt.IsZero() {
				t.Errorf("the approval after: %+v, %v; want it claimed", got, err)
			}
		})
	}
}

// TestApprovedWhileStopped: the caller left, the server stopped, the call
// was approved while no server ran; the next start runs it.
func TestApprovedWhileStopped(t *testing.T) {
	var runs atomic.Int64
	path := filepath.Join(t.TempDir(), "w.db")
	w := newWorld(t, path, &runs)
	a := leave(t, w, "/stopped")
	w.close(t)
	if _, err := approval.New(mustOpen(t, path), nil).Decide(context.Background(), a.ID, a.Digest, wield.Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	w2 := newWorld(t, path, &runs)
	defer w2.close(t)
	n, err := w2.inbox.Resume(t.Context(), w2.eng)
	if err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v; want 1", n, err)
	}
	if rec := recorded(t, w2.store, a.CallID); !rec.Result.OK || string(rec.Result.Output) != `"removed /stopped"` || runs.Load() != 1 {
		t.Errorf("record %+v, %d runs", rec.Result, runs.Load())
	}
}

// mustOpen opens the store at path, closed when the test ends.
func mustOpen(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// TestTwoServers: two servers over one database both take decisions up;
// a call whose caller left runs once, and a caller that still waits on one
// server gets its result from the one run.
func TestTwoServers(t *testing.T) {
	var runs atomic.Int64
	path := filepath.Join(t.TempDir(), "w.db")
	one := newWorld(t, path, &runs)
	defer one.close(t)
	two := newWorld(t, path, &runs)
	defer two.close(t)
	for _, w := range []*world{one, two} {
		if _, err := w.inbox.Resume(t.Context(), w.eng); err != nil {
			t.Fatal(err)
		}
	}
	a := leave(t, one, "/gone")
	if _, err := two.inbox.Decide(context.Background(), a.ID, a.Digest, wield.Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	recorded(t, one.store, a.CallID)

	done := one.eng.Go(context.Background(), wield.Call{Tool: "rm", Arguments: json.RawMessage(`{"path":"/waits"}`)})
	b := pendingOne(t, two.inbox)
	if _, err := two.inbox.Decide(context.Background(), b.ID, b.Digest, wield.Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	res, err := done.Wait(context.Background())
	if err != nil || !res.OK || string(res.Output) != `"removed /waits"` {
		t.Errorf("the waiting caller: %+v, %v", res, err)
	}
	time.Sleep(200 * time.Millisecond) // past the handover: nobody runs it again
	if runs.Load() != 2 {
		t.Errorf("%d runs of two calls, want 2", runs.Load())
	}
}
