package httpapi

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wieldhq/wield/agent"
)

// A sub-agent's summary over REST is its SubAgent.Summary: the Go
// sub-agent and the endpoint, reading the records, agree; the answers fit
// the OpenAPI document (do checks them).
func TestCallerSummary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	all, _, err := CreateKey(file, "all", RightCall, nil)
	if err != nil {
		t.Fatal(err)
	}
	math, _, err := CreateKey(file, "math", RightRead, []string{"math"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	s, hs := newTestServer(t, ring)
	ctx := context.Background()
	sub := agent.NewSubAgent(s.eng, agent.SubAgentOptions{ID: "tool_sub_agent_001", ParentID: "conversation_agent_001", ConversationID: "conv_001"})
	if _, err := sub.Execute(ctx, "echo", json.RawMessage(`{"message":"hi"}`), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.ExecuteBatch(ctx, []agent.BatchCall{
		{Tool: "echo", Args: json.RawMessage(`{"message":"hello"}`)},
		{Tool: "calculator", Args: json.RawMessage(`{"expression":"1+2"}`)},
		{Tool: "calculator", Args: json.RawMessage(`{"expression":"1/"}`)},
		{Tool: "nope"},
	}); err != nil {
		t.Fatal(err)
	}
	// A call made over REST as the same caller counts too.
	if status, b := do(t, hs, "POST", "/v1/tools/echo/call", all, `{"arguments":{"message":"rest"},
		"caller":{"id":"tool_sub_agent_001","type":"conversation_agent","conversation_id":"conv_002","variables":{"parent_agent_id":"conversation_agent_001"}}}`); status != 200 {
		t.Fatalf("call over REST: %d %s", status, b)
	}
	if _, err := sub.Execute(ctx, "echo", json.RawMessage(`{"message":"last"}`), 0); err != nil {
		t.Fatal(err)
	}

	status, b := do(t, hs, "GET", "/v1/callers/tool_sub_agent_001/summary", all, "")
	if status != 200 {
		t.Fatalf("summary: %d %s", status, b)
	}
	var got agent.ExecutionSummary
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := sub.Summary()
	if got.TotalCalls != want.TotalCalls+1 || got.ToolUsage["echo"] != want.ToolUsage["echo"]+1 || got.ParentAgentID != "conversation_agent_001" {
		t.Errorf("summary = %+v, want the sub-agent's calls and the one over REST", got)
	}
	byID := cmpopts.SortSlices(func(x, y agent.CallDetail) bool { return x.CallID < y.CallID })

	// In one conversation, the records are the sub-agent's calls exactly.
	status, b = do(t, hs, "GET", "/v1/callers/tool_sub_agent_001/summary?conversation=conv_001", all, "")
	got = agent.ExecutionSummary{}
	if err := json.Unmarshal(b, &got); status != 200 || err != nil {
		t.Fatalf("summary of conv_001: %d %v %s", status, err, b)
	}
	if diff := cmp.Diff(want, got, byID); diff != "" {
		t.Errorf("summary over REST differs from SubAgent.Summary (-want +got):\n%s", diff)
	}
	c := NewClient(hs.URL, all)
	cs, err := c.CallerSummary(ctx, "tool_sub_agent_001", "conv_001")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, *cs, byID); diff != "" {
		t.Errorf("Client.CallerSummary differs from SubAgent.Summary (-want +got):\n%s", diff)
	}

	status, b = do(t, hs, "GET", "/v1/callers/tool_sub_agent_001/summary?brief=true&conversation=conv_001", all, "")
	var brief agent.BriefSummary
	if err := json.Unmarshal(b, &brief); status != 200 || err != nil {
		t.Fatalf("brief: %d %v %s", status, err, b)
	}
	if diff := cmp.Diff(sub.Brief(), brief); diff != "" {
		t.Errorf("brief over REST differs from SubAgent.Brief (-want +got):\n%s", diff)
	}
	cb, err := c.CallerBrief(ctx, "tool_sub_agent_001", "conv_001")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sub.Brief(), *cb); diff != "" {
		t.Errorf("Client.CallerBrief differs from SubAgent.Brief (-want +got):\n%s", diff)
	}

	// A key scoped to toolsets sees the calls of its tools only.
	status, b = do(t, hs, "GET", "/v1/callers/tool_sub_agent_001/summary", math, "")
	got = agent.ExecutionSummary{}
	if err := json.Unmarshal(b, &got); status != 200 || err != nil {
		t.Fatalf("scoped summary: %d %v %s", status, err, b)
	}
	if diff := cmp.Diff(map[string]int{"calculator": 2}, got.ToolUsage); diff != "" || got.TotalCalls != 2 || len(got.CallDetails) != 2 {
		t.Errorf("scoped summary = %+v, want the 2 calculator calls", got)
	}

	// A caller without calls has an empty summary; a bad brief is refused.
	status, b = do(t, hs, "GET", "/v1/callers/nobody/summary", all, "")
	if status != 200 || string(b) != `{"agent_id":"nobody","total_calls":0,"successful_calls":0,"failed_calls":0,"success_rate":0,"tool_usage":{},"call_details":[]}`+"\n" {
		t.Errorf("summary of a caller without calls: %d %s", status, b)
	}
	status, b = do(t, hs, "GET", "/v1/callers/nobody/summary?brief=maybe", all, "")
	if status != 400 || errorCode(b) != CodeBadRequest {
		t.Errorf("brief=maybe: %d %s, want 400 bad_request", status, b)
	}
	if status, b = do(t, hs, "GET", "/v1/callers/nobody/summary", "", ""); status != 401 {
		t.Errorf("no key: %d %s, want 401", status, b)
	}
}
