package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// seed000Agents are seed 000's agents as agent documents: the lead has
// call_subagent among its tools, the search agent web_search, the crawl
// agent web_fetch.
const seed000Agents = `kind: agent
name: lead
description: Plans the work and hands it out
tools: [call_subagent, web_search, web_fetch]
---
kind: agent
name: search
description: Searches the web
tools: [web_search]
---
kind: agent
name: crawl
description: Reads pages
tools: [web_fetch]
`

// seed000Dir writes the agents and a configuration with a search
// provider (web_search exists only with one); it returns the folder of
// the agents and the configuration's path.
func seed000Dir(t *testing.T) (tools, config string) {
	t.Helper()
	dir := t.TempDir()
	tools = filepath.Join(dir, "agents")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "agents.yaml"), []byte(seed000Agents), 0o644); err != nil {
		t.Fatal(err)
	}
	config = filepath.Join(dir, "wield.yaml")
	if err := os.WriteFile(config, []byte("web_search: {provider: brave, api_key: k, base_url: \"http://127.0.0.1:9/brave\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tools, config
}

// TestSubagentToolOfAgents: an agent that lists call_subagent among its
// tools loads; list, validate and call agree.
func TestSubagentToolOfAgents(t *testing.T) {
	tools, config := seed000Dir(t)
	code, out, errs := run(t, "list", "--config", config, "--tools", tools, "--agent", "lead")
	if code != 0 || !strings.Contains(out, "call_subagent") || !strings.Contains(out, "web_search") || !strings.Contains(out, "web_fetch") {
		t.Fatalf("list --agent lead: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "list", "--config", config, "--tools", tools, "--agent", "search")
	if code != 0 || strings.Contains(out, "call_subagent") || !strings.Contains(out, "web_search") {
		t.Errorf("list --agent search: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs = run(t, "validate", "--config", config, tools); code != 0 || strings.Contains(out+errs, "warning") {
		t.Errorf("validate: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "call", "call_subagent", "--config", config, "--tools", tools, "agent_name=nobody")
	if !strings.Contains(out, `choose one of: crawl, lead, search`) {
		t.Errorf("call_subagent nobody: exit %d\n%s%s", code, out, errs)
	}
	// A toolset naming call_subagent, without any agent: validate and list
	// both refuse it.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "set.yaml"), []byte("kind: toolset\nname: routing\ntools: [call_subagent]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cv, vout, _ := run(t, "validate", dir)
	cl, _, lerr := run(t, "list", "--tools", dir)
	if cv != 1 || cl != 1 || !strings.Contains(vout, `tool "call_subagent" is not defined`) || !strings.Contains(lerr, "call_subagent") {
		t.Errorf("without agents: validate exit %d, list exit %d\n%s\n%s", cv, cl, vout, lerr)
	}
}

// TestChatRoutesToSubagent: wield chat --agent lead hands a call_subagent
// to the search agent, which runs on the model with its own toolkit; its
// answer is the call's result the lead reads.
func TestChatRoutesToSubagent(t *testing.T) {
	url, asked := fakeOpenAI(t,
		chatAnswer("", "call_subagent", `{"agent_name":"search","instruction":"Find what wield is"}`),
		chatAnswer("wield is a tool engine."),
		chatAnswer("The search agent says: wield is a tool engine."),
	)
	t.Setenv("OPENAI_API_KEY", "k")
	tools, config := seed000Dir(t)
	code, out, errs := runIn(t, "What is wield?\n", "chat", "--config", config, "--tools", tools, "--agent", "lead", "--model", url+"/v1/m")
	reqs := asked()
	if code != 0 || !strings.Contains(out, "The search agent says: wield is a tool engine.") {
		t.Fatalf("chat: exit %d\n%s%s", code, out, errs)
	}
	if len(reqs) != 3 {
		t.Fatalf("the model was asked %d times, want 3 (lead, search, lead)", len(reqs))
	}
	if got := reqs[0].toolNames(); !slices.Equal(got, []string{"call_subagent", "web_fetch", "web_search"}) {
		t.Errorf("the lead was offered %v", got)
	}
	if got := reqs[1].toolNames(); !slices.Equal(got, []string{"web_search"}) {
		t.Errorf("the search agent was offered %v, want its own toolkit", got)
	}
	if m := reqs[1].Messages; len(m) == 0 || m[len(m)-1].Content != "Find what wield is" {
		t.Errorf("the search agent was handed %+v", m)
	}
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	if s, _ := last.Content.(string); last.Role != "tool" || !strings.Contains(s, "wield is a tool engine.") || !strings.Contains(s, "search") {
		t.Errorf("the lead read the call's result as %+v", last)
	}
}

// TestChatSubagentNamedChat: without --agent the chat's lead, named chat,
// has every tool; an agent of the tool files named chat is that agent to a
// call_subagent, with its own toolkit. The lead took its place: a
// call_subagent naming chat (the model's, or one a tool's output talked it
// into) ran on every tool.
func TestChatSubagentNamedChat(t *testing.T) {
	url, asked := fakeOpenAI(t,
		chatAnswer("", "call_subagent", `{"agent_name":"chat","instruction":"Search for wield"}`),
		chatAnswer("wield is a tool engine."),
		chatAnswer("done"),
	)
	t.Setenv("OPENAI_API_KEY", "k")
	tools, config := seed000Dir(t)
	if err := os.WriteFile(filepath.Join(tools, "chat.yaml"), []byte("kind: agent\nname: chat\ndescription: Searches only\ntools: [web_search]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runIn(t, "What is wield?\n", "chat", "--config", config, "--tools", tools, "--model", url+"/v1/m")
	reqs := asked()
	if code != 0 || len(reqs) != 3 {
		t.Fatalf("chat: exit %d, %d requests\n%s%s", code, len(reqs), out, errs)
	}
	if got := reqs[1].toolNames(); !slices.Equal(got, []string{"web_search"}) {
		t.Errorf("call_subagent chat ran on %v, want the chat agent's toolkit [web_search]", got)
	}
}

// chatRequest is what fakeOpenAI keeps of a request: its messages and the
// names of the tools offered.
type chatRequest struct {
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// toolNames are the names of the tools the request offered, sorted.
func (q chatRequest) toolNames() []string {
	var ns []string
	for _, tl := range q.Tools {
		ns = append(ns, tl.Function.Name)
	}
	slices.Sort(ns)
	return ns
}

// chatAnswer is an OpenAI chat completion with content, or with a call
// when call is a name and its arguments.
func chatAnswer(content string, call ...string) map[string]any {
	msg := map[string]any{"role": "assistant", "content": content}
	finish := "stop"
	if len(call) == 2 {
		msg["content"], finish = nil, "tool_calls"
		msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": call[0], "arguments": call[1]}}}
	}
	return map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}}
}

// fakeOpenAI is a loopback OpenAI chat-completions server answering from
// script in order (its last answer again when it runs out). It returns its
// URL and the requests it has had, to read once the chat has ended.
func fakeOpenAI(t *testing.T, script ...map[string]any) (string, func() []chatRequest) {
	t.Helper()
	var mu sync.Mutex
	var reqs []chatRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var q chatRequest
		_ = json.Unmarshal(b, &q)
		mu.Lock()
		n := len(reqs)
		reqs = append(reqs, q)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(script[min(n, len(script)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []chatRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reqs)
	}
}
