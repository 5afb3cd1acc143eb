package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

var hi = []llm.Message{{Role: llm.RoleUser, Content: "hi"}}

// TestAnswers reads Messages API bodies as Anthropic documents them:
// text blocks joined, tool_use blocks as calls, thinking left out.
func TestAnswers(t *testing.T) {
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[
		{"type":"thinking","thinking":"hmm","signature":"s"},
		{"type":"text","text":"Let me see."},
		{"type":"tool_use","id":"toolu_1","name":"calculator","input":{"expression":"6*7"}},
		{"type":"text","text":"And ping."},
		{"type":"tool_use","id":"toolu_2","name":"ping","input":null}],
		"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":9}}`
	srv := modeltest.Serve(t, modeltest.Reply{Body: body})
	c, _ := anthropic.NewClient(anthropic.ClientOptions{Model: "claude-test", BaseURL: srv.URL, APIKey: "k"})
	got, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.ModelResponse{StopReason: "tool_use", Message: llm.Message{Role: llm.RoleAssistant, Content: "Let me see.\nAnd ping.", ToolCalls: []llm.ToolCall{
		{ID: "toolu_1", Name: "calculator", Arguments: json.RawMessage(`{"expression":"6*7"}`)},
		{ID: "toolu_2", Name: "ping", Arguments: json.RawMessage(`{}`)}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestErrors: an error answer says its status, and Anthropic's error type
// and message, never an HTML page; 429, 529 and 5xx are transient.
func TestErrors(t *testing.T) {
	for _, tt := range []struct {
		rep       modeltest.Reply
		want      string
		transient bool
	}{
		{modeltest.Reply{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}, "anthropic: 401 Unauthorized: authentication_error: invalid x-api-key", false},
		{modeltest.Reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, "anthropic: 529: overloaded_error: Overloaded", true},
		{modeltest.Reply{Status: 429, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`}, "anthropic: 429 Too Many Requests: rate_limit_error: slow down", true},
		{modeltest.Reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: `<html>Bad gateway</html>`}, "anthropic: 502 Bad Gateway", true},
	} {
		srv := modeltest.Serve(t, tt.rep)
		c, _ := anthropic.NewClient(anthropic.ClientOptions{Model: "m", BaseURL: srv.URL, APIKey: "k", MaxRetries: -1})
		_, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
		if err == nil || err.Error() != tt.want || wield.IsTransient(err) != tt.transient {
			t.Errorf("got %v (transient %v), want %q (transient %v)", err, wield.IsTransient(err), tt.want, tt.transient)
		}
	}
}

// TestRefusals: what the SDK refused before sending is refused with a
// clear error, and nothing is sent.
func TestRefusals(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	srv := modeltest.Serve(t)
	for _, tt := range []struct {
		opts anthropic.ClientOptions
		req  *llm.ModelRequest
		want string
	}{
		{anthropic.ClientOptions{Model: "m"}, &llm.ModelRequest{Messages: hi}, "no API key"},
		{anthropic.ClientOptions{Model: "m", APIKey: "k"}, &llm.ModelRequest{Messages: hi, MaxTokens: 32000}, "max_tokens 32000"},
		{anthropic.ClientOptions{Model: "claude-opus-4-0", APIKey: "k", MaxTokens: 10000}, &llm.ModelRequest{Messages: hi}, "ask for 8192 at most"},
		{anthropic.ClientOptions{Model: "m", APIKey: "k"}, &llm.ModelRequest{Messages: []llm.Message{{Role: "narrator"}}}, `role "narrator"`},
		{anthropic.ClientOptions{Model: "m", APIKey: "k"}, &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleAssistant,
			ToolCalls: []llm.ToolCall{{ID: "x", Name: "echo", Arguments: json.RawMessage(`{"broken`)}}}}}, "anthropic:"},
	} {
		tt.opts.BaseURL = srv.URL
		c, _ := anthropic.NewClient(tt.opts)
		if _, err := c.Generate(context.Background(), tt.req); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	if _, err := anthropic.NewClient(anthropic.ClientOptions{}); err == nil {
		t.Error("a client without a model")
	}
}

// TestEnvironment: the base URL and the credentials the SDK read from the
// environment.
func TestEnvironment(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL+"/")
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok")
	c, _ := anthropic.NewClient(anthropic.ClientOptions{Model: "m"})
	if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	c, _ = anthropic.NewClient(anthropic.ClientOptions{Model: "m"})
	if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()
	if r[0].Path != "/v1/messages" || r[0].Header.Get("Authorization") != "Bearer tok" || r[0].Header.Get("X-Api-Key") != "" || r[1].Header.Get("X-Api-Key") != "env-key" {
		t.Errorf("requests %+v", r)
	}
}
