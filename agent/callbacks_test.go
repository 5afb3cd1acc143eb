package agent_test

import (
	"context"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
)

// panics returns how many more panics of kind were counted than before.
func panics(kind string, before map[string]int64) int64 {
	return wield.CallbackPanics()[kind] - before[kind]
}

// TestOnResultPanics: an OnResult that panics, called from the goroutines
// of ExecuteBatch, leaves the process up, is counted, and every result of
// the batch stands and is in the history.
func TestOnResultPanics(t *testing.T) {
	before := wield.CallbackPanics()
	e, _ := newEngine(t, nil)
	a := agent.NewSubAgent(e, agent.SubAgentOptions{OnResult: func(r *wield.Result) { panic("OnResult bug in " + r.Tool) }})
	res, err := a.ExecuteBatch(context.Background(), []agent.BatchCall{
		{Tool: "echo", Args: args(`{"message":"a"}`)},
		{Tool: "add", Args: args(`{"a":1,"b":2}`)},
		{Tool: "fail"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || !res[0].OK || !res[1].OK || res[2].OK {
		t.Errorf("results %+v", res)
	}
	if got := len(a.History()); got != 3 {
		t.Errorf("history has %d calls, want 3", got)
	}
	if got := panics(wield.CallbackSubagentOnResult, before); got != 3 {
		t.Errorf("subagent_on_result panics counted: %d, want 3", got)
	}
}

// TestOnMessagePanics: an OnMessage that panics does not end the agent's
// run; the answer arrives and the panics are counted.
func TestOnMessagePanics(t *testing.T) {
	before := wield.CallbackPanics()
	reg, e := newWorld(t)
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string {
			return openAIReply("", [3]string{"call_a", "calculator", `{"expression":"6*7"}`})
		},
		func(map[string]any) string { return openAIReply("42.") },
	}
	m, err := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	a := &agent.Agent{Name: "assistant", Model: m, Toolkit: toolkit(t, reg, "assistant", "calculator")}
	seen := 0
	loop := agent.NewLoop(e, &agent.LoopOptions{OnMessage: func(string, llm.Message) {
		seen++
		panic("OnMessage bug")
	}})
	out, err := loop.Run(context.Background(), a, "conv-p", []llm.Message{{Role: llm.RoleUser, Content: "6*7?"}})
	if err != nil || out.Answer != "42." {
		t.Fatalf("run: %+v, %v", out, err)
	}
	if seen == 0 {
		t.Fatal("OnMessage was never called")
	}
	if got := panics(wield.CallbackAgentOnMessage, before); got != int64(seen) {
		t.Errorf("agent_on_message panics counted: %d, want %d", got, seen)
	}
}

// TestSummaryKeepPanics: a Keep that panics leaves its record out (it may
// be what hides records outside a key's scope) and is counted.
func TestSummaryKeepPanics(t *testing.T) {
	before := wield.CallbackPanics()
	n := 0
	s, err := agent.RecordedSummary(context.Background(), &pagedReader{n: 4}, agent.SummaryQuery{CallerID: "c", Keep: func(r *wield.Record) bool {
		n++
		if n%2 == 0 {
			panic("Keep bug")
		}
		return true
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s.TotalCalls != 2 {
		t.Errorf("summary of %d calls, want the 2 Keep returned true for", s.TotalCalls)
	}
	if got := panics(wield.CallbackSummaryKeep, before); got != 2 {
		t.Errorf("summary_keep panics counted: %d, want 2", got)
	}
}
