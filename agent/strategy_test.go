package agent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
)

// refusingModel is a model whose server refuses native tools, as Ollama
// does for a model without a tools template: any request with tools fails
// with llm.ErrToolsUnsupported; a request without them gets the next reply
// of its script.
type refusingModel struct {
	mu       sync.Mutex
	replies  []string
	requests []*llm.ModelRequest
}

func (m *refusingModel) SupportsFunctionCalling() bool { return true }

func (m *refusingModel) Generate(_ context.Context, req *llm.ModelRequest) (*llm.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, req)
	if len(req.Tools) > 0 {
		return nil, fmt.Errorf("fake: Bad Request: registry.ollama.ai/library/gemma3:4b does not support tools: %w", llm.ErrToolsUnsupported)
	}
	if len(m.replies) == 0 {
		return nil, errors.New("fake: script exhausted")
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	return &llm.ModelResponse{Message: llm.Message{Role: llm.RoleAssistant, Content: r}}, nil
}

func (m *refusingModel) sent() []*llm.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*llm.ModelRequest(nil), m.requests...)
}

// TestLoopFallsBackWhenToolsRefused: a refusal of native tools is answered
// by asking the same turn again with the tools in the prompt, the loop
// says so once, the refusal is remembered for that model (the next run,
// of this loop or another, asks with the prompt at once), and the refused
// request is not a step.
func TestLoopFallsBackWhenToolsRefused(t *testing.T) {
	reg, e := newWorld(t)
	m := &refusingModel{replies: []string{
		"<tool_call>\n  <name>echo</name>\n  <params>\n    <message><![CDATA[a<b && c>d]]></message>\n  </params>\n</tool_call>",
		"It said a<b && c>d.",
		"Again: done.",
	}}
	var notices []string
	loop := agent.NewLoop(e, &agent.LoopOptions{OnFallback: func(name string, err error) {
		notices = append(notices, name+": "+err.Error())
	}})
	a := &agent.Agent{Name: "local", Model: m, Toolkit: toolkit(t, reg, "local", "echo")}
	out, err := loop.Run(context.Background(), a, "conv-fb", []llm.Message{{Role: llm.RoleUser, Content: "echo a<b && c>d"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "It said a<b && c>d." || out.Strategy != llm.StrategyPrompt || out.Steps != 2 {
		t.Errorf("answer %q, strategy %s, steps %d; want the answer after one call, structured_output, 2 steps", out.Answer, out.Strategy, out.Steps)
	}
	if out.Summary.TotalCalls != 1 || out.Summary.SuccessfulCalls != 1 {
		t.Errorf("summary %+v, want the one echo call, succeeded", out.Summary)
	}
	reqs := m.sent()
	if len(reqs) != 3 || len(reqs[0].Tools) != 1 || len(reqs[1].Tools) != 0 || len(reqs[2].Tools) != 0 {
		t.Fatalf("%d requests; want 3: tools natively (refused), then twice in the prompt", len(reqs))
	}
	sys := reqs[1].Messages[0]
	if sys.Role != llm.RoleSystem || !strings.Contains(sys.Content, "### echo") || !strings.Contains(sys.Content, "<tool_call>") {
		t.Errorf("the retried request's first message is %s %q, want the tools in the XML call format", sys.Role, sys.Content)
	}
	if res := reqs[2].Messages[len(reqs[2].Messages)-1].Content; !strings.Contains(res, "<tool_result>") || !strings.Contains(res, "a<b && c>d") {
		t.Errorf("the result went back as %q, want an XML tool_result with the text as it is", res)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "does not support tools") {
		t.Errorf("notices %q, want one naming the refusal", notices)
	}

	// The next run of the loop offers that model its tools in the prompt
	// from the start, and says nothing more.
	out, err = loop.Run(context.Background(), a, "conv-fb", append(out.Messages, llm.Message{Role: llm.RoleUser, Content: "again"}))
	if err != nil || out.Answer != "Again: done." || out.Strategy != llm.StrategyPrompt || out.Steps != 1 {
		t.Fatalf("second run: %+v, %v", out, err)
	}
	if reqs := m.sent(); len(reqs) != 4 || len(reqs[3].Tools) != 0 {
		t.Errorf("second run sent %d requests in all; want one more, without native tools", len(reqs))
	}
	if len(notices) != 1 {
		t.Errorf("notices %q, want still one", notices)
	}

	// Another loop knows that model already: it asks in the prompt at
	// once, and says nothing.
	m.replies = append(m.replies, "From another loop.")
	var others []string
	out, err = agent.NewLoop(e, &agent.LoopOptions{OnFallback: func(_ string, err error) { others = append(others, err.Error()) }}).
		Run(context.Background(), a, "c2", []llm.Message{{Role: llm.RoleUser, Content: "hi"}})
	if err != nil || out.Answer != "From another loop." || len(m.sent()) != 5 || len(m.sent()[4].Tools) != 0 || len(others) != 0 {
		t.Errorf("another loop: %+v, %v, %d requests, notices %q", out, err, len(m.sent()), others)
	}

	// Another model is asked natively first: what one server refuses says
	// nothing of another.
	other := &refusingModel{replies: []string{"fine"}}
	out, err = agent.NewLoop(e, nil).Run(context.Background(), &agent.Agent{Name: "x", Model: other, Toolkit: a.Toolkit}, "c3", []llm.Message{{Role: llm.RoleUser, Content: "hi"}})
	if err != nil || out.Answer != "fine" || len(other.sent()) != 2 {
		t.Errorf("another model: %+v, %v, %d requests", out, err, len(other.sent()))
	}
}

// TestLoopRefusalWithoutFallback: when the output strategy forbids the
// fallback, the refusal stops the run and the error says what to change.
func TestLoopRefusalWithoutFallback(t *testing.T) {
	reg, e := newWorld(t)
	m := &refusingModel{replies: []string{"never"}}
	called := false
	loop := agent.NewLoop(e, &agent.LoopOptions{OnFallback: func(string, error) { called = true }})
	a := &agent.Agent{Name: "strict", Model: m, Toolkit: toolkit(t, reg, "strict", "echo"), Strategy: llm.OutputStrategy{FunctionCalling: true}}
	_, err := loop.Run(context.Background(), a, "c", []llm.Message{{Role: llm.RoleUser, Content: "hi"}})
	if !errors.Is(err, llm.ErrToolsUnsupported) || !strings.Contains(err.Error(), "set fallback_to_structured_output: true in the agent's output_strategy") {
		t.Errorf("got %v, want the refusal and what to change", err)
	}
	if called || len(m.sent()) != 1 {
		t.Errorf("fell back (%v) or asked again (%d requests)", called, len(m.sent()))
	}
}

// TestLoopJSONPromptFormat: an agent whose output strategy chooses the
// JSON prompt format is given the tools as JSON, its JSON calls run, and
// the results go back as the JSON fallback's tool messages.
func TestLoopJSONPromptFormat(t *testing.T) {
	reg, e := newWorld(t)
	m := &refusingModel{replies: []string{`{"name": "echo", "parameters": {"message": "a<b"}}`, "done"}}
	a := &agent.Agent{Name: "j", Model: m, Toolkit: toolkit(t, reg, "j", "echo"),
		Strategy: llm.OutputStrategy{FunctionCalling: false, FallbackToStructuredOutput: true, PromptFormat: llm.PromptJSON}}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "c", []llm.Message{{Role: llm.RoleUser, Content: "echo a<b"}})
	if err != nil || out.Answer != "done" || out.Summary.SuccessfulCalls != 1 {
		t.Fatalf("got %+v, %v", out, err)
	}
	reqs := m.sent()
	if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, "Parameters (JSON Schema):") || strings.Contains(sys, "<tool_call>") {
		t.Errorf("system prompt %q, want the JSON instructions", sys)
	}
	if res := reqs[1].Messages[len(reqs[1].Messages)-1].Content; res != `{"tool_name":"echo","output":{"message":"a<b"}}` {
		t.Errorf("result %q, want the JSON tool message", res)
	}
}

// TestLoopFallbackOllamaServer: the same through the OpenAI-compatible
// client, against a server that answers as Ollama does (400, its error
// body) whenever a request carries tools.
func TestLoopFallbackOllamaServer(t *testing.T) {
	reg, e := newWorld(t)
	var mu sync.Mutex
	turn := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(body), `"tools"`) {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"registry.ollama.ai/library/gemma3:4b does not support tools","type":"api_error","param":null,"code":null}}`)
			return
		}
		mu.Lock()
		turn++
		n := turn
		mu.Unlock()
		if n == 1 {
			io.WriteString(w, openAIReply("<tool_call><name>calculator</name><params><expression><![CDATA[6*7]]></expression></params></tool_call>"))
			return
		}
		io.WriteString(w, openAIReply("42"))
	}))
	t.Cleanup(srv.Close)
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gemma3:4b", BaseURL: srv.URL + "/v1", MaxRetries: -1})
	var notices int
	a := &agent.Agent{Name: "local", Model: m, Toolkit: toolkit(t, reg, "local", "calculator")}
	out, err := agent.NewLoop(e, &agent.LoopOptions{OnFallback: func(string, error) { notices++ }}).Run(context.Background(), a, "c", []llm.Message{{Role: llm.RoleUser, Content: "6*7?"}})
	if err != nil || out.Answer != "42" || out.Summary.SuccessfulCalls != 1 || notices != 1 {
		t.Fatalf("got %+v, %v, %d notices", out, err, notices)
	}
}

// TestLoopExplicitPromptStrategy: an output strategy written with
// function_calling false (as an agent file gives it: the prompt format
// set) offers the tools in the prompt even to a model with function
// calling; only the zero value means the defaults.
func TestLoopExplicitPromptStrategy(t *testing.T) {
	reg, e := newWorld(t)
	m := &refusingModel{replies: []string{"no calls"}}
	a := &agent.Agent{Name: "p", Model: m, Toolkit: toolkit(t, reg, "p", "echo"), Strategy: llm.OutputStrategy{PromptFormat: llm.PromptXML}}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "c", []llm.Message{{Role: llm.RoleUser, Content: "hi"}})
	if err != nil || out.Strategy != llm.StrategyPrompt || len(m.sent()) != 1 || len(m.sent()[0].Tools) != 0 {
		t.Fatalf("got %+v, %v: want the prompt strategy at once", out, err)
	}
}

// TestOnFallbackPanics: an OnFallback that panics does not end the run:
// the fallback happens, the answer arrives, the panic is counted.
func TestOnFallbackPanics(t *testing.T) {
	before := wield.CallbackPanics()
	reg, e := newWorld(t)
	m := &refusingModel{replies: []string{"fine"}}
	loop := agent.NewLoop(e, &agent.LoopOptions{OnFallback: func(string, error) { panic("OnFallback bug") }})
	a := &agent.Agent{Name: "p", Model: m, Toolkit: toolkit(t, reg, "p", "echo")}
	out, err := loop.Run(context.Background(), a, "c", []llm.Message{{Role: llm.RoleUser, Content: "hi"}})
	if err != nil || out.Answer != "fine" || out.Strategy != llm.StrategyPrompt {
		t.Fatalf("got %+v, %v", out, err)
	}
	if got := panics(wield.CallbackAgentOnFallback, before); got != 1 {
		t.Errorf("agent_on_fallback panics counted: %d, want 1", got)
	}
}
