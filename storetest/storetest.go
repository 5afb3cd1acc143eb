// Package storetest is the one suite that every [wield.Storage] passes: the
// SQLite and PostgreSQL stores run it alike, so that wield behaves the same
// on either.
//
//	func TestStoretest(t *testing.T) {
//		storetest.Run(t, storetest.Harness{
//			Open: func(t *testing.T) wield.Storage {
//				s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "wield.db"), nil)
//				if err != nil {
//					t.Fatal(err)
//				}
//				return s
//			},
//			Reopen: ..., // closes a store and opens the same database again
//		})
//	}
//
// # What it pins down
//
// Records round-trip every field: raw arguments byte for byte (valid JSON
// or not), coerced arguments, output and full output byte for byte, times
// to the microsecond, durations to the nanosecond, metadata and caller
// variables as JSON decodes them (numbers come back as float64). Pages are
// newest first by ID, 100 records by default and 1,000 at most, and the
// cursor is the last ID of a page. Success rates are unrounded percentages
// (100·ok/total, 0 for no calls); p50 and p95 are nearest-rank: the value at
// rank ceil(p·n) of the n sorted durations. Replay returns the first
// successful call of a tool with a key. Calls of tools without a category
// count under the empty category. A store that claims approvals
// ([wield.ApprovalClaimer]) lets each decision be acted on once: an approved
// call runs once, a refused one is recorded once; UnclaimedApprovals lists
// the decisions no run has acted on yet.
//
// A store that buffers records (async mode) is flushed by the suite before
// it reads them, when it has a method Flush(context.Context) error.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wieldhq/wield"
)

// Harness opens the stores under test.
type Harness struct {
	// Open returns a new, empty store. The suite closes it.
	Open func(t *testing.T) wield.Storage
	// Reopen closes s and opens the same database again, as a restarted
	// process would. The tests that need it are skipped when it is nil.
	Reopen func(t *testing.T, s wield.Storage) wield.Storage
}

// Run runs the suite, one subtest per behaviour, each on a fresh store.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"RoundTrip", testRoundTrip},
		{"SavedRecordIsACopy", testSavedRecordIsACopy},
		{"NotFound", testNotFound},
		{"DuplicateID", testDuplicateID},
		{"Filters", testFilters},
		{"Paging", testPaging},
		{"Summary", testSummary},
		{"Statistics", testStatistics},
		{"Replay", testReplay},
		{"Approvals", testApprovals},
		{"ApprovalExpiry", testApprovalExpiry},
		{"ApprovalOneWinner", testApprovalOneWinner},
		{"ApprovalClaim", testApprovalClaim},
		{"ApprovalBacklog", testApprovalBacklog},
		{"Artifacts", testArtifacts},
		{"ArtifactOneWinner", testArtifactOneWinner},
		{"ArtifactOwners", testArtifactOwners},
		{"CallIDs", testCallIDs},
		{"CallLeases", testCallLeases},
		{"ConcurrentSaves", testConcurrentSaves},
		{"CloseFlushes", testCloseFlushes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{h: h, s: h.Open(t)}
			t.Cleanup(func() {
				if err := e.s.Close(context.Background()); err != nil && !e.closeMayFail {
					t.Errorf("Close: %v", err)
				}
			})
			tt.run(t, e)
		})
	}
}

// env is one subtest's store.
type env struct {
	h Harness
	s wield.Storage
	// closeMayFail is set by tests whose records a buffering store refuses
	// after Save returned, which its Close then reports.
	closeMayFail bool
}

// flush waits for buffered records, when the store buffers them.
func (e *env) flush(t *testing.T) {
	t.Helper()
	if f, ok := e.s.(interface{ Flush(context.Context) error }); ok {
		if err := f.Flush(t.Context()); err != nil {
			t.Fatalf("Flush: %v", err)
		}
	}
}

// saveAll saves the records from workers goroutines and flushes.
func (e *env) saveAll(t *testing.T, recs []*wield.Record, workers int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(recs))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(recs); i += workers {
				if err := e.s.Save(context.Background(), recs[i]); err != nil {
					errs <- fmt.Errorf("Save %s: %w", recs[i].Call.ID, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	e.flush(t)
}

// cmpOpts compare what a store gives back with what was saved: times to
// the microsecond (PostgreSQL keeps no more), nil and empty alike.
var cmpOpts = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool {
		d := a.Sub(b)
		return d < time.Microsecond && d > -time.Microsecond
	}),
	cmpopts.EquateEmpty(),
}

// t0 is the suite's epoch: nanoseconds set, to see them cut to microseconds.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.UTC)

// rec is a plain record: a successful call of tool by agent-1 in conv at.
func rec(tool, conv string, ok bool, at time.Time) *wield.Record {
	id := wield.NewIDAt(at)
	r := &wield.Record{
		Call: &wield.Call{
			ID: id, Tool: tool, Arguments: json.RawMessage(`{"q":"x"}`),
			Caller: wield.Caller{ID: "agent-1", Type: wield.CallerConversationAgent, ConversationID: conv},
		},
		Arguments: json.RawMessage(`{"q":"x"}`),
		Result: &wield.Result{
			CallID: id, Tool: tool, OK: ok, Attempts: 1,
			StartedAt: at.Add(time.Millisecond), FinishedAt: at.Add(5 * time.Millisecond),
			Duration: 5 * time.Millisecond,
		},
		QueuedAt: at,
	}
	if ok {
		r.Result.Output = json.RawMessage(`{"answer":42}`)
	} else {
		r.Result.Error = "it broke"
		r.Result.ErrorType = wield.ErrExecution
	}
	return r
}

// ids lists the records' call IDs.
func ids(recs []*wield.Record) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.Call.ID)
	}
	return out
}

// newestFirst returns the IDs of recs that keep says to, newest first.
func newestFirst(recs []*wield.Record, keep func(*wield.Record) bool) []string {
	var out []string
	for _, r := range recs {
		if keep(r) {
			out = append(out, r.Call.ID)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// allIDs pages through every record of q, checking that pages are full
// but the last, and returns their IDs in order.
func allIDs(t *testing.T, s wield.Storage, q wield.CallQuery) []string {
	t.Helper()
	var out []string
	for page := 0; ; page++ {
		if page > 10_000 {
			t.Fatal("paging does not end")
		}
		p, err := s.Calls(t.Context(), q)
		if err != nil {
			t.Fatalf("Calls(%+v): %v", q, err)
		}
		out = append(out, ids(p.Records)...)
		if p.Next == "" {
			return out
		}
		if want := pageSize(q.Limit); len(p.Records) != want {
			t.Fatalf("Calls(%+v): a page of %d records with a next page, want %d", q, len(p.Records), want)
		}
		if last := p.Records[len(p.Records)-1].Call.ID; p.Next != last {
			t.Fatalf("Calls(%+v): next cursor %q, want the last id %q", q, p.Next, last)
		}
		q.Cursor = p.Next
	}
}

func pageSize(limit int) int {
	switch {
	case limit <= 0:
		return 100
	case limit > 1000:
		return 1000
	}
	return limit
}

// mustErr checks that err wraps want.
func mustErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want one wrapping %v", what, err, want)
	}
}

// race runs f(0) … f(n-1) on n goroutines let go at once, and returns
// their errors by i.
func race(n int, f func(i int) error) []error {
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// oneWinner checks the errors of racers after an atomic claim: exactly one
// nil, every other one wrapping lost. It returns the winner's index.
func oneWinner(t *testing.T, errs []error, lost error, who string) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("%s %d and %s %d both won", who, winner, who, i)
		case err == nil:
			winner = i
		case !errors.Is(err, lost):
			t.Errorf("%s %d: %v, want %v", who, i, err, lost)
		}
	}
	if winner < 0 {
		t.Fatalf("no %s won", who)
	}
	return winner
}
