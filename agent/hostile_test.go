package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/openai"
)

// TestHostileDuplicateCallIDs: a reply whose calls share an ID (or have
// none) still gets each result paired with exactly one call: the IDs the
// provider sees in the assistant turn are unique and each result answers
// one of them.
func TestHostileDuplicateCallIDs(t *testing.T) {
	reg, e := newWorld(t)
	for _, tt := range []struct {
		name  string
		path  string
		reply func() string
		new   func(base string) (llm.Model, error)
	}{
		{"openai", "/v1/chat/completions", func() string {
			return openAIReply("", [3]string{"call_1", "calculator", `{"expression":"1+1"}`}, [3]string{"call_1", "calculator", `{"expression":"2+2"}`},
				[3]string{"", "echo", `{"message":"a"}`}, [3]string{"", "echo", `{"message":"b"}`})
		}, func(base string) (llm.Model, error) {
			return openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: base + "/v1", APIKey: "k", MaxRetries: -1})
		}},
		{"anthropic", "/v1/messages", func() string {
			return anthropicReply("", [3]string{"toolu_1", "calculator", `{"expression":"1+1"}`}, [3]string{"toolu_1", "calculator", `{"expression":"2+2"}`})
		}, func(base string) (llm.Model, error) {
			return anthropic.NewClient(anthropic.ClientOptions{Model: "claude-test", BaseURL: base, APIKey: "k", MaxRetries: -1})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeModel{t: t, path: tt.path}
			f.script = []func(map[string]any) string{
				func(map[string]any) string { return tt.reply() },
				func(map[string]any) string {
					if tt.name == "openai" {
						return openAIReply("done")
					}
					return anthropicReply("done")
				},
			}
			m, err := tt.new(serve(t, f))
			if err != nil {
				t.Fatal(err)
			}
			a := &agent.Agent{Name: "dup", Model: m, Toolkit: toolkit(t, reg, "dup_"+tt.name, "calculator", "echo")}
			out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-dup", []llm.Message{{Role: llm.RoleUser, Content: "go"}})
			if err != nil || out.Answer != "done" {
				t.Fatalf("got %+v, %v", out, err)
			}
			callIDs, resultIDs := map[string]int{}, map[string]int{}
			for _, m := range messages(f.request(1)) {
				switch tt.name {
				case "openai":
					if tcs, ok := m["tool_calls"].([]any); ok {
						for _, tc := range tcs {
							callIDs[tc.(map[string]any)["id"].(string)]++
						}
					}
					if id, ok := m["tool_call_id"].(string); ok {
						resultIDs[id]++
					}
				case "anthropic":
					blocks, _ := m["content"].([]any)
					for _, b := range blocks {
						bm := b.(map[string]any)
						switch bm["type"] {
						case "tool_use":
							callIDs[bm["id"].(string)]++
						case "tool_result":
							resultIDs[bm["tool_use_id"].(string)]++
						}
					}
				}
			}
			calls := 0
			for id, n := range callIDs {
				calls += n
				if n != 1 || id == "" || resultIDs[id] != 1 {
					t.Errorf("call id %q: %d calls, %d results; want one each", id, n, resultIDs[id])
				}
			}
			if calls == 0 || len(resultIDs) != len(callIDs) {
				t.Errorf("calls %v, results %v", callIDs, resultIDs)
			}
		})
	}
}

// TestHostileManyCalls: a reply of 10,000 calls is answered, one result
// for each call, and only the first DefaultMaxCallsPerReply run: each
// one past them is answered "not run" (before, all 10,000 went to the
// engine at once, a goroutine and a record each, those beyond its
// capacity and queue refused).
func TestHostileManyCalls(t *testing.T) {
	reg, e := newWorld(t)
	const n = 10000
	calls := make([][3]string, n)
	for i := range calls {
		calls[i] = [3]string{fmt.Sprintf("call_%d", i), "calculator", `{"expression":"1+1"}`}
	}
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string { return openAIReply("", calls...) },
		func(map[string]any) string { return openAIReply("done") },
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", APIKey: "k", MaxRetries: -1})
	a := &agent.Agent{Name: "many", Model: m, Toolkit: toolkit(t, reg, "many", "calculator")}
	start := time.Now()
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-many", []llm.Message{{Role: llm.RoleUser, Content: "go"}})
	t.Logf("10,000 calls: %v, %v", time.Since(start), err)
	if err != nil {
		t.Fatal(err)
	}
	results, ran, unrun := 0, 0, 0
	for _, m := range messages(f.request(1)) {
		if m["role"] == "tool" {
			results++
			content := m["content"].(string)
			if strings.Contains(content, `"result":2`) {
				ran++
			}
			if strings.Contains(content, "not run: one reply may ask for at most 64 calls, and this one asked for 10000") {
				unrun++
			}
		}
	}
	t.Logf("results sent back: %d, %d of them run, %d not run; answer %q", results, ran, unrun, out.Answer)
	if results != n || ran == 0 || ran > agent.DefaultMaxCallsPerReply || out.Answer != "done" {
		t.Errorf("%d results for %d calls, %d run, answer %q", results, n, ran, out.Answer)
	}
	if unrun != n-agent.DefaultMaxCallsPerReply || out.Unrun != unrun {
		t.Errorf("%d results say not run, Outcome.Unrun %d; want %d", unrun, out.Unrun, n-agent.DefaultMaxCallsPerReply)
	}
	if got := out.Summary.TotalCalls; got > agent.DefaultMaxCallsPerReply {
		t.Errorf("the agent's summary has %d calls; only %d may have run", got, agent.DefaultMaxCallsPerReply)
	}
}

// TestHostileCutCalls: a model whose every reply is cut at its token limit
// in the middle of a call is asked again a bounded number of times.
func TestHostileCutCalls(t *testing.T) {
	reg, e := newWorld(t)
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	for range 10 {
		f.script = append(f.script, func(map[string]any) string {
			return strings.Replace(openAIReply("", [3]string{"call_1", "calculator", `{"expression":"6*`}), `"tool_calls"}`, `"length"}`, 1)
		})
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", APIKey: "k", MaxRetries: -1})
	a := &agent.Agent{Name: "cut", Model: m, Toolkit: toolkit(t, reg, "cut", "calculator")}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-cut", []llm.Message{{Role: llm.RoleUser, Content: "go"}})
	if !errors.Is(err, agent.ErrMaxSteps) || out.Steps != 10 || len(f.requests) != 10 {
		t.Errorf("steps %d, requests %d, err %v; want the step limit after 10", out.Steps, len(f.requests), err)
	}
}

// TestHostileLongName: a call whose name is 10 MB, longer than any tool's
// can be (128 bytes), reaches the engine, its record and the model's
// result with its name clipped: it is still a call of no such tool.
func TestHostileLongName(t *testing.T) {
	reg, e, store := recordedWorld(t)
	name := strings.Repeat("n", 10<<20)
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string { return openAIReply("", [3]string{"c1", name, `{}`}) },
		func(map[string]any) string { return openAIReply("done") },
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", APIKey: "k", MaxRetries: -1})
	a := &agent.Agent{Name: "long", Model: m, Toolkit: toolkit(t, reg, "long", "echo")}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-long", []llm.Message{{Role: llm.RoleUser, Content: "go"}})
	if err != nil {
		t.Fatal(err)
	}
	res := out.Messages[len(out.Messages)-2]
	if res.Role != llm.RoleTool || res.Result == nil || res.Result.ErrorType != wield.ErrToolNotFound || len(res.ResultText()) > 1<<10 {
		t.Errorf("the result is %+v (%d bytes of text), want a short tool_not_found", res.Result, len(res.ResultText()))
	}
	page, err := store.Calls(context.Background(), wield.CallQuery{ConversationID: "conv-long"})
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("records %v, %v", page, err)
	}
	if r := page.Records[0]; len(r.Call.Tool) > 200 || !strings.HasPrefix(r.Call.Tool, "nnnn") || r.Result.ErrorType != wield.ErrToolNotFound {
		t.Errorf("recorded a call of a %d-byte name, %s", len(r.Call.Tool), r.Result.ErrorType)
	}
}
