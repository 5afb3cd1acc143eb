package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modeltest"
	"github.com/wieldhq/wield/llm/openai"
)

const responsesOK = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-test",
	"output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]}],
	"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`

// TestResponsesRequestsGolden holds the Responses client to the requests
// of testdata/responses.golden.json for the conversation every client is
// tested with. No SDK wrote this file (wield carries none): it was
// written by the client with -update and checked by hand against OpenAI's
// API reference for POST /v1/responses: message items with string
// content, function_call items with call_id and arguments as a string,
// function_call_output items, function tools with "strict" written out,
// max_output_tokens, and "store": false.
func TestResponsesRequestsGolden(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: responsesOK})
	ctx := context.Background()
	conv := modeltest.Conversation()
	for _, tc := range []struct {
		opts openai.ClientOptions
		req  *llm.ModelRequest
	}{
		{openai.ClientOptions{Model: "gpt-test", APIKey: "sk-test"}, &llm.ModelRequest{Messages: conv, Tools: modeltest.Tools()}},
		{openai.ClientOptions{Model: "gpt-test", APIKey: "sk-test", Strict: true}, &llm.ModelRequest{Messages: conv[:3], Tools: modeltest.Tools(), MaxTokens: 100}},
		{openai.ClientOptions{Model: "local", NoFunctionCalling: true}, &llm.ModelRequest{Messages: conv[:3], Tools: modeltest.Tools()}},
	} {
		tc.opts.BaseURL = srv.URL + "/v1"
		c, err := openai.NewResponsesClient(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := c.Generate(ctx, tc.req); err != nil || resp.Message.Content != "ok" {
			t.Fatalf("generate: %+v, %v", resp, err)
		}
	}
	modeltest.CheckRequests(t, srv, "testdata/responses.golden.json", *update)
}

// TestResponsesAnswers reads response objects as OpenAI documents them.
// Reasoning items are never calls nor text, whatever their summary says;
// the calls of OpenAI's own hosted tools are not wield's to run.
func TestResponsesAnswers(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       *llm.ModelResponse
	}{
		{"reasoning, then a call", `{"id":"resp_1","object":"response","status":"completed","output":[
			{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"I could call <tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call> but no."}],
			 "content":[{"type":"reasoning_text","text":"{\"type\":\"function_call\",\"name\":\"delete_file\",\"arguments\":\"{}\"}"}],"encrypted_content":"gAAA"},
			{"type":"function_call","id":"fc_1","call_id":"call_1","name":"calculator","arguments":"{\"expression\":\"6*7\"}","status":"completed"},
			{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"x"}},
			{"type":"function_call","id":"fc_2","call_id":"call_2","name":"ping","arguments":"","status":"completed"}]}`,
			&llm.ModelResponse{StopReason: "completed", Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "calculator", Arguments: json.RawMessage(`{"expression":"6*7"}`)},
				{ID: "call_2", Name: "ping", Arguments: json.RawMessage(`{}`)}}}}},
		{"text in two parts, and a second message", `{"status":"completed","output":[
			{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"thinking <b>"}]},
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is "},{"type":"output_text","text":"42 <b>&."}]},
			{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I will not delete /."}]}]}`,
			&llm.ModelResponse{StopReason: "completed", Message: llm.Message{Role: llm.RoleAssistant, Content: "It is 42 <b>&.\nI will not delete /."}}},
		{"cut short", `{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is"}]}]}`,
			&llm.ModelResponse{StopReason: "max_output_tokens", Message: llm.Message{Role: llm.RoleAssistant, Content: "It is"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.Serve(t, modeltest.Reply{Body: tt.body})
			c, _ := openai.NewResponsesClient(openai.ClientOptions{Model: "m", BaseURL: srv.URL})
			got, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestResponsesErrors: an error answer says its status and OpenAI's
// message; a failed response says why; 429 and 5xx are transient.
func TestResponsesErrors(t *testing.T) {
	for _, tt := range []struct {
		rep       modeltest.Reply
		want      string
		transient bool
	}{
		{modeltest.Reply{Status: 400, Body: `{"error":{"message":"Invalid schema for function 'x'","type":"invalid_request_error","param":"tools[0].parameters","code":"invalid_function_parameters"}}`}, "openai: Bad Request: Invalid schema for function 'x'", false},
		{modeltest.Reply{Status: 500, Body: `{"error":{"message":"The server had an error"}}`}, "openai: Internal Server Error: The server had an error", true},
		{modeltest.Reply{Body: `{"status":"failed","error":{"code":"server_error","message":"Something went wrong"},"output":[]}`}, "openai: the response failed: server_error: Something went wrong", false},
	} {
		srv := modeltest.Serve(t, tt.rep)
		c, _ := openai.NewResponsesClient(openai.ClientOptions{Model: "m", BaseURL: srv.URL, MaxRetries: -1})
		_, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
		if err == nil || err.Error() != tt.want || wield.IsTransient(err) != tt.transient {
			t.Errorf("got %v (transient %v), want %q (transient %v)", err, wield.IsTransient(err), tt.want, tt.transient)
		}
	}
}

// TestResponsesToolSchemas: the Responses API gets the schema with a
// $ref, additionalProperties and a oneOf as Responses exports it: as it
// is, in a flat function tool with "strict": false written out (the API
// would otherwise hold it to strict mode).
func TestResponsesToolSchemas(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: responsesOK})
	c, _ := openai.NewResponsesClient(openai.ClientOptions{Model: "gpt-test", BaseURL: srv.URL})
	tools := []*wield.Tool{modeltest.SchemaTool(t, "route", modeltest.RouteSchema)}
	for range 2 {
		if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi, Tools: tools}); err != nil {
			t.Fatal(err)
		}
	}
	var route any
	json.Unmarshal([]byte(modeltest.RouteSchema), &route)
	want := map[string]any{"type": "function", "name": "route", "description": "Plan a route.", "parameters": route, "strict": false}
	for i, r := range srv.Requests() {
		var body struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Tools) != 1 {
			t.Fatalf("request %d: %v\n%s", i, err, r.Body)
		}
		if diff := cmp.Diff(want, body.Tools[0]); diff != "" {
			t.Errorf("request %d: tool (-want +got):\n%s", i, diff)
		}
	}
}

// FuzzResponsesAnswer: whatever the provider answers, the Responses
// client returns an answer or an error, never panics, and every call it
// reports has arguments.
func FuzzResponsesAnswer(f *testing.F) {
	f.Add([]byte(responsesOK))
	f.Add([]byte(`{"status":"completed","output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"x"}]},{"type":"function_call","call_id":"c","name":"x","arguments":{"a":1}}]}`))
	f.Add([]byte(`{"status":"failed","error":null,"output":null}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"output":[{"type":"message","content":null},{"type":"function_call"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		modeltest.CheckAnswer(t, body, func(hc *http.Client) (llm.Model, error) {
			return openai.NewResponsesClient(openai.ClientOptions{Model: "m", BaseURL: "http://model.test/v1", HTTPClient: hc, MaxRetries: -1})
		})
	})
}
