package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
)

// TestLoopMaxHistory: a chat of 30 lines, each a call and an answer of a
// KB or so, passes Outcome.Messages back each line as a chat does. With
// MaxHistory of 8 KB every request holds the system message, starts its
// turns with a user message, holds the latest line and each call's result,
// and stays near the bound; the history the chat keeps does too, and
// Dropped says how much was left out.
func TestLoopMaxHistory(t *testing.T) {
	reg, e := newWorld(t)
	const lines, bound = 30, 8000
	big := strings.Repeat("w", 1000)
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	for i := range lines {
		f.script = append(f.script,
			func(map[string]any) string {
				return openAIReply("", [3]string{fmt.Sprintf("call_%d", i), "echo", `{"message":"` + big + `"}`})
			},
			func(map[string]any) string { return openAIReply(fmt.Sprintf("answer %d %s", i, big)) })
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", APIKey: "k", MaxRetries: -1})
	a := &agent.Agent{Name: "long", Instructions: "Be brief.", Model: m, Toolkit: toolkit(t, reg, "long", "echo")}
	loop := agent.NewLoop(e, &agent.LoopOptions{MaxHistory: bound})
	var history []llm.Message
	dropped := 0
	for i := range lines {
		history = append(history, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("line %d %s", i, big)})
		out, err := loop.Run(context.Background(), a, "conv-long", history)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		history, dropped = out.Messages, dropped+out.Dropped
		size := 0
		for _, m := range history {
			size += llm.HistorySize(m)
		}
		if size > bound+4000 {
			t.Errorf("line %d: the chat keeps %d bytes of history (%d messages), want about %d at most", i, size, len(history), bound)
		}
	}
	if dropped == 0 {
		t.Error("nothing was left out")
	}
	for n := range 2 * lines {
		msgs := messages(f.request(n))
		body, _ := json.Marshal(msgs)
		latest := fmt.Sprintf("line %d ", n/2)
		if msgs[0]["role"] != "system" || msgs[1]["role"] != "user" || len(body) > bound+6000 || !strings.Contains(string(body), latest) {
			t.Errorf("request %d: %d messages, %d bytes, starting %v then %v; want the system message, a user turn, the latest line and about %d bytes at most",
				n, len(msgs), len(body), msgs[0]["role"], msgs[1]["role"], bound)
		}
		called := map[string]bool{}
		for _, m := range msgs {
			for _, tc := range items(m["tool_calls"]) {
				called[tc["id"].(string)] = true
			}
			if id, ok := m["tool_call_id"].(string); ok && !called[id] {
				t.Errorf("request %d: the result of %s without its call", n, id)
			}
		}
	}
}

func items(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(map[string]any))
	}
	return out
}

// failingInvoker fails every call as a system failure would.
type failingInvoker struct{}

func (failingInvoker) Call(context.Context, wield.Call) (*wield.Result, error) {
	return nil, errors.New("store down")
}

// TestLoopFailedCallsLeaveNoOrphan: when the system fails running a
// reply's calls, the run ends with the error, and the conversation it
// returns does not hold those calls without results: a chat that goes on
// with it is not refused by the provider on every line after.
func TestLoopFailedCallsLeaveNoOrphan(t *testing.T) {
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string { return openAIReply("", [3]string{"call_1", "echo", `{"message":"a"}`}) },
		func(map[string]any) string { return openAIReply("hello") },
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", APIKey: "k", MaxRetries: -1})
	a := &agent.Agent{Name: "failing", Model: m}
	loop := agent.NewLoop(failingInvoker{}, nil)
	out, err := loop.Run(context.Background(), a, "conv-failing", []llm.Message{{Role: llm.RoleUser, Content: "echo a"}})
	if err == nil || !strings.Contains(err.Error(), "store down") {
		t.Fatalf("err %v, want the system's failure", err)
	}
	history := append(out.Messages, llm.Message{Role: llm.RoleUser, Content: "hi"})
	if _, err := loop.Run(context.Background(), a, "conv-failing", history); err != nil {
		t.Fatal(err)
	}
	for _, m := range messages(f.request(1)) {
		if m["tool_calls"] != nil {
			t.Errorf("the next line's request holds the calls that never got results: %v", m)
		}
	}
}
