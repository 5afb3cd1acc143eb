package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
)

// TestSubagentAnswerNotInRecord holds what docs/toolsets-and-agents.md
// says of a hand-off: the record of call_subagent is its routing
// directive, saved before the hand-off; the sub-agent's answer is the
// result OnCall (its second call) and the model get; the store keeps the
// sub-agent's own calls, under its name in the same conversation.
func TestSubagentAnswerNotInRecord(t *testing.T) {
	ctx := context.Background()
	reg, e, store := recordedWorld(t, builtin.CallSubagent(func() []string { return []string{"mathematician"} }))

	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string {
			return openAIReply("", [3]string{"call_1", "call_subagent", `{"agent_name":"mathematician","instruction":"Compute 6*7"}`})
		},
		func(map[string]any) string {
			return openAIReply("", [3]string{"call_2", "calculator", `{"expression":"6*7"}`})
		},
		func(map[string]any) string { return openAIReply("42") },
		func(map[string]any) string { return openAIReply("The mathematician says 42.") },
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", MaxRetries: -1})
	math := &agent.Agent{Name: "mathematician", Model: m, Toolkit: toolkit(t, reg, "mathematician", "calculator")}
	lead := &agent.Agent{Name: "lead", Model: m, Toolkit: toolkit(t, reg, "lead", "call_subagent")}
	var mu sync.Mutex
	var seen []string
	loop := agent.NewLoop(e, &agent.LoopOptions{Agents: map[string]*agent.Agent{"mathematician": math},
		OnCall: func(by string, c llm.ToolCall, r *wield.Result) {
			if c.Name == "call_subagent" && r != nil {
				mu.Lock()
				seen = append(seen, string(r.Output))
				mu.Unlock()
			}
		}})
	out, err := loop.Run(ctx, lead, "conv-hand", []llm.Message{{Role: llm.RoleUser, Content: "What is 6*7?"}})
	if err != nil || out.Answer != "The mathematician says 42." {
		t.Fatalf("got %+v, %v", out, err)
	}
	if len(seen) != 1 || !strings.Contains(seen[0], `"answer":"42"`) {
		t.Errorf("OnCall saw %q, want the sub-agent's answer", seen)
	}
	page, err := store.Calls(ctx, wield.CallQuery{ConversationID: "conv-hand"})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*wield.Record{}
	for _, r := range page.Records {
		by[r.Call.Tool] = r
	}
	if r := by["call_subagent"]; r == nil || r.Call.Caller.ID != "lead" || !r.Result.OK {
		t.Fatalf("call_subagent record %+v", r)
	}
	var d builtin.SubagentRoute
	if out := by["call_subagent"].Result.Output; json.Unmarshal(out, &d) != nil || !d.Route || d.AgentName != "mathematician" || d.Instruction != "Compute 6*7" || strings.Contains(string(out), "answer") {
		t.Errorf("call_subagent recorded %s, want the routing directive (as the docs say)", out)
	}
	if r := by["calculator"]; r == nil || r.Call.Caller.ID != "mathematician" {
		t.Errorf("the sub-agent's call recorded as %+v, want under its name", r)
	}
}
