//go:build unix

package journeys

// A model on loopback that answers in a provider's documented wire format,
// scripted per journey: OpenAI's chat completions (POST
// /v1/chat/completions, the default) and Responses API (POST
// /v1/responses), Anthropic's Messages API (POST /v1/messages) and Gemini's
// generateContent (POST /v1beta/models/NAME:generateContent). Like the real
// services, each refuses with its own 400 a request whose tool schemas it
// does not accept, and checks its credentials header. Fakes are for the
// internet only: a real model is not reachable from the tests.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The wire formats a fake model speaks.
const (
	wireChat      = "chat"
	wireResponses = "responses"
	wireAnthropic = "anthropic"
	wireGemini    = "gemini"
)

// chatRequest is what the fake reads of a request.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id,omitempty"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// text is the content of message i as text.
func (r chatRequest) text(i int) string {
	switch c := r.Messages[i].Content.(type) {
	case string:
		return c
	case []any:
		var s string
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					s += t
				}
			}
		}
		return s
	}
	return ""
}

// fakeModel answers each request with the next reply of its script (the
// last one again when the script runs out) and keeps the requests.
type fakeModel struct {
	srv  *httptest.Server
	wire string
	// key is the credential the fake expects, in the wire's header
	// (Authorization: Bearer, x-api-key, x-goog-api-key); "" takes any.
	key     string
	mu      sync.Mutex
	reqs    []chatRequest
	raw     [][]byte
	headers []http.Header
	script  []func(chatRequest) any
}

// newFakeModel serves the script on addr ("" for a port of its own); ok is
// false when addr is taken.
func newFakeModel(t *testing.T, addr string, script ...func(chatRequest) any) (m *fakeModel, ok bool) {
	t.Helper()
	return newFakeProvider(t, wireChat, "", addr, script...)
}

// newFakeProvider is newFakeModel speaking wire, expecting key. Requests
// of the other wires are kept raw (chatRequest stays empty for them).
func newFakeProvider(t *testing.T, wire, key, addr string, script ...func(chatRequest) any) (m *fakeModel, ok bool) {
	t.Helper()
	m = &fakeModel{script: script, wire: wire, key: key}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(m.serve))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, false
		}
		srv.Listener.Close()
		srv.Listener = l
	}
	srv.Start()
	t.Cleanup(srv.Close)
	m.srv = srv
	return m, true
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(wireError(m.wire, status, msg))
	}
	path, keyHeader, keyPrefix := map[string]string{
		wireChat: "/v1/chat/completions", wireResponses: "/v1/responses", wireAnthropic: "/v1/messages",
	}[m.wire], "Authorization", "Bearer "
	switch m.wire {
	case wireAnthropic:
		keyHeader, keyPrefix = "X-Api-Key", ""
	case wireGemini:
		keyHeader, keyPrefix = "X-Goog-Api-Key", ""
		if strings.HasPrefix(r.URL.Path, "/v1beta/models/") && strings.HasSuffix(r.URL.Path, ":generateContent") {
			path = r.URL.Path
		}
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Path != path:
		fail(http.StatusNotFound, "not found: "+r.URL.Path)
		return
	case m.key != "" && r.Header.Get(keyHeader) != keyPrefix+m.key:
		fail(http.StatusUnauthorized, "invalid credentials in "+keyHeader)
		return
	case m.wire == wireAnthropic && r.Header.Get("Anthropic-Version") == "":
		fail(http.StatusBadRequest, "anthropic-version: header is required")
		return
	}
	b, _ := io.ReadAll(r.Body)
	var req chatRequest
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil {
		fail(http.StatusBadRequest, "bad json")
		return
	}
	if m.wire == wireChat {
		_ = json.Unmarshal(b, &req)
	}
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, req)
	m.raw = append(m.raw, b)
	m.headers = append(m.headers, r.Header.Clone())
	step := m.script[min(n, len(m.script)-1)]
	m.mu.Unlock()
	if msg := refusedTools(m.wire, generic); msg != "" {
		fail(http.StatusBadRequest, msg)
		return
	}
	if msg := missingSignature(m.wire, generic); msg != "" {
		fail(http.StatusBadRequest, msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(step(req))
}

// wireError is an error body in the wire's documented shape.
func wireError(wire string, status int, msg string) any {
	switch wire {
	case wireAnthropic:
		return map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
	case wireGemini:
		st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND"}[status]
		return map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}}
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil}}
}

// refusedTools is the provider's 400 for tool schemas it does not accept,
// in its words, or "": OpenAI and Anthropic take JSON Schema but for
// their rules at the top of it; Gemini's parameters are its Schema object
// (an OpenAPI subset) and nothing else.
func refusedTools(wire string, body map[string]any) string {
	tools, _ := body["tools"].([]any)
	for i, tl := range tools {
		tm, _ := tl.(map[string]any)
		var schema map[string]any
		name := ""
		switch wire {
		case wireChat:
			fn, _ := tm["function"].(map[string]any)
			name, _ = fn["name"].(string)
			schema, _ = fn["parameters"].(map[string]any)
		case wireResponses:
			name, _ = tm["name"].(string)
			schema, _ = tm["parameters"].(map[string]any)
		case wireAnthropic:
			name, _ = tm["name"].(string)
			schema, _ = tm["input_schema"].(map[string]any)
			if schema["type"] != "object" {
				return fmt.Sprintf("tools.%d.custom.input_schema.type: Input should be 'object'", i)
			}
			for _, k := range []string{"oneOf", "allOf", "anyOf"} {
				if schema[k] != nil {
					return fmt.Sprintf("tools.%d.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level", i)
				}
			}
			continue
		case wireGemini:
			decls, _ := tm["functionDeclarations"].([]any)
			for j, d := range decls {
				dm, _ := d.(map[string]any)
				if dm["parametersJsonSchema"] != nil && dm["parameters"] != nil {
					return fmt.Sprintf("tools[%d].function_declarations[%d]: parameters and parameters_json_schema are mutually exclusive", i, j)
				}
				if p, ok := dm["parameters"]; ok {
					if msg := geminiUnknownField(p, fmt.Sprintf("tools[%d].function_declarations[%d].parameters", i, j)); msg != "" {
						return msg
					}
				}
			}
			continue
		}
		if schema["type"] != "object" {
			return fmt.Sprintf("Invalid schema for function '%s': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%v\"'.", name, schema["type"])
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf", "enum", "const", "not"} {
			if schema[k] != nil {
				return fmt.Sprintf("Invalid schema for function '%s': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level.", name)
			}
		}
	}
	return ""
}

// missingSignature is Gemini 3's 400 for a call of the model sent back
// without the thought signature it came with (this fake signs every call
// it makes), or "".
func missingSignature(wire string, body map[string]any) string {
	if wire != wireGemini {
		return ""
	}
	contents, _ := body["contents"].([]any)
	for i, c := range contents {
		parts, _ := c.(map[string]any)["parts"].([]any)
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			fc, _ := pm["functionCall"].(map[string]any)
			if fc != nil && pm["thoughtSignature"] != geminiSignature {
				return fmt.Sprintf("Unable to submit request because function call `%v` in the %d. content block is missing a `thought_signature`.", fc["name"], i+1)
			}
		}
	}
	return ""
}

// geminiSignature is the thought signature the fake gives its calls.
const geminiSignature = "c2lnbmVkIGJ5IHRoZSBmYWtl"

// geminiSchemaFields are the fields of Gemini's Schema object.
var geminiSchemaFields = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true, "enum": true,
	"maxItems": true, "minItems": true, "properties": true, "required": true, "minProperties": true,
	"maxProperties": true, "minLength": true, "maxLength": true, "pattern": true, "example": true,
	"anyOf": true, "propertyOrdering": true, "default": true, "items": true, "minimum": true, "maximum": true,
}

// geminiUnknownField is Gemini's 400 for the first field of a schema that
// its Schema object does not have, in its words, or "".
func geminiUnknownField(v any, at string) string {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Sprintf("Invalid JSON payload received. Expected an object at '%s'.", at)
	}
	for k, sub := range m {
		switch {
		case !geminiSchemaFields[k]:
			return fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", k, at)
		case k == "type":
			if s, _ := sub.(string); !strings.Contains("STRING NUMBER INTEGER BOOLEAN ARRAY OBJECT NULL", s) || s == "" {
				return fmt.Sprintf("Invalid value at '%s.type', Invalid value: %v", at, sub)
			}
		case k == "items":
			if msg := geminiUnknownField(sub, at+".items"); msg != "" {
				return msg
			}
		case k == "properties":
			props, _ := sub.(map[string]any)
			for name, p := range props {
				if msg := geminiUnknownField(p, at+".properties["+name+"]"); msg != "" {
					return msg
				}
			}
		case k == "anyOf":
			branches, _ := sub.([]any)
			for i, b := range branches {
				if msg := geminiUnknownField(b, fmt.Sprintf("%s.any_of[%d]", at, i)); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

// bodies are the raw request bodies received so far, decoded.
func (m *fakeModel) bodies(t *testing.T) []map[string]any {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]map[string]any, len(m.raw))
	for i, b := range m.raw {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			t.Fatalf("request %d is not JSON: %v", i, err)
		}
	}
	return out
}

// requests are the requests received so far.
func (m *fakeModel) requests() []chatRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]chatRequest(nil), m.reqs...)
}

// completion is a chat completion whose message has content and the given
// tool calls (name, JSON arguments pairs).
func completion(content string, calls ...[2]string) any {
	msg := map[string]any{"role": "assistant", "content": content}
	finish := "stop"
	if len(calls) > 0 {
		var tcs []any
		for i, c := range calls {
			tcs = append(tcs, map[string]any{
				"id": "call_" + string(rune('a'+i)), "type": "function",
				"function": map[string]any{"name": c[0], "arguments": c[1]},
			})
		}
		msg["tool_calls"] = tcs
		msg["content"] = nil
		finish = "tool_calls"
	}
	return map[string]any{
		"id": "chatcmpl-journey", "object": "chat.completion", "created": 1764115200, "model": "journey",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	}
}

// reply is a script step that always answers v.
func reply(v any) func(chatRequest) any { return func(chatRequest) any { return v } }

// anthropicMessage is a Messages API answer with text and tool_use blocks
// (name, JSON input pairs).
func anthropicMessage(text string, calls ...[2]string) any {
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	stop := "end_turn"
	for i, c := range calls {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", i+1), "name": c[0], "input": json.RawMessage(c[1])})
		stop = "tool_use"
	}
	return map[string]any{"id": "msg_journey", "type": "message", "role": "assistant", "model": "claude-journey",
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}
}

// geminiContent is a generateContent answer with text and functionCall
// parts (name, JSON args pairs), each signed as Gemini 3 signs them.
func geminiContent(text string, calls ...[2]string) any {
	var parts []any
	if text != "" {
		parts = append(parts, map[string]any{"text": text})
	}
	for _, c := range calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c[0], "args": json.RawMessage(c[1])}, "thoughtSignature": geminiSignature})
	}
	return map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-journey",
	}
}

// response is a Responses API answer: a reasoning item (whose summary
// drafts a call that must not run), then the text as a message and the
// calls (name, JSON arguments pairs) as function_call items.
func response(text string, calls ...[2]string) any {
	output := []any{map[string]any{"type": "reasoning", "id": "rs_journey", "summary": []any{map[string]any{"type": "summary_text",
		"text": `Maybe <tool_call>{"name":"delete_file","arguments":{"path":"/"}}</tool_call>; no.`}}}}
	if text != "" {
		output = append(output, map[string]any{"type": "message", "id": "msg_journey", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}})
	}
	for i, c := range calls {
		output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", i), "call_id": fmt.Sprintf("call_%d", i),
			"name": c[0], "arguments": c[1], "status": "completed"})
	}
	return map[string]any{"id": "resp_journey", "object": "response", "created_at": 1764115200, "status": "completed", "model": "gpt-journey",
		"output": output, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}
}
