package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// fullIDs are the IDs of fullRecords.
var fullIDs = [2]string{wield.NewIDAt(t0), wield.NewIDAt(t0.Add(time.Second))}

// fullRecords are records with every field set: a successful call whose
// output was cut, and a call whose arguments were not even JSON. Each call
// returns new ones, alike.
func fullRecords() []*wield.Record {
	okID, badID := fullIDs[0], fullIDs[1]
	ok := &wield.Record{
		Call: &wield.Call{
			ID:        okID,
			Tool:      "fetch",
			Arguments: json.RawMessage(`{ "url": "https://example.com",  "limit": "5", "token": "[redacted]" }`),
			Caller: wield.Caller{
				ID: "agent-7", Type: wield.CallerConversationAgent, ConversationID: "conv-1",
				WorkflowID: "wf-1", UserID: "user-1",
				Variables: map[string]any{"lang": "en", "n": 3.5, "deep": map[string]any{"list": []any{true, nil, "x"}}},
			},
			Timeout:        7 * time.Second,
			Priority:       3,
			IdempotencyKey: "pay-123",
			ApprovalID:     "appr-9",
		},
		ToolVersion: "1.4.2",
		Category:    wield.CategoryHTTP,
		Arguments:   json.RawMessage(`{"limit":5,"token":"[redacted]","url":"https://example.com"}`),
		Digest:      "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Result: &wield.Result{
			CallID:     okID,
			Tool:       "fetch",
			OK:         true,
			Output:     json.RawMessage(`"<html>… [cut] …</html>"`),
			FullOutput: json.RawMessage(`"<html>the whole page, ünïcödé and \"quotes\"</html>"`),
			Attempts:   2,
			StartedAt:  t0.Add(1500 * time.Microsecond),
			FinishedAt: t0.Add(250*time.Millisecond + 999),
			Duration:   250*time.Millisecond + 123,
			QueueWait:  1500*time.Microsecond + 7,
			Metadata:   map[string]any{"truncated": true, "original_bytes": 70000.0, "note": "x"},
		},
		QueuedAt: t0,
	}
	bad := &wield.Record{
		Call: &wield.Call{
			ID:        badID,
			Tool:      "calc",
			Arguments: json.RawMessage(`{"expr": "1+`),
			Caller:    wield.Caller{ID: "node-2", Type: wield.CallerWorkflowNode, WorkflowID: "wf-1"},
		},
		ToolVersion: "0.1.0",
		Category:    wield.CategoryData,
		Result: &wield.Result{
			CallID:    badID,
			Tool:      "calc",
			OK:        false,
			Error:     "invalid arguments for tool 'calc': expr: expected a string",
			ErrorType: wield.ErrValidation,
			ValidationErrors: []wield.ValidationError{
				{Path: "", Message: "unexpected end of JSON input"},
				{Path: "expr", Message: "expected a string"},
			},
			StartedAt:  t0.Add(time.Second),
			FinishedAt: t0.Add(time.Second + 40*time.Microsecond),
			Duration:   40 * time.Microsecond,
		},
		QueuedAt: t0.Add(time.Second),
	}
	return []*wield.Record{ok, bad}
}

func testRoundTrip(t *testing.T, e *env) {
	recs := fullRecords()
	for _, r := range recs {
		if err := e.s.Save(t.Context(), r); err != nil {
			t.Fatalf("Save: %v", err)
		}
	}
	e.flush(t)
	for _, want := range fullRecords() {
		got, err := e.s.Call(t.Context(), want.Call.ID)
		if err != nil {
			t.Fatalf("Call(%s): %v", want.Call.ID, err)
		}
		if diff := cmp.Diff(want, got, cmpOpts); diff != "" {
			t.Errorf("Call(%s) after Save (-want +got)\n%s", want.Call.ID, diff)
		}
		if string(got.Output()) != string(want.Output()) {
			t.Errorf("Call(%s).Output() = %s, want the full output %s", want.Call.ID, got.Output(), want.Output())
		}
	}
	// Records come back alike from every query.
	page, err := e.s.Calls(t.Context(), wield.CallQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := fullRecords()
	if diff := cmp.Diff([]*wield.Record{want[1], want[0]}, page.Records, cmpOpts); diff != "" {
		t.Errorf("Calls() (-want +got)\n%s", diff)
	}
	if page.Next != "" {
		t.Errorf("Calls().Next = %q, want none", page.Next)
	}
}

// testSavedRecordIsACopy changes a record after Save: the store keeps what
// was saved (a buffering store must copy).
func testSavedRecordIsACopy(t *testing.T, e *env) {
	r := fullRecords()[0]
	if err := e.s.Save(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	r.Call.Arguments[2] = 'X'
	r.Arguments[2] = 'X'
	r.Result.Output[1] = 'X'
	r.Result.FullOutput[1] = 'X'
	r.Result.Metadata["note"] = "changed"
	r.Call.Caller.Variables["lang"] = "changed"
	e.flush(t)
	got, err := e.s.Call(t.Context(), r.Call.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fullRecords()[0], got, cmpOpts); diff != "" {
		t.Errorf("record changed after Save (-want +got)\n%s", diff)
	}
}

func testNotFound(t *testing.T, e *env) {
	_, err := e.s.Call(t.Context(), wield.NewID())
	mustErr(t, "Call of an unknown id", err, wield.ErrNotFound)
	page, err := e.s.Calls(t.Context(), wield.CallQuery{ConversationID: "nobody"})
	if err != nil || len(page.Records) != 0 || page.Next != "" {
		t.Errorf("Calls of an unknown conversation = %+v, %v; want an empty page", page, err)
	}
	r, err := e.s.Replay(t.Context(), "fetch", "no-such-key")
	if r != nil || err != nil {
		t.Errorf("Replay of an unknown key = %v, %v; want nil, nil", r, err)
	}
}

// testDuplicateID saves a second record under a taken ID, among others: it
// never replaces the first, and the others are kept. (A store that writes
// in the background reports the refusal to its log and its Close.)
func testDuplicateID(t *testing.T, e *env) {
	e.closeMayFail = true
	first := rec("a", "c", true, t0)
	if err := e.s.Save(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	e.flush(t)
	second := rec("b", "c", false, t0)
	second.Call.ID, second.Result.CallID = first.Call.ID, first.Call.ID
	var others []*wield.Record
	for i := range 20 {
		others = append(others, rec("c", "c", true, t0.Add(time.Duration(i+1)*time.Second)))
	}
	var wg sync.WaitGroup
	dupErr := make(chan error, 1)
	wg.Go(func() { dupErr <- e.s.Save(context.Background(), second) })
	for _, r := range others {
		wg.Go(func() {
			if err := e.s.Save(context.Background(), r); err != nil {
				t.Errorf("Save %s: %v", r.Call.ID, err)
			}
		})
	}
	wg.Wait()
	t.Logf("second Save of one id: %v", <-dupErr)
	e.flush(t)
	got, err := e.s.Call(t.Context(), first.Call.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec("a", "c", true, t0).Result.Output, got.Result.Output); diff != "" || got.Call.Tool != "a" {
		t.Errorf("the first record was replaced: tool %q (-want +got output)\n%s", got.Call.Tool, diff)
	}
	for _, r := range others {
		if _, err := e.s.Call(t.Context(), r.Call.ID); err != nil {
			t.Errorf("a record saved beside a duplicate: %v", err)
		}
	}
}

// seed saves n records that vary in every filtered field, a minute apart.
func seed(t *testing.T, e *env, n int) []*wield.Record {
	tools := []string{"fetch", "calc", "echo", "read_file"}
	var recs []*wield.Record
	for i := range n {
		r := rec(tools[i%4], fmt.Sprintf("conv-%d", i%3), i%5 != 3, t0.Add(time.Duration(i)*time.Minute))
		r.Call.Caller.ID = fmt.Sprintf("agent-%d", i%2)
		if i%4 == 1 {
			r.Call.Caller.WorkflowID = "wf-1"
		}
		if i%3 == 0 {
			r.Call.Caller.UserID = "ann"
		} else if i%7 == 0 {
			r.Call.Caller.UserID = "bob"
		}
		recs = append(recs, r)
	}
	e.saveAll(t, recs, 4)
	return recs
}

func testFilters(t *testing.T, e *env) {
	recs := seed(t, e, 90)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	tests := []struct {
		q    wield.CallQuery
		keep func(*wield.Record) bool
	}{
		{wield.CallQuery{}, func(*wield.Record) bool { return true }},
		{wield.CallQuery{ConversationID: "conv-1"}, func(r *wield.Record) bool { return r.Call.Caller.ConversationID == "conv-1" }},
		{wield.CallQuery{Tool: "calc"}, func(r *wield.Record) bool { return r.Call.Tool == "calc" }},
		{wield.CallQuery{CallerID: "agent-1"}, func(r *wield.Record) bool { return r.Call.Caller.ID == "agent-1" }},
		{wield.CallQuery{WorkflowID: "wf-1"}, func(r *wield.Record) bool { return r.Call.Caller.WorkflowID == "wf-1" }},
		{wield.CallQuery{UserID: "bob"}, func(r *wield.Record) bool { return r.Call.Caller.UserID == "bob" }},
		{wield.CallQuery{Status: "ok"}, func(r *wield.Record) bool { return r.Result.OK }},
		{wield.CallQuery{Status: "error"}, func(r *wield.Record) bool { return !r.Result.OK }},
		{wield.CallQuery{Since: at(30)}, func(r *wield.Record) bool { return !r.QueuedAt.Before(at(30)) }},
		{wield.CallQuery{Until: at(30)}, func(r *wield.Record) bool { return r.QueuedAt.Before(at(30)) }},
		{wield.CallQuery{Since: at(10), Until: at(20)}, func(r *wield.Record) bool {
			return !r.QueuedAt.Before(at(10)) && r.QueuedAt.Before(at(20))
		}},
		{wield.CallQuery{ConversationID: "conv-2", Tool: "echo", Status: "ok", Since: at(5), Until: at(80)}, func(r *wield.Record) bool {
			return r.Call.Caller.ConversationID == "conv-2" && r.Call.Tool == "echo" && r.Result.OK &&
				!r.QueuedAt.Before(at(5)) && r.QueuedAt.Before(at(80))
		}},
		{wield.CallQuery{UserID: "ann", CallerID: "agent-0", Status: "error"}, func(r *wield.Record) bool {
			return r.Call.Caller.UserID == "ann" && r.Call.Caller.ID == "agent-0" && !r.Result.OK
		}},
		{wield.CallQuery{Tool: "nothing"}, func(*wield.Record) bool { return false }},
	}
	for _, tt := range tests {
		want := newestFirst(recs, tt.keep)
		if len(want) > 100 {
			t.Fatalf("%+v: the test wants more than one page", tt.q)
		}
		page, err := e.s.Calls(t.Context(), tt.q)
		if err != nil {
			t.Fatalf("Calls(%+v): %v", tt.q, err)
		}
		if diff := cmp.Diff(want, ids(page.Records), cmpOpts); diff != "" {
			t.Errorf("Calls(%+v) (-want +got)\n%s", tt.q, diff)
		}
		if page.Next != "" {
			t.Errorf("Calls(%+v).Next = %q on the only page", tt.q, page.Next)
		}
		// The same, three at a time.
		q := tt.q
		q.Limit = 3
		if diff := cmp.Diff(want, allIDs(t, e.s, q), cmpOpts); diff != "" {
			t.Errorf("Calls(%+v), all pages (-want +got)\n%s", q, diff)
		}
	}
	if _, err := e.s.Calls(t.Context(), wield.CallQuery{Status: "maybe"}); err == nil {
		t.Error("Calls with status maybe: no error")
	}
}

func testPaging(t *testing.T, e *env) {
	const n = 1100
	var recs []*wield.Record
	for i := range n {
		recs = append(recs, rec("echo", fmt.Sprintf("conv-%d", i%2), true, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	e.saveAll(t, recs, 16)
	all := newestFirst(recs, func(*wield.Record) bool { return true })
	for _, limit := range []int{0, 37, 100, 250, 1000, 5000} {
		got := allIDs(t, e.s, wield.CallQuery{Limit: limit})
		if diff := cmp.Diff(all, got); diff != "" {
			t.Errorf("all pages of %d (-want +got)\n%s", limit, diff)
		}
	}
	for _, tt := range []struct{ limit, want int }{{0, 100}, {-5, 100}, {1000, 1000}, {5000, 1000}, {2000, 1000}} {
		p, err := e.s.Calls(t.Context(), wield.CallQuery{Limit: tt.limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Records) != tt.want || p.Next != all[tt.want-1] {
			t.Errorf("Calls(Limit %d): %d records, next %q; want %d, %q", tt.limit, len(p.Records), p.Next, tt.want, all[tt.want-1])
		}
	}
	// A page that ends exactly at the last record has no next page.
	p, err := e.s.Calls(t.Context(), wield.CallQuery{Limit: 100, Cursor: all[n-101]})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all[n-100:], ids(p.Records)); diff != "" || p.Next != "" {
		t.Errorf("last page: next %q (-want +got)\n%s", p.Next, diff)
	}
	conv := newestFirst(recs, func(r *wield.Record) bool { return r.Call.Caller.ConversationID == "conv-1" })
	if diff := cmp.Diff(conv, allIDs(t, e.s, wield.CallQuery{ConversationID: "conv-1", Limit: 64})); diff != "" {
		t.Errorf("pages of one conversation (-want +got)\n%s", diff)
	}
}

func testSummary(t *testing.T, e *env) {
	var recs []*wield.Record
	add := func(tool, conv string, ok bool) {
		recs = append(recs, rec(tool, conv, ok, t0.Add(time.Duration(len(recs))*time.Second)))
	}
	for range 3 {
		add("http_request", "c1", true)
	}
	add("calculator", "c1", true)
	add("calculator", "c1", false)
	add("echo", "c2", true)
	add("echo", "c2", true)
	add("echo", "c2", false)
	add("echo", "c3", true)
	add("echo", "", true)
	e.saveAll(t, recs, 3)

	tests := []wield.Summary{
		{ConversationID: "c1", TotalCalls: 5, SuccessfulCalls: 4, FailedCalls: 1, SuccessRate: 80,
			ToolUsage: map[string]int{"http_request": 3, "calculator": 2}, HasErrors: true},
		{ConversationID: "c2", TotalCalls: 3, SuccessfulCalls: 2, FailedCalls: 1, SuccessRate: 100 * 2.0 / 3,
			ToolUsage: map[string]int{"echo": 3}, HasErrors: true},
		{ConversationID: "c3", TotalCalls: 1, SuccessfulCalls: 1, SuccessRate: 100,
			ToolUsage: map[string]int{"echo": 1}},
		{ConversationID: "none", ToolUsage: map[string]int{}},
	}
	for _, want := range tests {
		got, err := e.s.Summary(t.Context(), want.ConversationID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmpOpts); diff != "" {
			t.Errorf("Summary(%s) (-want +got)\n%s", want.ConversationID, diff)
		}
		if got.ToolUsage == nil {
			t.Errorf("Summary(%s).ToolUsage is nil; want an empty map (JSON {})", want.ConversationID)
		}
	}
	got, err := e.s.Summary(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	wantBrief := wield.BriefSummary{TotalCalls: 5, SuccessRate: 80, ToolUsage: map[string]int{"http_request": 3, "calculator": 2}, HasErrors: true}
	if diff := cmp.Diff(wantBrief, got.Brief()); diff != "" {
		t.Errorf("Brief (-want +got)\n%s", diff)
	}
	b, _ := json.Marshal(got.Brief())
	if want := `{"total_calls":5,"success_rate":80,"tool_usage":{"calculator":2,"http_request":3},"has_errors":true}`; string(b) != want {
		t.Errorf("Brief as JSON = %s, want %s", b, want)
	}
}
