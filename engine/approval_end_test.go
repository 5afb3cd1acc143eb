package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

// TestEndApprovalWaits: EndApprovalWaits (a server shutting down) ends a
// call's wait for approval at once, canceled, saying the server shut down;
// a call that needs approval afterwards is refused at once. With a
// durable approver the approval stays pending, the call is not recorded
// here, and once approved Resume runs it and records it under its ID.
func TestEndApprovalWaits(t *testing.T) {
	call := func(t *testing.T, e *engine.Engine) <-chan *wield.Result {
		out := make(chan *wield.Result, 1)
		go func() {
			res, err := e.Call(context.Background(), wield.Call{ID: "c1", Tool: "rm", Arguments: args(`{"path":"/tmp/x"}`)})
			if err != nil {
				t.Error(err)
			}
			out <- res
		}()
		return out
	}
	ended := func(t *testing.T, ch <-chan *wield.Result) *wield.Result {
		t.Helper()
		select {
		case res := <-ch:
			return res
		case <-time.After(10 * time.Second):
			t.Fatal("the call still waited for approval 10 s after EndApprovalWaits")
			return nil
		}
	}

	t.Run("not durable", func(t *testing.T) {
		ran := 0
		asked := make(chan struct{}, 1)
		inbox := memstore.NewApprovals(func(*wield.ApprovalRequest) { asked <- struct{}{} })
		e := newEngine(t, &engine.Options{Approver: inbox}, rmTool(&ran))
		waiting := call(t, e)
		<-asked
		e.EndApprovalWaits()
		res := ended(t, waiting)
		if res.ErrorType != wield.ErrCanceled || res.Error != "the server shut down while the call waited for approval; the call did not run" || ran != 0 {
			t.Errorf("the call whose wait was ended: %+v, ran %d", failureOf(res), ran)
		}
		res, err := e.Call(context.Background(), wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/y"}`)})
		if err != nil || res.ErrorType != wield.ErrCanceled || !strings.Contains(res.Error, "the server is shutting down") || ran != 0 {
			t.Errorf("a call needing approval after EndApprovalWaits: %+v %v, want refused at once", res, err)
		}
	})

	t.Run("durable", func(t *testing.T) {
		ctx := context.Background()
		var runs atomic.Int64
		s := durable(t)
		bus := wield.NewBus(64)
		asked := bus.Subscribe(func(e *wield.Event) bool { return e.Type == wield.EventPermissionRequested })
		inbox := approval.New(s, nil)
		e := newEngine(t, &engine.Options{Store: s, Bus: bus, Approver: inbox}, slowRm(&runs, 0))
		waiting := call(t, e)
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ev, err := asked.Next(actx)
		cancel()
		if err != nil {
			t.Fatalf("no approval asked within 10 s: %v", err)
		}
		id := ev.ApprovalID
		e.EndApprovalWaits()
		res := ended(t, waiting)
		if res.ErrorType != wield.ErrCanceled || !strings.Contains(res.Error, "the server shut down while the call waited for approval "+id+"; it stays pending") || runs.Load() != 0 {
			t.Errorf("the call whose wait was ended: %+v, ran %d", failureOf(res), runs.Load())
		}
		a, err := s.Approval(ctx, id)
		if err != nil || a.Status != wield.ApprovalPending {
			t.Fatalf("the approval after the wait ended: %+v %v, want pending", a, err)
		}
		if _, err := s.Call(ctx, "c1"); err == nil {
			t.Error("the call was recorded when its wait ended: whoever takes the approval up records it")
		}
		// Approved later (a server back on the store): the call runs
		// once and is recorded under its ID.
		a, err = s.DecideApproval(ctx, id, a.Digest, wield.Decision{Approved: true, By: "ann"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := newEngine(t, &engine.Options{Store: s, Approver: inbox}, slowRm(&runs, 0)).Resume(ctx, a); err != nil {
			t.Fatal(err)
		}
		s.Flush(ctx)
		if rec := recordOf(t, s, "c1"); !rec.Result.OK || runs.Load() != 1 {
			t.Errorf("the resumed call's record: %+v, runs %d", rec.Result, runs.Load())
		}
	})
}
