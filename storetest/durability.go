package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// testConcurrentSaves saves from 64 goroutines at once; every record is
// found.
func testConcurrentSaves(t *testing.T, e *env) {
	const goroutines, each = 64, 50
	var wg sync.WaitGroup
	saved := make([][]*wield.Record, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r := rec("echo", fmt.Sprintf("conv-%d", g), i%10 != 0, time.Now())
				if err := e.s.Save(context.Background(), r); err != nil {
					t.Errorf("Save: %v", err)
					return
				}
				saved[g] = append(saved[g], r)
			}
		})
	}
	wg.Wait()
	e.flush(t)
	var all []*wield.Record
	for g, recs := range saved {
		all = append(all, recs...)
		sum, err := e.s.Summary(t.Context(), fmt.Sprintf("conv-%d", g))
		if err != nil {
			t.Fatal(err)
		}
		if sum.TotalCalls != each || sum.FailedCalls != each/10 {
			t.Errorf("conversation %d: %d calls, %d failed; want %d, %d", g, sum.TotalCalls, sum.FailedCalls, each, each/10)
		}
	}
	want := newestFirst(all, func(*wield.Record) bool { return true })
	if diff := cmp.Diff(want, allIDs(t, e.s, wield.CallQuery{Limit: 1000})); diff != "" {
		t.Errorf("records after concurrent saves (-want +got)\n%s", diff)
	}
}

// testCloseFlushes closes a store right after saving: every record whose
// Save returned is there after reopening, and so are pending approvals.
func testCloseFlushes(t *testing.T, e *env) {
	if e.h.Reopen == nil {
		t.Skip("the harness cannot reopen a store")
	}
	var recs []*wield.Record
	for i := range 500 {
		recs = append(recs, rec("echo", "conv", true, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < len(recs); i += 16 {
				if err := e.s.Save(context.Background(), recs[i]); err != nil {
					t.Errorf("Save: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if err := e.s.CreateApproval(t.Context(), request("p", time.Now(), time.Now().Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	old := e.s
	e.s = e.h.Reopen(t, old)
	err := old.Save(t.Context(), rec("echo", "conv", true, time.Now()))
	mustErr(t, "Save after Close", err, wield.ErrClosed)

	want := newestFirst(recs, func(*wield.Record) bool { return true })
	if diff := cmp.Diff(want, allIDs(t, e.s, wield.CallQuery{Limit: 1000})); diff != "" {
		t.Errorf("records after reopening (-want +got)\n%s", diff)
	}
	got, err := e.s.Approval(t.Context(), "p")
	if err != nil || got.Status != wield.ApprovalPending {
		t.Errorf("pending approval after reopening: %+v, %v", got, err)
	}
}
