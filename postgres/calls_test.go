package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/postgres"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// record is a finished call queued at t0 plus at.
func record(tool, conv string, ok bool, at, took time.Duration) *wield.Record {
	id := wield.NewIDAt(t0.Add(at))
	r := &wield.Record{
		Call: &wield.Call{ID: id, Tool: tool, Arguments: json.RawMessage(`{"x": 1}`),
			Caller: wield.Caller{ID: "agent", Type: wield.CallerConversationAgent, ConversationID: conv}},
		Arguments: json.RawMessage(`{"x":1}`),
		QueuedAt:  t0.Add(at),
		Result: &wield.Result{CallID: id, Tool: tool, OK: ok, Output: json.RawMessage(`"out"`), Attempts: 1,
			StartedAt: t0.Add(at), FinishedAt: t0.Add(at + took), Duration: took},
	}
	if !ok {
		r.Result.Output = nil
		r.Result.Error, r.Result.ErrorType = "it broke", wield.ErrExecution
	}
	return r
}

func save(t *testing.T, s wield.Store, recs ...*wield.Record) {
	t.Helper()
	for _, r := range recs {
		if err := s.Save(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	s := postgres.OpenTest(t, nil)
	ctx := context.Background()
	full := record("fetch", "c1", true, time.Second, 3*time.Millisecond)
	full.ToolVersion, full.Category, full.Digest = "1.2.0", wield.CategoryHTTP, "abc"
	full.Call.Caller = wield.Caller{ID: "n1", Type: wield.CallerWorkflowNode, ConversationID: "c1", WorkflowID: "w", UserID: "u",
		Variables: map[string]any{"lang": "fr"}}
	full.Call.Timeout, full.Call.Priority, full.Call.IdempotencyKey, full.Call.ApprovalID = time.Minute, 3, "k1", "ap1"
	full.Call.Arguments = json.RawMessage(`{not json`)
	full.Result.Output = json.RawMessage(`"cut"`)
	full.Result.FullOutput = json.RawMessage(`"cut and the rest"`)
	full.Result.QueueWait = 5 * time.Microsecond
	full.Result.Metadata = map[string]any{"truncated": true, "original_bytes": float64(17)}
	failed := record("calc", "", false, 2*time.Second, time.Millisecond)
	failed.Result.ErrorType = wield.ErrValidation
	failed.Result.ValidationErrors = []wield.ValidationError{{Path: "a", Message: "want a number"}}
	failed.Result.Error = "bad\x00bytes \xff"
	failed.Call.Arguments, failed.Arguments = nil, json.RawMessage{}
	failed.Result.StartedAt, failed.Result.FinishedAt = time.Time{}, time.Time{}
	save(t, s, full, failed)

	got, err := s.Call(ctx, full.Call.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, got); diff != "" {
		t.Errorf("full record (-want +got)\n%s", diff)
	}
	got, err = s.Call(ctx, failed.Call.ID)
	if err != nil {
		t.Fatal(err)
	}
	failed.Result.Error = "bad\uFFFDbytes \uFFFD" // text cannot hold NUL or invalid UTF-8
	if diff := cmp.Diff(failed, got); diff != "" {
		t.Errorf("failed record (-want +got)\n%s", diff)
	}
	if _, err := s.Call(ctx, "nope"); !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("Call(nope) = %v, want ErrNotFound", err)
	}
}

func ids(recs []*wield.Record) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Call.Tool+"/"+r.Call.Caller.ConversationID)
	}
	return out
}

func TestCallsQueries(t *testing.T) {
	t.Parallel()
	s := postgres.OpenTest(t, nil)
	ctx := context.Background()
	save(t, s,
		record("a", "c1", true, 0, time.Millisecond),
		record("b", "c1", false, time.Minute, time.Millisecond),
		record("a", "c2", true, 2*time.Minute, time.Millisecond),
		record("a", "c1", true, 3*time.Minute, time.Millisecond),
	)
	tests := []struct {
		q    wield.CallQuery
		want []string
	}{
		{wield.CallQuery{}, []string{"a/c1", "a/c2", "b/c1", "a/c1"}},
		{wield.CallQuery{ConversationID: "c1"}, []string{"a/c1", "b/c1", "a/c1"}},
		{wield.CallQuery{Tool: "a", ConversationID: "c1"}, []string{"a/c1", "a/c1"}},
		{wield.CallQuery{Status: "error"}, []string{"b/c1"}},
		{wield.CallQuery{Status: "ok", Since: t0.Add(time.Minute)}, []string{"a/c1", "a/c2"}},
		{wield.CallQuery{Since: t0.Add(time.Minute), Until: t0.Add(2 * time.Minute)}, []string{"b/c1"}},
		{wield.CallQuery{CallerID: "agent", Limit: 2}, []string{"a/c1", "a/c2"}},
		{wield.CallQuery{CallerID: "other"}, []string{}},
	}
	for _, tt := range tests {
		page, err := s.Calls(ctx, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, ids(page.Records)); diff != "" {
			t.Errorf("%+v (-want +got)\n%s", tt.q, diff)
		}
	}
	// Paging: each page continues where the last stopped, and the last has
	// no cursor.
	var all []string
	q := wield.CallQuery{Limit: 3}
	for i := 0; ; i++ {
		page, err := s.Calls(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ids(page.Records)...)
		if page.Next == "" {
			break
		}
		if i > 3 {
			t.Fatal("paging does not end")
		}
		q.Cursor = page.Next
	}
	if diff := cmp.Diff([]string{"a/c1", "a/c2", "b/c1", "a/c1"}, all); diff != "" {
		t.Errorf("pages (-want +got)\n%s", diff)
	}
	if _, err := s.Calls(ctx, wield.CallQuery{Status: "maybe"}); err == nil {
		t.Error("an unknown status was accepted")
	}
}

func TestSummaryAndStatistics(t *testing.T) {
	t.Parallel()
	s := postgres.OpenTest(t, nil)
	ctx := context.Background()
	var recs []*wield.Record
	for i := 1; i <= 20; i++ {
		r := record("a", "c1", i%5 != 0, time.Duration(i)*time.Second, time.Duration(i)*time.Millisecond)
		r.Category = wield.CategoryData
		recs = append(recs, r)
	}
	recs = append(recs, record("b", "c2", true, time.Hour, time.Second))
	save(t, s, recs...)

	sum, err := s.Summary(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := wield.Summary{ConversationID: "c1", TotalCalls: 20, SuccessfulCalls: 16, FailedCalls: 4, SuccessRate: 80,
		ToolUsage: map[string]int{"a": 20}, HasErrors: true}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got)\n%s", diff)
	}
	sum, err = s.Summary(ctx, "none")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wield.Summary{ConversationID: "none", ToolUsage: map[string]int{}}, sum); diff != "" {
		t.Errorf("empty summary (-want +got)\n%s", diff)
	}

	st, err := s.Statistics(ctx, wield.StatsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	a := wield.LatencyStats{Count: 20, Failures: 4, SuccessRate: 80, P50: 10 * time.Millisecond, P95: 19 * time.Millisecond, Max: 20 * time.Millisecond}
	wantSt := wield.Statistics{
		Overall:    wield.LatencyStats{Count: 21, Failures: 4, SuccessRate: 100 * 17.0 / 21, P50: 11 * time.Millisecond, P95: 20 * time.Millisecond, Max: time.Second},
		Tools:      map[string]wield.LatencyStats{"a": a, "b": {Count: 1, SuccessRate: 100, P50: time.Second, P95: time.Second, Max: time.Second}},
		Categories: map[wield.Category]wield.LatencyStats{wield.CategoryData: a, "": {Count: 1, SuccessRate: 100, P50: time.Second, P95: time.Second, Max: time.Second}},
	}
	if diff := cmp.Diff(wantSt, st); diff != "" {
		t.Errorf("statistics (-want +got)\n%s", diff)
	}
	st, err = s.Statistics(ctx, wield.StatsQuery{ConversationID: "c2", Since: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if st.Overall.Count != 1 || len(st.Tools) != 1 || len(st.Categories) != 1 {
		t.Errorf("statistics of c2: %+v", st)
	}
	st, err = s.Statistics(ctx, wield.StatsQuery{Until: t0})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wield.Statistics{Tools: map[string]wield.LatencyStats{}, Categories: map[wield.Category]wield.LatencyStats{}}, st); diff != "" {
		t.Errorf("statistics of nothing (-want +got)\n%s", diff)
	}
}

func TestReplay(t *testing.T) {
	t.Parallel()
	s := postgres.OpenTest(t, nil)
	ctx := context.Background()
	failed := record("pay", "c", false, 0, time.Millisecond)
	first := record("pay", "c", true, time.Second, time.Millisecond)
	again := record("pay", "c", true, 2*time.Second, time.Millisecond)
	other := record("refund", "c", true, 3*time.Second, time.Millisecond)
	for _, r := range []*wield.Record{failed, first, again, other} {
		r.Call.IdempotencyKey = "k"
	}
	save(t, s, failed, first, again, other)
	got, err := s.Replay(ctx, "pay", "k")
	if err != nil || got == nil || got.Call.ID != first.Call.ID {
		t.Fatalf("Replay = %v, %v; want the first successful call", got, err)
	}
	for _, q := range [][2]string{{"pay", "other"}, {"pay", ""}, {"nope", "k"}} {
		if got, err := s.Replay(ctx, q[0], q[1]); got != nil || err != nil {
			t.Errorf("Replay(%q, %q) = %v, %v; want nil, nil", q[0], q[1], got, err)
		}
	}
}

func TestDuplicateID(t *testing.T) {
	t.Parallel()
	s := postgres.OpenTest(t, nil)
	ctx := context.Background()
	r := record("a", "c", true, 0, time.Millisecond)
	save(t, s, r)
	// Many saves at once share batches: the duplicate is refused alone.
	var wg sync.WaitGroup
	errs := make([]error, 32)
	for i := range errs {
		wg.Go(func() {
			rec := record("a", "c", true, time.Duration(i+1)*time.Second, time.Millisecond)
			if i == 7 {
				rec = r
			}
			errs[i] = s.Save(ctx, rec)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 7) != errors.Is(err, postgres.ErrDuplicateID) {
			t.Errorf("save %d: %v", i, err)
		}
	}
	page, err := s.Calls(ctx, wield.CallQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 32 {
		t.Errorf("%d records, want 32", len(page.Records))
	}
	if err := s.Save(ctx, &wield.Record{Call: &wield.Call{Tool: "a"}, Result: &wield.Result{}}); err == nil {
		t.Error("a record without a call ID was saved")
	}
}

func TestAsyncCloseWritesAll(t *testing.T) {
	t.Parallel()
	schema := postgres.FreshSchema(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, postgres.ServerDSN(), &postgres.Options{Schema: schema, Async: true, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	for i := range n {
		r := record("a", fmt.Sprint("c", i%10), true, time.Duration(i)*time.Millisecond, time.Millisecond)
		if err := s.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
		r.Result.OK = false // the store kept its own copy
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, record("a", "c", true, 0, 0)); !errors.Is(err, wield.ErrClosed) {
		t.Errorf("Save after Close = %v, want ErrClosed", err)
	}
	s = postgres.OpenSchema(t, &postgres.Options{Schema: schema})
	st, err := s.Statistics(ctx, wield.StatsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Overall.Count != n || st.Overall.Failures != 0 {
		t.Errorf("after Close: %d records, %d failed; want %d, 0", st.Overall.Count, st.Overall.Failures, n)
	}
}
