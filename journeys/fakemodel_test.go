//go:build unix

package journeys

// A model on loopback that answers in OpenAI's chat completions wire format
// (POST /v1/chat/completions), scripted per journey. Fakes are for the
// internet only: a real model is not reachable from the tests.

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
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
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []chatRequest
	raw    [][]byte
	script []func(chatRequest) any
}

// newFakeModel serves the script on addr ("" for a port of its own); ok is
// false when addr is taken.
func newFakeModel(t *testing.T, addr string, script ...func(chatRequest) any) (m *fakeModel, ok bool) {
	t.Helper()
	m = &fakeModel{script: script}
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
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(b, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, req)
	m.raw = append(m.raw, b)
	step := m.script[min(n, len(m.script)-1)]
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(step(req))
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
