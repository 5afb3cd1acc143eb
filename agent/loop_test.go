package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/openai"
	"github.com/wieldhq/wield/sqlite"
)

// fakeModel is a local server that answers like a provider, from a script:
// turn i gets the decoded request and returns the response body.
type fakeModel struct {
	t        *testing.T
	path     string
	mu       sync.Mutex
	requests []map[string]any
	script   []func(req map[string]any) string
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != f.path || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"type":"not_found","message":"no such route"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	i := len(f.requests)
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	if i >= len(f.script) {
		f.t.Errorf("%s: turn %d is past the script", f.path, i+1)
		http.Error(w, `{"error":{"message":"script exhausted"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, f.script[i](req))
}

func (f *fakeModel) request(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

func serve(t *testing.T, f *fakeModel) string {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

// openAIReply is a chat.completion body as OpenAI documents it.
func openAIReply(content string, calls ...[3]string) string {
	msg := map[string]any{"role": "assistant", "content": content}
	finish := "stop"
	if len(calls) > 0 {
		var tcs []map[string]any
		for _, c := range calls {
			tcs = append(tcs, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
		}
		msg["tool_calls"], msg["content"], finish = tcs, nil, "tool_calls"
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-abc123", "object": "chat.completion", "created": 1731000000, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
	return string(b)
}

// anthropicReply is a Messages API body as Anthropic documents it.
func anthropicReply(text string, uses ...[3]string) string {
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	stop := "end_turn"
	for _, u := range uses {
		content = append(content, map[string]any{"type": "tool_use", "id": u[0], "name": u[1], "input": json.RawMessage(u[2])})
		stop = "tool_use"
	}
	b, _ := json.Marshal(map[string]any{
		"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
	})
	return string(b)
}

// messages returns the request's messages.
func messages(req map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range req["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

func toolNames(req map[string]any) []string {
	var names []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		tm := t.(map[string]any)
		if f, ok := tm["function"].(map[string]any); ok {
			names = append(names, f["name"].(string))
		} else {
			names = append(names, tm["name"].(string))
		}
	}
	return names
}

func newWorld(t *testing.T, extra ...*wield.Tool) (*wield.Registry, *engine.Engine) {
	t.Helper()
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.Defaults()...)
	reg.MustRegister(builtin.CallSubagent(func() []string { return []string{"mathematician"} }))
	reg.MustRegister(extra...)
	e := engine.New(reg, nil)
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return reg, e
}

// recordedWorld is a registry of the default tools and extra, and an
// engine that records every call in a SQLite store of the test's own.
func recordedWorld(t *testing.T, extra ...*wield.Tool) (*wield.Registry, *engine.Engine, *sqlite.Store) {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.Defaults()...)
	reg.MustRegister(extra...)
	e := engine.New(reg, &engine.Options{Store: store})
	t.Cleanup(func() { e.Close(context.Background()) })
	return reg, e, store
}

func toolkit(t *testing.T, reg *wield.Registry, agentName string, tools ...string) *wield.Toolkit {
	t.Helper()
	k, err := reg.CreateToolkit(agentName, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestLoopOpenAINative(t *testing.T) {
	reg, e := newWorld(t)
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		// Two calls at once: they run in parallel.
		func(map[string]any) string {
			return openAIReply("", [3]string{"call_a", "calculator", `{"expression":"6*7"}`}, [3]string{"call_b", "echo", `{"message":"hé"}`})
		},
		// A call that fails validation (wrong parameter name)...
		func(map[string]any) string {
			return openAIReply("", [3]string{"call_c", "calculator", `{"expr":"1+1"}`})
		},
		// ...corrected on the next turn.
		func(map[string]any) string {
			return openAIReply("", [3]string{"call_d", "calculator", `{"expression":"1+1"}`})
		},
		func(map[string]any) string { return openAIReply("6*7 is 42 and 1+1 is 2.") },
	}
	m, err := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	a := &agent.Agent{Name: "assistant", Instructions: "You are terse.", Model: m, Toolkit: toolkit(t, reg, "assistant", "calculator", "echo")}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-1", []llm.Message{{Role: llm.RoleUser, Content: "What is 6*7, and 1+1?"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "6*7 is 42 and 1+1 is 2." || out.Steps != 4 || out.Strategy != llm.StrategyNative {
		t.Errorf("outcome %q after %d steps (%s)", out.Answer, out.Steps, out.Strategy)
	}
	if got := strings.Join(toolNames(f.request(0)), ","); got != "calculator,echo" {
		t.Errorf("tools offered: %s", got)
	}
	// Turn 2 carries both results, each under its call's id.
	msgs := messages(f.request(1))
	if len(msgs) != 5 || msgs[0]["role"] != "system" || msgs[0]["content"] != "You are terse." {
		t.Fatalf("turn 2 messages: %v", msgs)
	}
	for i, want := range []struct{ id, content string }{{"call_a", `{"expression":"6*7","result":42}`}, {"call_b", `{"message":"hé"}`}} {
		got := msgs[3+i]
		if got["role"] != "tool" || got["tool_call_id"] != want.id || got["content"] != want.content {
			t.Errorf("tool message %d: %v, want %v", i, got, want)
		}
	}
	// Turn 3 tells the model what was wrong, in seed 001's form.
	last := messages(f.request(2))
	bad := last[len(last)-1]
	if bad["tool_call_id"] != "call_c" || !strings.HasPrefix(bad["content"].(string), "Error: ") || !strings.Contains(bad["content"].(string), "expression") {
		t.Errorf("validation failure went back as %v", bad)
	}
	s := out.Summary
	if s.TotalCalls != 4 || s.SuccessfulCalls != 3 || s.FailedCalls != 1 {
		t.Errorf("summary %+v", s)
	}
}

func TestLoopPromptFallback(t *testing.T) {
	reg, e := newWorld(t)
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string {
			return openAIReply("I will compute it.\n<tool_call>\n  <name>calculator</name>\n  <params>\n    <expression><![CDATA[6*7]]></expression>\n  </params>\n</tool_call>")
		},
		func(map[string]any) string { return openAIReply("The answer is 42.") },
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "local", BaseURL: serve(t, f) + "/v1", NoFunctionCalling: true, MaxRetries: -1})
	a := &agent.Agent{Name: "local", Model: m, Toolkit: toolkit(t, reg, "local", "calculator")}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-2", []llm.Message{{Role: llm.RoleUser, Content: "6 times 7?"}})
	if err != nil || out.Answer != "The answer is 42." || out.Strategy != llm.StrategyPrompt {
		t.Fatalf("got %+v, %v", out, err)
	}
	first := f.request(0)
	if _, ok := first["tools"]; ok {
		t.Error("tools sent natively to a model without function calling")
	}
	if sys := messages(first)[0]["content"].(string); !strings.Contains(sys, "### calculator") {
		t.Errorf("system prompt lacks the XML tool list:\n%s", sys)
	}
	msgs := messages(f.request(1))
	res := msgs[len(msgs)-1]
	if res["role"] != "user" || !strings.Contains(res["content"].(string), "<tool_result>") || !strings.Contains(res["content"].(string), `"result":42`) {
		t.Errorf("result went back as %v", res)
	}
}

func TestLoopAnthropicRoutesToSubagent(t *testing.T) {
	reg, e := newWorld(t)
	claude := &fakeModel{t: t, path: "/v1/messages"}
	claude.script = []func(map[string]any) string{
		func(map[string]any) string {
			return anthropicReply("Let me ask the mathematician, and echo meanwhile.",
				[3]string{"toolu_1", "call_subagent", `{"agent_name":"mathematician","instruction":"Compute 6*7"}`},
				[3]string{"toolu_2", "echo", `{"message":"working"}`})
		},
		func(map[string]any) string { return anthropicReply("The mathematician says 42.") },
	}
	gpt := &fakeModel{t: t, path: "/v1/chat/completions"}
	gpt.script = []func(map[string]any) string{
		func(req map[string]any) string {
			if msgs := messages(req); msgs[len(msgs)-1]["content"] != "Compute 6*7" {
				t.Errorf("sub-agent got %v", msgs)
			}
			return openAIReply("", [3]string{"call_1", "calculator", `{"expression":"6*7"}`})
		},
		func(map[string]any) string { return openAIReply("42") },
	}
	cm, _ := anthropic.NewClient(anthropic.ClientOptions{Model: "claude-test", BaseURL: serve(t, claude), APIKey: "k", MaxRetries: -1})
	gm, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, gpt) + "/v1", MaxRetries: -1})
	math := &agent.Agent{Name: "mathematician", Model: gm, Toolkit: toolkit(t, reg, "mathematician", "calculator")}
	lead := &agent.Agent{Name: "lead", Model: cm, Toolkit: toolkit(t, reg, "lead", "call_subagent", "echo")}
	loop := agent.NewLoop(e, &agent.LoopOptions{Agents: map[string]*agent.Agent{"mathematician": math}})
	out, err := loop.Run(context.Background(), lead, "conv-3", []llm.Message{{Role: llm.RoleUser, Content: "What is 6*7?"}})
	if err != nil || out.Answer != "The mathematician says 42." {
		t.Fatalf("got %+v, %v", out, err)
	}
	// Both results travel in one user turn of tool_result blocks.
	msgs := messages(claude.request(1))
	last := msgs[len(msgs)-1]
	blocks := last["content"].([]any)
	if last["role"] != "user" || len(blocks) != 2 {
		t.Fatalf("last message %v", last)
	}
	b0 := blocks[0].(map[string]any)
	if b0["type"] != "tool_result" || b0["tool_use_id"] != "toolu_1" || !strings.Contains(fmt.Sprint(b0["content"]), `"answer":"42"`) {
		t.Errorf("routing result %v", b0)
	}
	// The sub-agent's call was checked against its own toolkit.
	if got := strings.Join(toolNames(gpt.request(0)), ","); got != "calculator" {
		t.Errorf("sub-agent tools %s", got)
	}
}

func TestLoopSearchesLargeCatalogs(t *testing.T) {
	var extra []*wield.Tool
	names := []string{"calculator", "echo"}
	for i := range 60 {
		n := fmt.Sprintf("crm_record_%02d", i)
		extra = append(extra, wield.Func(n, fmt.Sprintf("Update customer record field number %d in the CRM.", i),
			func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }))
		names = append(names, n)
	}
	reg, e := newWorld(t, extra...)
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string {
			return openAIReply("", [3]string{"s1", "search_tools", `{"query":"evaluate an arithmetic expression"}`})
		},
		func(map[string]any) string {
			return openAIReply("", [3]string{"c1", "calculator", `{"expression":"2**10"}`})
		},
		func(map[string]any) string { return openAIReply("1024") },
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", MaxRetries: -1})
	a := &agent.Agent{Name: "big", Model: m, Toolkit: toolkit(t, reg, "big", names...)}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-4", []llm.Message{{Role: llm.RoleUser, Content: "2 to the 10th?"}})
	if err != nil || out.Answer != "1024" {
		t.Fatalf("got %+v, %v", out, err)
	}
	if got := toolNames(f.request(0)); len(got) != 1 || got[0] != "search_tools" {
		t.Errorf("first turn offered %v, want search_tools alone", got)
	}
	second := toolNames(f.request(1))
	if len(second) < 2 || second[0] != "search_tools" || !strings.Contains(strings.Join(second, ","), "calculator") {
		t.Errorf("second turn offered %v, want search_tools and what it found", second)
	}
}

func TestLoopStepLimit(t *testing.T) {
	reg, e := newWorld(t)
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	for range 3 {
		f.script = append(f.script, func(map[string]any) string {
			return openAIReply("", [3]string{"x", "echo", `{"message":"again"}`})
		})
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", MaxRetries: -1})
	a := &agent.Agent{Name: "loopy", Model: m, Toolkit: toolkit(t, reg, "loopy", "echo")}
	out, err := agent.NewLoop(e, &agent.LoopOptions{MaxSteps: 3}).Run(context.Background(), a, "c", []llm.Message{{Role: llm.RoleUser, Content: "go"}})
	if err == nil || !strings.Contains(err.Error(), "step limit") || out == nil || out.Steps != 3 {
		t.Fatalf("got %+v, %v", out, err)
	}
}

func TestLoopNoStrategy(t *testing.T) {
	_, e := newWorld(t)
	m, _ := openai.NewClient(openai.ClientOptions{Model: "x", BaseURL: "http://127.0.0.1:1/v1", NoFunctionCalling: true})
	a := &agent.Agent{Name: "strict", Model: m, Strategy: llm.OutputStrategy{FunctionCalling: true}}
	if _, err := agent.NewLoop(e, nil).Run(context.Background(), a, "c", nil); err == nil || !strings.Contains(err.Error(), "fallback_to_structured_output is off") {
		t.Fatalf("got %v", err)
	}
}
