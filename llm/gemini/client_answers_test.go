package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

var hi = []llm.Message{{Role: llm.RoleUser, Content: "hi"}}

// TestAnswers reads generateContent bodies as the Gemini API documents
// them: thoughts left out, text parts joined, calls without an id named by
// their place.
func TestAnswers(t *testing.T) {
	body := `{"candidates":[{"content":{"role":"model","parts":[
		{"text":"thinking...","thought":true},
		{"text":"It is "},{"text":"42."},
		{"functionCall":{"name":"ping"},"thoughtSignature":"c2ln"},
		{"functionCall":{"id":"fc_9","name":"calculator","args":{"expression":"6*7"}}}]},
		"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5},"modelVersion":"gemini-test"}`
	srv := modeltest.Serve(t, modeltest.Reply{Body: body})
	c, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "gemini-test", BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.ModelResponse{StopReason: "STOP", Message: llm.Message{Role: llm.RoleAssistant, Content: "It is 42.", ToolCalls: []llm.ToolCall{
		{ID: "call_?_3", Name: "ping", Arguments: json.RawMessage(`{}`), Signature: "c2ln"},
		{ID: "fc_9", Name: "calculator", Arguments: json.RawMessage(`{"expression":"6*7"}`)}}}}
	id := got.Message.ToolCalls[0].ID
	if !strings.HasPrefix(id, "call_") || !strings.HasSuffix(id, "_3") {
		t.Errorf("call without an id named %q, want call_ID_3", id)
	}
	got.Message.ToolCalls[0].ID = "call_?_3"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	again, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
	if err != nil || again.Message.ToolCalls[0].ID == id {
		t.Errorf("two answers' calls without an id are both named %q (%v)", id, err)
	}
}

// TestThoughtSignatures: the calls the model made go back with their
// thought signatures, as Gemini 3 requires, matched by call, also for
// calls Gemini gave no id; a call without a signature goes without one.
func TestThoughtSignatures(t *testing.T) {
	first := `{"candidates":[{"content":{"role":"model","parts":[
		{"functionCall":{"name":"echo","args":{"message":"a"}},"thoughtSignature":"c2lnLUE="},
		{"functionCall":{"name":"echo","args":{"message":"b"}}},
		{"functionCall":{"id":"fc_3","name":"calculator","args":{"expression":"1"}},"thoughtSignature":"c2lnLUM="}]},"finishReason":"STOP"}]}`
	srv := modeltest.Serve(t, modeltest.Reply{Body: first}, modeltest.Reply{Body: okReply})
	c, _ := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "gemini-3-test", BaseURL: srv.URL, APIKey: "k"})
	resp, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
	if err != nil {
		t.Fatal(err)
	}
	msgs := append(slices.Clone(hi), resp.Message)
	for _, tc := range resp.Message.ToolCalls {
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Content: "done"})
	}
	if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionCall *struct {
					Name string         `json:"name"`
					Args map[string]any `json:"args"`
				} `json:"functionCall"`
				ThoughtSignature string `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(srv.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range body.Contents[1].Parts {
		got = append(got, fmt.Sprint(p.FunctionCall.Args, " ", p.ThoughtSignature))
	}
	want := []string{"map[message:a] c2lnLUE=", "map[message:b] ", "map[expression:1] c2lnLUM="}
	if body.Contents[1].Role != "model" || !cmp.Equal(want, got) {
		t.Errorf("the model's turn went back as %v (role %s), want %v", got, body.Contents[1].Role, want)
	}
}

// TestErrors: an error answer says its code, Google's status and message,
// never an HTML page; 429 and 5xx are transient; Gemini is not retried.
func TestErrors(t *testing.T) {
	for _, tt := range []struct {
		rep       modeltest.Reply
		want      string
		transient bool
	}{
		{modeltest.Reply{Status: 400, Body: `{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}`}, "gemini: 400 INVALID_ARGUMENT: API key not valid.", false},
		{modeltest.Reply{Status: 429, Body: `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`}, "gemini: 429 RESOURCE_EXHAUSTED: Quota exceeded", true},
		{modeltest.Reply{Status: 503, Header: map[string]string{"Content-Type": "text/html"}, Body: `<html>unavailable</html>`}, "gemini: 503 Service Unavailable", true},
		{modeltest.Reply{Body: `{"promptFeedback":{"blockReason":"SAFETY"}}`}, "gemini: the answer has no candidates", false},
	} {
		srv := modeltest.Serve(t, tt.rep, modeltest.Reply{Body: okReply})
		c, _ := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "m", BaseURL: srv.URL, APIKey: "k"})
		_, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
		if err == nil || err.Error() != tt.want || wield.IsTransient(err) != tt.transient {
			t.Errorf("got %v (transient %v), want %q (transient %v)", err, wield.IsTransient(err), tt.want, tt.transient)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	}
	c, _ := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "m", BaseURL: "http://127.0.0.1:1", APIKey: "k"})
	bad := []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "echo", Arguments: json.RawMessage(`[1]`)}}}}
	if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: bad}); err == nil || !strings.Contains(err.Error(), "arguments of call echo") {
		t.Errorf("arguments that are not an object: %v", err)
	}
}

// TestOptions: the key and base URL from the environment as the SDK read
// them, and the refusals of NewClient.
func TestOptions(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	if _, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "m"}); err == nil || !strings.Contains(err.Error(), "no API key") {
		t.Errorf("no key: %v", err)
	}
	if _, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "m/../x", APIKey: "k"}); err == nil {
		t.Error("a model name with .. was taken")
	}
	t.Setenv("GEMINI_API_KEY", "gk")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
	c, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "tunedModels/mine"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_API_KEY", "goog")
	c, _ = gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "m"})
	if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()
	if r[0].Path != "/v1beta/tunedModels/mine:generateContent" || r[0].Header.Get("X-Goog-Api-Key") != "gk" || r[1].Header.Get("X-Goog-Api-Key") != "goog" {
		t.Errorf("requests %+v", r)
	}
}

// TestArgsNotObject: a call whose args are not an object (a hostile or
// broken server's) is read as it came, for the engine to refuse as that
// call's result, not the whole answer's failure.
func TestArgsNotObject(t *testing.T) {
	body := `{"candidates":[{"content":{"role":"model","parts":[
		{"functionCall":{"id":"a","name":"echo","args":[1,2]}},
		{"functionCall":{"id":"b","name":"echo","args":{"message":"hi"}}}]},"finishReason":"STOP"}]}`
	srv := modeltest.Serve(t, modeltest.Reply{Body: body})
	c, _ := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "m", BaseURL: srv.URL, APIKey: "k"})
	got, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "a", Name: "echo", Arguments: json.RawMessage(`[1,2]`)}, {ID: "b", Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}}
	if diff := cmp.Diff(want, got.Message.ToolCalls); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
