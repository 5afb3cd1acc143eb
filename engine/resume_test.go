package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// durable is a SQLite store that keeps records and approvals, as a server's.
func durable(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), &sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// Close fails when a record was refused: a call recorded twice.
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("store Close: %v", err)
		}
	})
	return s
}

// slowRm is a destructive tool that counts its runs and takes d.
func slowRm(runs *atomic.Int64, d time.Duration) *wield.Tool {
	t := wield.Func("rm", "Remove a file", func(ctx context.Context, in pathIn) (string, error) {
		runs.Add(1)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return "removed " + in.Path, nil
	})
	t.Annotations.Destructive = true
	return t
}

// decided stores an approval for a call of rm whose caller is gone, created
// an hour ago and expiring after expires, and decides it (approved, denied,
// or not at all).
func decided(t *testing.T, s *sqlite.Store, id string, decision *wield.Decision, timeout, expires time.Duration) *wield.Approval {
	t.Helper()
	ctx := context.Background()
	a := args(`{"path":"/tmp/` + id + `"}`)
	req := &wield.ApprovalRequest{ID: id, CallID: "call-" + id, Tool: "rm", Caller: wield.ForConversation("agent", "conv"),
		Arguments: a, Digest: engine.Digest(a), CreatedAt: time.Now().Add(-time.Hour), ExpiresAt: time.Now().Add(expires), Timeout: timeout}
	if err := s.CreateApproval(ctx, req); err != nil {
		t.Fatal(err)
	}
	if decision != nil {
		if _, err := s.DecideApproval(ctx, id, req.Digest, *decision); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Approval(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// recordOf returns the record of a call, failing the test without one.
func recordOf(t *testing.T, s *sqlite.Store, callID string) *wield.Record {
	t.Helper()
	rec, err := s.Call(context.Background(), callID)
	if err != nil {
		t.Fatalf("the record of %s: %v", callID, err)
	}
	return rec
}

// TestResume: a decision whose caller is gone is acted on once, and its
// call recorded under the original call ID, whatever the decision.
func TestResume(t *testing.T) {
	yes := &wield.Decision{Approved: true, By: "ann"}
	no := &wield.Decision{By: "ann", Reason: "keep it"}
	tests := []struct {
		name     string
		decision *wield.Decision
		expired  bool
		unknown  bool // the tool no longer exists
		want     failure
		output   string
		runs     int64
	}{
		{name: "approved runs", decision: yes, want: failure{OK: true, Attempts: 1}, output: `"removed /tmp/a"`, runs: 1},
		{name: "denied is recorded", decision: no, want: failure{ErrorType: wield.ErrApprovalDenied, Error: "The user denied the call of tool 'rm': keep it"}},
		{name: "expired never runs", expired: true, want: failure{ErrorType: wield.ErrApprovalDenied, Error: "Approval for tool 'rm' was not given: expired"}},
		{name: "a tool gone since", decision: yes, unknown: true,
			want: failure{ErrorType: wield.ErrToolNotFound, Error: "Tool 'rm' no longer exists: approval a was given for this call, and it could not run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			s := durable(t)
			tools := []*wield.Tool{slowRm(&runs, 0)}
			if tt.unknown {
				tools = []*wield.Tool{echoTool()}
			}
			bus := wield.NewBus(64)
			events := bus.Subscribe(nil)
			e := newEngine(t, &engine.Options{Store: s, Bus: bus}, tools...)
			expires := time.Hour
			if tt.expired {
				expires = -time.Second
			}
			a := decided(t, s, "a", tt.decision, 0, expires)
			res, err := e.Resume(context.Background(), a)
			if err != nil || res == nil {
				t.Fatalf("Resume = %+v, %v", res, err)
			}
			if diff := cmp.Diff(tt.want, failureOf(res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if string(res.Output) != tt.output || runs.Load() != tt.runs || res.CallID != "call-a" {
				t.Errorf("output %s, %d runs, call %s; want %s, %d, call-a", res.Output, runs.Load(), res.CallID, tt.output, tt.runs)
			}
			rec := recordOf(t, s, "call-a")
			if diff := cmp.Diff(tt.want, failureOf(rec.Result)); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			if rec.Call.Caller.ConversationID != "conv" || string(rec.Call.Arguments) != `{"path":"/tmp/a"}` {
				t.Errorf("recorded call %+v", rec.Call)
			}
			// The call is announced like any other.
			last := wield.EventExecutionCompleted
			if !tt.want.OK {
				last = wield.EventExecutionFailed
			}
			ectx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for {
				ev, err := events.Next(ectx)
				if err != nil {
					t.Fatalf("no %s event for call-a: %v", last, err)
				}
				if ev.CallID == "call-a" && ev.Type == last {
					break
				}
			}
			// Acted on once: a second Resume, as another server's, does nothing.
			if again, err := e.Resume(context.Background(), a); again != nil || err != nil {
				t.Errorf("second Resume = %+v, %v; want nil, nil", again, err)
			}
			if got, _ := s.Approval(context.Background(), "a"); got == nil || got.ClaimedAt.IsZero() {
				t.Errorf("the approval is not claimed: %+v", got)
			}
		})
	}
}

// TestResumeRefusals: a pending approval is not acted on, and a refusal
// recorded already (by its caller, who still waited) is not recorded again.
func TestResumeRefusals(t *testing.T) {
	var runs atomic.Int64
	s := durable(t)
	e := newEngine(t, &engine.Options{Store: s}, slowRm(&runs, 0))
	ctx := context.Background()
	if _, err := e.Resume(ctx, decided(t, s, "p", nil, 0, time.Hour)); err == nil {
		t.Error("Resume of a pending approval: no error")
	}
	a := decided(t, s, "d", &wield.Decision{Reason: "no"}, 0, time.Hour)
	first := &wield.Result{CallID: "call-d", Tool: "rm", ErrorType: wield.ErrApprovalDenied, Error: "recorded by the caller"}
	if err := s.Save(ctx, &wield.Record{Call: &wield.Call{ID: "call-d", Tool: "rm"}, Result: first}); err != nil {
		t.Fatal(err)
	}
	res, err := e.Resume(ctx, a)
	if err != nil || res == nil || res.Error != "recorded by the caller" {
		t.Errorf("Resume = %+v, %v; want the recorded result", res, err)
	}
	if runs.Load() != 0 {
		t.Errorf("%d runs", runs.Load())
	}
}

// TestResumeTimeout: a resumed call's timeout is its own, counted from when
// it runs, not from when it was asked an hour ago.
func TestResumeTimeout(t *testing.T) {
	var runs atomic.Int64
	s := durable(t)
	e := newEngine(t, &engine.Options{Store: s}, slowRm(&runs, 100*time.Millisecond))
	ctx := context.Background()
	yes := &wield.Decision{Approved: true}
	res, err := e.Resume(ctx, decided(t, s, "long", yes, 5*time.Second, time.Hour))
	if err != nil || !res.OK {
		t.Errorf("a call with 5s to run, asked an hour ago: %+v, %v", res, err)
	}
	res, err = e.Resume(ctx, decided(t, s, "short", yes, 20*time.Millisecond, time.Hour))
	if err != nil || res.ErrorType != wield.ErrTimeout {
		t.Errorf("a call with 20ms to run: %+v, %v; want a timeout", res, err)
	}
}

// TestResumeOnce: two servers (engines over one store) resume the same
// decision many times at once; the call runs once and is recorded once.
func TestResumeOnce(t *testing.T) {
	var runs atomic.Int64
	s := durable(t)
	engines := []*engine.Engine{
		newEngine(t, &engine.Options{Store: s}, slowRm(&runs, 10*time.Millisecond)),
		newEngine(t, &engine.Options{Store: s}, slowRm(&runs, 10*time.Millisecond)),
	}
	a := decided(t, s, "a", &wield.Decision{Approved: true}, 0, time.Hour)
	const n = 10
	var wg sync.WaitGroup
	var results atomic.Int64
	for i := range n {
		wg.Go(func() {
			res, err := engines[i%2].Resume(context.Background(), a)
			if err != nil {
				t.Error(err)
			}
			if res != nil {
				results.Add(1)
			}
		})
	}
	wg.Wait()
	if runs.Load() != 1 || results.Load() != 1 {
		t.Errorf("%d runs, %d results; want 1, 1", runs.Load(), results.Load())
	}
}

// gated is a durable approver that stores the request, says so on asked,
// and returns the decision sent on answer: the test acts in between.
type gated struct {
	s      *sqlite.Store
	asked  chan *wield.ApprovalRequest
	answer chan wield.Decision
}

func (g *gated) Approve(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
	if err := g.s.CreateApproval(ctx, req); err != nil {
		return wield.Decision{}, err
	}
	g.asked <- req
	return <-g.answer, nil
}

func (g *gated) ClaimApproval(ctx context.Context, id string) error {
	return g.s.ClaimApproval(ctx, id)
}

// TestWaitingCallerAdopts: while a caller still waits, another server takes
// the decision up first; the caller gets that one run's result, and the
// call is recorded once.
func TestWaitingCallerAdopts(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "denied"}[approve], func(t *testing.T) {
			var runs atomic.Int64
			s := durable(t)
			g := &gated{s: s, asked: make(chan *wield.ApprovalRequest), answer: make(chan wield.Decision)}
			here := newEngine(t, &engine.Options{Store: s, Approver: g}, slowRm(&runs, 0))
			there := newEngine(t, &engine.Options{Store: s}, slowRm(&runs, 0))
			ctx := context.Background()
			p := here.Go(ctx, wield.Call{Tool: "rm", Arguments: args(`{"path":"/x"}`)})
			req := <-g.asked
			d := wield.Decision{Approved: approve, By: "ann", Reason: "why"}
			a, err := s.DecideApproval(ctx, req.ID, req.Digest, d)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := there.Resume(ctx, a)
			if err != nil || theirs == nil {
				t.Fatalf("Resume = %+v, %v", theirs, err)
			}
			g.answer <- d
			mine, err := p.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(failureOf(theirs), failureOf(mine)); diff != "" {
				t.Errorf("the waiting caller's result (-resumed +waiting):\n%s", diff)
			}
			if string(mine.Output) != string(theirs.Output) || mine.CallID != req.CallID {
				t.Errorf("output %s of call %s; want %s of %s", mine.Output, mine.CallID, theirs.Output, req.CallID)
			}
			if want := map[bool]int64{true: 1, false: 0}[approve]; runs.Load() != want {
				t.Errorf("%d runs, want %d", runs.Load(), want)
			}
			recordOf(t, s, req.CallID)
		})
	}
}

// TestWaitingCallerClaims: a caller that still waits acts on the decision
// itself (and claims it), so a server taking it up later does nothing.
func TestWaitingCallerClaims(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "denied"}[approve], func(t *testing.T) {
			var runs atomic.Int64
			s := durable(t)
			g := &gated{s: s, asked: make(chan *wield.ApprovalRequest, 1), answer: make(chan wield.Decision, 1)}
			here := newEngine(t, &engine.Options{Store: s, Approver: g}, slowRm(&runs, 0))
			there := newEngine(t, &engine.Options{Store: s}, slowRm(&runs, 0))
			ctx := context.Background()
			p := here.Go(ctx, wield.Call{Tool: "rm", Arguments: args(`{"path":"/x"}`)})
			req := <-g.asked
			d := wield.Decision{Approved: approve}
			a, err := s.DecideApproval(ctx, req.ID, req.Digest, d)
			if err != nil {
				t.Fatal(err)
			}
			g.answer <- d
			if _, err := p.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if res, err := there.Resume(ctx, a); res != nil || err != nil {
				t.Errorf("Resume after the caller acted = %+v, %v; want nil, nil", res, err)
			}
			if want := map[bool]int64{true: 1, false: 0}[approve]; runs.Load() != want {
				t.Errorf("%d runs, want %d", runs.Load(), want)
			}
		})
	}
}

// TestResumeClosed: a closed engine takes nothing up.
func TestResumeClosed(t *testing.T) {
	var runs atomic.Int64
	s := durable(t)
	e := newEngine(t, &engine.Options{Store: s}, slowRm(&runs, 0))
	a := decided(t, s, "a", &wield.Decision{Approved: true}, 0, time.Hour)
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Resume(context.Background(), a); !errors.Is(err, wield.ErrClosed) {
		t.Errorf("Resume after Close: %v, want ErrClosed", err)
	}
	if got, _ := s.Approval(context.Background(), "a"); got == nil || !got.ClaimedAt.IsZero() {
		t.Errorf("a closed engine claimed the approval: %+v", got)
	}
}

// TestResumeRunsAsRequester: a call resumed after its approval runs as the
// key that asked for it, whoever resumes it, so that a tool keeping things
// per requester (the artifact tools) writes the requester's own.
func TestResumeRunsAsRequester(t *testing.T) {
	for _, tt := range []struct{ requestedBy, resumer string }{
		{"key:asker", ""}, {"key:asker", "key:approver"}, {"", "key:approver"},
	} {
		s := durable(t)
		var seen atomic.Value
		who := wield.Func("rm", "Remove a file", func(ctx context.Context, in pathIn) (string, error) {
			seen.Store(wield.RequesterFrom(ctx))
			return "removed", nil
		})
		who.Annotations.Destructive = true
		e := newEngine(t, &engine.Options{Store: s}, who)
		ctx := context.Background()
		a := args(`{"path":"/tmp/x"}`)
		req := &wield.ApprovalRequest{ID: "a", CallID: "call-a", Tool: "rm", Arguments: a, Digest: engine.Digest(a),
			CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour), RequestedBy: tt.requestedBy}
		if err := s.CreateApproval(ctx, req); err != nil {
			t.Fatal(err)
		}
		got, err := s.DecideApproval(ctx, "a", req.Digest, wield.Decision{Approved: true, By: "ann"})
		if err != nil {
			t.Fatal(err)
		}
		rctx := ctx
		if tt.resumer != "" {
			rctx = wield.WithRequester(ctx, tt.resumer)
		}
		if res, err := e.Resume(rctx, got); err != nil || res == nil || !res.OK {
			t.Fatalf("Resume: %+v, %v", res, err)
		}
		if s, _ := seen.Load().(string); s != tt.requestedBy {
			t.Errorf("asked by %q, resumed by %q: the tool ran as %q, want %q", tt.requestedBy, tt.resumer, s, tt.requestedBy)
		}
	}
}
