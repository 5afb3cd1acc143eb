package memstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/memstore"
)

func rec(tool, conv string, ok bool, at time.Time) *wield.Record {
	return &wield.Record{
		Call:     &wield.Call{Tool: tool, Caller: wield.Caller{ConversationID: conv}},
		Result:   &wield.Result{Tool: tool, OK: ok},
		QueuedAt: at,
	}
}

func TestRecords(t *testing.T) {
	s := memstore.New(3)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for i, r := range []*wield.Record{
		rec("a", "c1", true, t0), rec("b", "c1", false, t0.Add(time.Minute)),
		rec("a", "c2", true, t0.Add(2*time.Minute)), rec("a", "c1", true, t0.Add(3*time.Minute)),
	} {
		if err := s.Save(ctx, r); err != nil {
			t.Fatal(i, err)
		}
	}
	kept, dropped := s.Len()
	if kept != 3 || dropped != 1 {
		t.Errorf("Len() = %d, %d; want 3, 1", kept, dropped)
	}
	yes, no := true, false
	tools := func(rs []*wield.Record) (out []string) {
		for _, r := range rs {
			out = append(out, r.Call.Tool+"/"+r.Call.Caller.ConversationID)
		}
		return out
	}
	tests := []struct {
		f    memstore.Filter
		want []string
	}{
		{memstore.Filter{}, []string{"b/c1", "a/c2", "a/c1"}},
		{memstore.Filter{ConversationID: "c1"}, []string{"b/c1", "a/c1"}},
		{memstore.Filter{Tool: "a"}, []string{"a/c2", "a/c1"}},
		{memstore.Filter{OK: &no}, []string{"b/c1"}},
		{memstore.Filter{OK: &yes, Since: t0.Add(150 * time.Second)}, []string{"a/c1"}},
		{memstore.Filter{Limit: 2}, []string{"a/c2", "a/c1"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tools(s.Records(tt.f))); diff != "" {
			t.Errorf("%+v (-want +got)\n%s", tt.f, diff)
		}
	}
}

func TestSaveCopies(t *testing.T) {
	s := memstore.New(0)
	r := rec("a", "c", true, time.Now())
	_ = s.Save(context.Background(), r)
	r.Result.OK = false
	if got := s.Records(memstore.Filter{})[0].Result.OK; !got {
		t.Error("changing the saved result changed the record")
	}
}

func request(id string, ttl time.Duration) *wield.ApprovalRequest {
	return &wield.ApprovalRequest{ID: id, Tool: "rm", Digest: "d-" + id, ExpiresAt: time.Now().Add(ttl)}
}

func TestApprovals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var notified []string
		a := memstore.NewApprovals(func(r *wield.ApprovalRequest) {
			mu.Lock()
			notified = append(notified, r.ID)
			mu.Unlock()
		})
		type out struct {
			d   wield.Decision
			err error
		}
		wait := func(req *wield.ApprovalRequest, ctx context.Context) chan out {
			ch := make(chan out, 1)
			go func() {
				d, err := a.Approve(ctx, req)
				ch <- out{d, err}
			}()
			return ch
		}
		ctx := context.Background()
		yes := wait(request("1", time.Hour), ctx)
		no := wait(request("2", time.Hour), ctx)
		late := wait(request("3", time.Minute), ctx)
		cctx, cancel := context.WithCancel(ctx)
		gone := wait(request("4", time.Hour), cctx)
		synctest.Wait()
		if got := len(a.Pending()); got != 4 {
			t.Fatalf("%d pending, want 4", got)
		}
		if err := a.Decide("1", "d-other", wield.Decision{Approved: true}); err == nil {
			t.Error("a decision with another digest was accepted")
		}
		if err := a.Decide("1", "d-1", wield.Decision{Approved: true, By: "ann"}); err != nil {
			t.Error(err)
		}
		if err := a.Decide("1", "d-1", wield.Decision{Approved: false}); !errors.Is(err, memstore.ErrDecided) {
			t.Errorf("second decision: %v, want ErrDecided", err)
		}
		if err := a.Decide("2", "", wield.Decision{Reason: "no"}); err != nil {
			t.Error(err)
		}
		if got := <-yes; !got.d.Approved || got.d.By != "ann" || got.err != nil {
			t.Errorf("approved: %+v", got)
		}
		if got := <-no; got.d.Approved || got.d.Reason != "no" || got.err != nil {
			t.Errorf("denied: %+v", got)
		}
		time.Sleep(2 * time.Minute)
		if got := <-late; !errors.Is(got.err, context.DeadlineExceeded) {
			t.Errorf("expired: %+v", got)
		}
		if err := a.Decide("3", "", wield.Decision{Approved: true}); !errors.Is(err, memstore.ErrDecided) {
			t.Errorf("decision after expiry: %v, want ErrDecided", err)
		}
		cancel()
		if got := <-gone; !errors.Is(got.err, context.Canceled) {
			t.Errorf("withdrawn: %+v", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff([]string{"1", "2", "3", "4"}, sorted(notified)); diff != "" {
			t.Errorf("notified (-want +got)\n%s", diff)
		}
		if got := len(a.Pending()); got != 0 {
			t.Errorf("%d still pending", got)
		}
	})
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestOneWinner has many people decide one approval at once: exactly one
// decision wins.
func TestOneWinner(t *testing.T) {
	a := memstore.NewApprovals(nil)
	req := request("x", time.Hour)
	got := make(chan wield.Decision, 1)
	go func() {
		d, _ := a.Approve(context.Background(), req)
		got <- d
	}()
	for i := 0; len(a.Pending()) == 0; i++ {
		if i == 5000 {
			t.Fatal("the request never became pending")
		}
		time.Sleep(time.Millisecond)
	}
	var wins sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	for i := range 50 {
		wins.Add(1)
		go func() {
			defer wins.Done()
			if a.Decide("x", "d-x", wield.Decision{Approved: i%2 == 0, By: string(rune('a' + i%26))}) == nil {
				mu.Lock()
				winners++
				mu.Unlock()
			}
		}()
	}
	wins.Wait()
	if winners != 1 {
		t.Errorf("%d decisions won, want 1", winners)
	}
	<-got
}
