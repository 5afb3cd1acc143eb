package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modeltest"
	"github.com/wieldhq/wield/llm/openai"
)

// TestAnswers reads chat.completion bodies as OpenAI documents them, and
// as looser servers send them.
func TestAnswers(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       *llm.ModelResponse
	}{
		{"calls, content null", `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
			{"id":"c1","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"6*7\"}"}},
			{"id":"c2","type":"custom","custom":{"name":"grammar","input":"x"}},
			{"id":"c3","type":"function","function":{"name":"ping","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
			&llm.ModelResponse{StopReason: "tool_calls", Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "calculator", Arguments: json.RawMessage(`{"expression":"6*7"}`)},
				{ID: "c3", Name: "ping", Arguments: json.RawMessage(`{}`)}}}}},
		{"arguments as an object", `{"choices":[{"message":{"content":"","tool_calls":[{"id":"c1","function":{"name":"echo","arguments":{"message":"hi"}}}]},"finish_reason":"tool_calls"}]}`,
			&llm.ModelResponse{StopReason: "tool_calls", Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}}}}},
		{"text", `{"choices":[{"message":{"role":"assistant","content":"42 <b>","refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`,
			&llm.ModelResponse{StopReason: "stop", Message: llm.Message{Role: llm.RoleAssistant, Content: "42 <b>"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.Serve(t, modeltest.Reply{Body: tt.body})
			c, _ := openai.NewClient(openai.ClientOptions{Model: "m", BaseURL: srv.URL})
			got, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrors: an error answer says its status and OpenAI's message, never
// an HTML page; 429 and 5xx are transient; bad input is refused before
// anything is sent.
func TestErrors(t *testing.T) {
	for _, tt := range []struct {
		rep       modeltest.Reply
		want      string
		transient bool
	}{
		{modeltest.Reply{Status: 400, Body: `{"error":{"message":"bad model","type":"invalid_request_error","param":"model","code":null}}`}, "openai: Bad Request: bad model", false},
		{modeltest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided"}}`}, "openai: Unauthorized: Incorrect API key provided", false},
		{modeltest.Reply{Status: 429, Body: `{"error":{"message":"Rate limit reached"}}`}, "openai: Too Many Requests: Rate limit reached", true},
		{modeltest.Reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: `<html><body>Bad gateway</body></html>`}, "openai: Bad Gateway", true},
		{modeltest.Reply{Body: `{"choices":[]}`}, "openai: the answer has no choices", false},
	} {
		srv := modeltest.Serve(t, tt.rep)
		c, _ := openai.NewClient(openai.ClientOptions{Model: "m", BaseURL: srv.URL, MaxRetries: -1})
		_, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		if err == nil || err.Error() != tt.want || wield.IsTransient(err) != tt.transient {
			t.Errorf("got %v (transient %v), want %q (transient %v)", err, wield.IsTransient(err), tt.want, tt.transient)
		}
	}
	c, _ := openai.NewClient(openai.ClientOptions{Model: "m", BaseURL: "http://127.0.0.1:1"})
	if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: "narrator"}}}); err == nil {
		t.Error("a message of an unknown role was sent")
	}
	if _, err := openai.NewClient(openai.ClientOptions{}); err == nil {
		t.Error("a client without a model")
	}
}

// TestRetriesAndEnvironment: the default two retries, and the base URL
// and headers the SDK read from the environment.
func TestRetriesAndEnvironment(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Status: 503, Header: map[string]string{"Retry-After-Ms": "1"}, Body: `{"error":{"message":"overloaded"}}`},
		modeltest.Reply{Body: okReply})
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1/")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Team: search\nbroken line")
	c, _ := openai.NewClient(openai.ClientOptions{Model: "m", APIKey: "sk-1"})
	if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Path != "/v1/chat/completions" || reqs[1].Header.Get("X-Team") != "search" || reqs[1].Header.Get("Authorization") != "Bearer sk-1" {
		t.Fatalf("requests %+v", reqs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Generate(ctx, &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}
