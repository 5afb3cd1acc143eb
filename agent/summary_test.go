package agent_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// A sub-agent's summary reads the same from its history and from the
// records of its calls in the store: one computation, whichever way.
func TestRecordedSummaryEqualsSubAgentSummary(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	_, reg := newEngine(t, nil)
	e := engine.New(reg, &engine.Options{Store: store})
	t.Cleanup(func() { e.Close(context.Background()) })

	a := agent.NewSubAgent(e, agent.SubAgentOptions{ID: "tool_sub_agent_001", ParentID: "conversation_agent_001", ConversationID: "conv_001"})
	other := agent.NewSubAgent(e, agent.SubAgentOptions{ID: "someone_else", ConversationID: "conv_001"})
	for _, c := range []agent.BatchCall{
		{Tool: "echo", Args: args(`{"message":"hello"}`)},
		{Tool: "add", Args: args(`{"a":"x","b":2}`)}, // validation_error
		{Tool: "fail"},       // execution_error
		{Tool: "calculator"}, // tool_not_found
	} {
		if _, err := a.Execute(ctx, c.Tool, c.Args, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.ExecuteBatch(ctx, []agent.BatchCall{
		{Tool: "echo", Args: args(`{"message":"a"}`)},
		{Tool: "add", Args: args(`{"a":1,"b":2}`)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Execute(ctx, "echo", args(`{"message":"not mine"}`), 0); err != nil {
		t.Fatal(err)
	}

	want := a.Summary()
	got, err := agent.RecordedSummary(ctx, store, agent.SummaryQuery{CallerID: "tool_sub_agent_001"})
	if err != nil {
		t.Fatal(err)
	}
	// The history has a batch's calls in the order they finished, the
	// records in the order they arrived.
	byID := cmpopts.SortSlices(func(x, y agent.CallDetail) bool { return x.CallID < y.CallID })
	if diff := cmp.Diff(want, got, byID); diff != "" {
		t.Errorf("RecordedSummary differs from SubAgent.Summary (-want +got):\n%s", diff)
	}
	if got.TotalCalls != 6 || got.SuccessfulCalls != 3 || got.ParentAgentID != "conversation_agent_001" || got.Truncated {
		t.Errorf("RecordedSummary = %+v, want 6 calls, 3 ok, the parent, not truncated", got)
	}
	if diff := cmp.Diff(want.Brief(), a.Brief()); diff != "" {
		t.Errorf("Brief differs from Summary().Brief() (-want +got):\n%s", diff)
	}

	// The parent is recorded with every call, in the caller's variables.
	page, err := store.Calls(ctx, wield.CallQuery{CallerID: "tool_sub_agent_001"})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range page.Records {
		if p := rec.Call.Caller.Variables[agent.ParentVariable]; p != "conversation_agent_001" {
			t.Errorf("call %s records parent %v", rec.Call.ID, p)
		}
	}

	// Narrowed to a conversation with no calls of the caller, and to the
	// records a filter keeps.
	none, err := agent.RecordedSummary(ctx, store, agent.SummaryQuery{CallerID: "tool_sub_agent_001", ConversationID: "conv_002"})
	if err != nil || none.TotalCalls != 0 || len(none.CallDetails) != 0 || none.ToolUsage == nil {
		t.Errorf("summary of another conversation = %+v, %v, want an empty one", none, err)
	}
	echoes, err := agent.RecordedSummary(ctx, store, agent.SummaryQuery{CallerID: "tool_sub_agent_001",
		Keep: func(r *wield.Record) bool { return r.Call.Tool == "echo" }})
	if err != nil || echoes.TotalCalls != 2 || echoes.SuccessRate != 100 || len(echoes.ToolUsage) != 1 {
		t.Errorf("summary of the echo calls = %+v, %v, want 2 calls, all ok", echoes, err)
	}
}

// pagedReader answers a query with n records of caller "c" (at most the
// page), and a next cursor when it has more.
type pagedReader struct {
	n int
	q wield.CallQuery
}

func (p *pagedReader) Calls(_ context.Context, q wield.CallQuery) (wield.CallPage, error) {
	p.q = q
	var page wield.CallPage
	for i := p.n; i > 0 && len(page.Records) < q.Limit; i-- { // newest first
		id := fmt.Sprintf("%05d", i)
		page.Records = append(page.Records, &wield.Record{
			Call:   &wield.Call{ID: id, Tool: "echo", Caller: wield.ForConversation("c", "")},
			Result: &wield.Result{CallID: id, Tool: "echo", OK: i%2 == 0},
		})
	}
	if p.n > q.Limit {
		page.Next = page.Records[len(page.Records)-1].Call.ID
	}
	return page, nil
}

func (p *pagedReader) Call(context.Context, string) (*wield.Record, error) {
	return nil, wield.ErrNotFound
}

func TestRecordedSummaryBound(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		n         int
		total     int
		truncated bool
		first     string
	}{
		{0, 0, false, ""},
		{3, 3, false, "00001"},
		{agent.MaxSummaryRecords, agent.MaxSummaryRecords, false, "00001"},
		{agent.MaxSummaryRecords + 1, agent.MaxSummaryRecords, true, "00002"},
	} {
		r := &pagedReader{n: tt.n}
		s, err := agent.RecordedSummary(ctx, r, agent.SummaryQuery{CallerID: "c"})
		if err != nil {
			t.Fatal(err)
		}
		if r.q.Limit != agent.MaxSummaryRecords || r.q.CallerID != "c" {
			t.Errorf("n=%d: query %+v, want the caller's newest %d", tt.n, r.q, agent.MaxSummaryRecords)
		}
		first := ""
		if len(s.CallDetails) > 0 {
			first = s.CallDetails[0].CallID
		}
		if s.TotalCalls != tt.total || len(s.CallDetails) != tt.total || s.Truncated != tt.truncated || first != tt.first {
			t.Errorf("n=%d: %d calls, %d details, truncated %v, oldest %q; want %d, truncated %v, oldest %q",
				tt.n, s.TotalCalls, len(s.CallDetails), s.Truncated, first, tt.total, tt.truncated, tt.first)
		}
	}
	if _, err := agent.RecordedSummary(ctx, &pagedReader{}, agent.SummaryQuery{}); !errors.Is(err, agent.ErrNoCaller) {
		t.Errorf("RecordedSummary without a caller = %v, want ErrNoCaller", err)
	}
}

// A sub-agent whose history is full still counts every call, and says its
// details are a tail.
func TestSummaryTruncatedHistory(t *testing.T) {
	a := agent.NewSubAgent(&fakeInvoker{}, agent.SubAgentOptions{MaxHistory: 2})
	for range 3 {
		if _, err := a.Execute(context.Background(), "t", nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	if s := a.Summary(); s.TotalCalls != 3 || len(s.CallDetails) != 2 || !s.Truncated {
		t.Errorf("Summary() = %+v, want 3 calls, 2 details, truncated", s)
	}
}
