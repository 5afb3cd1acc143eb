package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
)

// fakeStore keeps approvals in memory and carries decisions like the
// postgres store does; it counts its listeners, and a stubborn one never
// closes a listener's channel, whatever its context does.
type fakeStore struct {
	mu        sync.Mutex
	approvals map[string]*wield.Approval
	readCtx   context.Context // the context of the latest Approval read

	listens  atomic.Int32
	stubborn bool
}

func newFakeStore() *fakeStore { return &fakeStore{approvals: map[string]*wield.Approval{}} }

func (s *fakeStore) CreateApproval(_ context.Context, req *wield.ApprovalRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approvals[req.ID] = &wield.Approval{ApprovalRequest: *req, Status: wield.ApprovalPending}
	return nil
}

func (s *fakeStore) DecideApproval(_ context.Context, id, _ string, d wield.Decision) (*wield.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.approvals[id]
	if !ok {
		return nil, wield.ErrNotFound
	}
	if a.Status != wield.ApprovalPending {
		return nil, wield.ErrAlreadyDecided
	}
	a.Status = wield.ApprovalDenied
	if d.Approved {
		a.Status = wield.ApprovalApproved
	}
	a.Decision = &d
	return a, nil
}

func (s *fakeStore) Approval(ctx context.Context, id string) (*wield.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readCtx = ctx
	a, ok := s.approvals[id]
	if !ok {
		return nil, wield.ErrNotFound
	}
	c := *a
	return &c, nil
}

func (s *fakeStore) Approvals(ctx context.Context, status wield.ApprovalStatus) ([]*wield.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readCtx = ctx
	var out []*wield.Approval
	for _, a := range s.approvals {
		if status == "" || a.Status == status {
			c := *a
			out = append(out, &c)
		}
	}
	return out, nil
}

func (s *fakeStore) NotifyDecision(context.Context, string) error { return nil }

func (s *fakeStore) Decisions(ctx context.Context) (<-chan string, error) {
	s.listens.Add(1)
	ch := make(chan string)
	if !s.stubborn {
		context.AfterFunc(ctx, func() { close(ch) })
	}
	return ch, nil
}

func (s *fakeStore) lastRead() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readCtx
}

func request() *wield.ApprovalRequest {
	return &wield.ApprovalRequest{ID: "ap_" + wield.NewID(), CallID: wield.NewID(), Tool: "rm",
		Arguments: json.RawMessage(`{"path":"x"}`), Digest: "d1", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
}

// until polls cond (bounded) and fails the test if it never holds.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: not within 5 s", what)
}

// closes fails the test unless in.Close returns within 5 s.
func closes(t *testing.T, in *approval.Inbox) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		in.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waits 5 s later")
	}
}

// TestListensOnlyWhileWaited: an inbox used to list and decide (as the
// command line's `wield approvals approve` does) holds no listener, so a
// store's connection is not taken for nothing; the first call that waits
// starts one.
func TestListensOnlyWhileWaited(t *testing.T) {
	s := newFakeStore()
	in := approval.New(s, &approval.Options{Poll: time.Hour})
	if _, err := in.Pending(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Decide(context.Background(), "ap_none", "", wield.Decision{Approved: true}); err == nil {
		t.Fatal("Decide of an unknown approval: no error")
	}
	if n := s.listens.Load(); n != 0 {
		t.Errorf("an inbox nobody waits on listened %d times", n)
	}

	req := request()
	got := make(chan wield.Decision, 1)
	go func() {
		d, _ := in.Approve(context.Background(), req)
		got <- d
	}()
	until(t, "the waiting call starts a listener", func() bool { return s.listens.Load() == 1 })
	if _, err := in.Decide(context.Background(), req.ID, "d1", wield.Decision{Approved: true, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if !d.Approved {
			t.Errorf("decision %+v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the decision did not wake the waiting call")
	}
	closes(t, in)
}

// TestCloseEndsListener: Close stops the listener even when the notifier's
// channel never closes (a notifier that ignores its context).
func TestCloseEndsListener(t *testing.T) {
	s := newFakeStore()
	s.stubborn = true
	in := approval.New(s, &approval.Options{Poll: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		_, _ = in.Approve(ctx, request())
	}()
	until(t, "the waiting call starts a listener", func() bool { return s.listens.Load() == 1 })
	cancel()
	<-waited
	closes(t, in)
	closes(t, in) // a second Close is harmless
}

// TestCloseStopsResume: the work Resume starts belongs to the inbox and
// ends with Close, even when the context given to Resume never ends; a
// closed inbox resumes nothing.
func TestCloseStopsResume(t *testing.T) {
	s := newFakeStore()
	if err := s.CreateApproval(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	in := approval.New(s, &approval.Options{Poll: time.Hour})
	inv := &countingInvoker{}
	n, err := in.Resume(context.Background(), inv)
	if err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v; want 1", n, err)
	}
	until(t, "Resume looks in the store", func() bool { return s.lastRead() != nil })
	closes(t, in)
	if ctx := s.lastRead(); ctx.Err() == nil {
		t.Error("after Close the context of Resume's work has not ended")
	}
	if c := inv.calls.Load(); c != 0 {
		t.Errorf("Resume acted on %d undecided approvals", c)
	}
	if _, err := in.Resume(context.Background(), inv); !errors.Is(err, wield.ErrClosed) {
		t.Errorf("Resume on a closed inbox = %v, want wield.ErrClosed", err)
	}
}

// countingInvoker counts the decisions it is asked to act on.
type countingInvoker struct{ calls atomic.Int32 }

func (c *countingInvoker) Resume(context.Context, *wield.Approval) (*wield.Result, error) {
	c.calls.Add(1)
	return &wield.Result{OK: true}, nil
}
