// Package modeltest holds what the model clients' tests share: one
// conversation that exercises every mapping a client makes (system prompts,
// parallel calls, results that are objects, arrays, plain text and
// failures, a call without arguments, an empty assistant turn) and a
// loopback server that records each request and answers from a script.
// The clients' golden files hold the requests the official SDKs sent for
// this conversation, so a lean client is held to the same wire format.
package modeltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/llm"
)

// Conversation is the conversation of the golden requests.
func Conversation() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleSystem, Content: "Be brief."},
		{Role: llm.RoleSystem, Content: "Use the tools."},
		{Role: llm.RoleUser, Content: "6*7? And echo hé <b>&."},
		{Role: llm.RoleAssistant, Content: "Working.", ToolCalls: []llm.ToolCall{
			{ID: "call_1", Name: "calculator", Arguments: json.RawMessage(`{"expression":"6*7"}`)},
			{ID: "call_2", Name: "echo", Arguments: json.RawMessage(`{"message":"hé <b>&"}`)},
			{ID: "call_3", Name: "echo", Arguments: json.RawMessage(`{"message":[1,"two"]}`)},
		}},
		{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "calculator",
			Result: &wield.Result{Tool: "calculator", OK: true, Output: json.RawMessage(`{"expression":"6*7","result":42}`)}},
		{Role: llm.RoleTool, ToolCallID: "call_2", ToolName: "echo", Content: "hé <b>&"},
		{Role: llm.RoleTool, ToolCallID: "call_3", ToolName: "echo",
			Result: &wield.Result{Tool: "echo", OK: true, Output: json.RawMessage(`[1,"two"]`)}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_4", Name: "calculator"}}},
		{Role: llm.RoleTool, ToolCallID: "call_4", ToolName: "calculator",
			Result: &wield.Result{Tool: "calculator", OK: false, ErrorType: wield.ErrValidation, Error: "missing property expression"}},
		{Role: llm.RoleAssistant},
		{Role: llm.RoleUser, Content: "Thanks."},
	}
}

// Tools are the tools of the golden requests: two with parameters, one
// (ping) whose schema is {"type":"object"}, as tools without parameters
// have it.
func Tools() []*wield.Tool {
	return []*wield.Tool{builtin.Calculator(), builtin.Echo(), {Name: "ping", InputSchema: &jsonschema.Schema{Type: "object"}}}
}

// RouteSchema is an input schema with what providers read differently: a
// $ref into $defs (one with a sibling description), additionalProperties
// false on every object, and a oneOf.
const RouteSchema = `{
	"type": "object",
	"$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
		"required": ["x", "y"], "additionalProperties": false}},
	"properties": {
		"from": {"$ref": "#/$defs/Point"},
		"to": {"$ref": "#/$defs/Point", "description": "Where to go"},
		"mode": {"oneOf": [{"type": "string", "enum": ["walk", "drive"]}, {"type": "integer", "minimum": 1}]}
	},
	"required": ["from", "to"],
	"additionalProperties": false
}`

// SchemaTool is a tool named name whose input schema is schema (JSON).
func SchemaTool(t testing.TB, name, schema string) *wield.Tool {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	return &wield.Tool{Name: name, Description: "Plan a " + name + ".", InputSchema: &s}
}

// geminiKeys are the fields of the Schema object the Gemini API documents
// for function declarations' parameters (an OpenAPI 3.0 subset).
var geminiKeys = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true, "enum": true,
	"maxItems": true, "minItems": true, "properties": true, "required": true, "minProperties": true,
	"maxProperties": true, "minLength": true, "maxLength": true, "pattern": true, "example": true,
	"anyOf": true, "propertyOrdering": true, "default": true, "items": true, "minimum": true, "maximum": true,
}

var geminiTypes = map[string]bool{"STRING": true, "NUMBER": true, "INTEGER": true, "BOOLEAN": true, "ARRAY": true, "OBJECT": true, "NULL": true}

// GeminiSchemaProblems lists what in v, a decoded "parameters" of a
// function declaration, lies outside the Schema object Gemini documents:
// unknown keywords ($ref, $defs, oneOf, additionalProperties, ...) and
// types that are not its upper-case names.
func GeminiSchemaProblems(v any) []string {
	var out []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		m, ok := v.(map[string]any)
		if !ok {
			out = append(out, path+": not an object")
			return
		}
		for k, sub := range m {
			switch {
			case !geminiKeys[k]:
				out = append(out, path+"/"+k+": not a Gemini schema field")
			case k == "type":
				if s, _ := sub.(string); !geminiTypes[s] {
					out = append(out, fmt.Sprintf("%s/type: %v is not a Gemini type", path, sub))
				}
			case k == "items":
				walk(sub, path+"/items")
			case k == "properties":
				props, _ := sub.(map[string]any)
				for name, p := range props {
					walk(p, path+"/properties/"+name)
				}
			case k == "anyOf":
				branches, _ := sub.([]any)
				for i, b := range branches {
					walk(b, fmt.Sprintf("%s/anyOf/%d", path, i))
				}
			}
		}
	}
	walk(v, "")
	return out
}

// Request is what the server saw of one request.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// Reply is one scripted answer.
type Reply struct {
	Status int
	Header map[string]string
	Body   string
}

// Server is a loopback provider that records requests and answers from a
// script (the last reply again when the script runs out).
type Server struct {
	URL    string
	mu     sync.Mutex
	reqs   []Request
	script []Reply
}

// Serve starts a Server closed when t ends.
func Serve(t testing.TB, script ...Reply) *Server {
	s := &Server{script: script}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: b})
		rep := Reply{Status: http.StatusNotFound, Body: `{"error":{"message":"no reply scripted"}}`}
		if len(s.script) > 0 {
			rep = s.script[min(n, len(s.script)-1)]
		}
		s.mu.Unlock()
		if rep.Header["Content-Type"] == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		for k, v := range rep.Header {
			w.Header().Set(k, v)
		}
		if rep.Status == 0 {
			rep.Status = http.StatusOK
		}
		w.WriteHeader(rep.Status)
		io.WriteString(w, rep.Body)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Requests are the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Golden is the part of a request a golden file keeps: the method, the
// path, the headers a provider reads and the decoded body.
type Golden struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header"`
	Body   any               `json:"body"`
}

// goldenHeaders are the headers a provider reads; the SDKs' own
// telemetry headers (X-Stainless-*, User-Agent) are not part of the API.
var goldenHeaders = []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Anthropic-Version", "Content-Type",
	"Openai-Organization", "Openai-Project"}

// GoldenOf is r as a golden file keeps it.
func GoldenOf(t testing.TB, r Request) Golden {
	t.Helper()
	g := Golden{Method: r.Method, Path: r.Path, Header: map[string]string{}}
	for _, h := range goldenHeaders {
		if v := r.Header.Get(h); v != "" {
			g.Header[h] = v
		}
	}
	if err := json.Unmarshal(r.Body, &g.Body); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return g
}

// CheckRequests holds every request srv received to the golden file at
// path (rewritten when update is set): the end of each client's golden test.
func CheckRequests(t testing.TB, srv *Server, path string, update bool) {
	t.Helper()
	var got []Golden
	for _, r := range srv.Requests() {
		got = append(got, GoldenOf(t, r))
	}
	CheckGolden(t, path, update, got)
}

// CheckAnswer is the body of each client's fuzz test of reading answers:
// a client whose every request gets body (through [Canned]) returns an
// answer or an error, never panics, and every call it reports has
// arguments. newModel makes the client over the HTTP client it is given.
func CheckAnswer(t *testing.T, body []byte, newModel func(*http.Client) (llm.Model, error)) {
	t.Helper()
	c, err := newModel(&http.Client{Transport: Canned{Body: body}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		return
	}
	for _, tc := range resp.Message.ToolCalls {
		if len(tc.Arguments) == 0 {
			t.Errorf("call %q has no arguments", tc.Name)
		}
	}
	_, _ = json.Marshal(resp)
}

// CheckGolden compares got with the golden file at path, or rewrites the
// file when update is set.
func CheckGolden(t testing.TB, path string, update bool, got []Golden) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the files show text as the provider reads it
	enc.SetIndent("", "  ")
	if err := enc.Encode(got); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	wantb, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	var want, have any
	if err := json.Unmarshal(wantb, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &have); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("requests differ from %s (-want +got):\n%s", path, diff)
	}
}

// Canned is an http.RoundTripper that answers every request with Body
// and status 200, without a network: for fuzzing a client's reading of
// answers.
type Canned struct{ Body []byte }

// RoundTrip answers with the canned body.
func (c Canned) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c.Body)), Request: r}, nil
}
