package mcpbridge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// TestCoreSessionsForgotten: what the server remembers of a 2025-11-25
// session for tasks/list (that it declared tasks, the tasks it started) is
// let go when the session ends (DELETE, or its idle timeout): a client
// opening and closing sessions, each starting a task, held an entry per
// session until 4096 of them pushed out every other session's list.
func TestCoreSessionsForgotten(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	type none struct{}
	quick := wield.Func("quick", "Answers at once.", func(context.Context, none) (string, error) { return "done", nil })
	quick.Task = wield.TaskRequired
	reg := wield.NewRegistry(nil)
	reg.MustRegister(quick)
	eng := engine.New(reg, &engine.Options{Store: store})
	defer eng.Close(ctx)
	s := NewServer(eng, reg, &ServerOptions{Calls: store})
	defer s.Close()
	h := s.Handler()
	send := func(method, session, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "http://127.0.0.1/mcp", strings.NewReader(body))
		r.Host = "127.0.0.1"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const sessions = 5
	for i := range sessions {
		w := send(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":"c","version":"1"}}}`)
		id := w.Header().Get("Mcp-Session-Id")
		if id == "" {
			t.Fatalf("initialize %d: %d %s", i, w.Code, w.Body)
		}
		send(http.MethodPost, id, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
		w = send(http.MethodPost, id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"quick","arguments":{},"task":{}}}`)
		var ans struct {
			Result struct {
				Task struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
			} `json:"result"`
		}
		body := w.Body.String()
		if i := strings.Index(body, "data: "); i >= 0 {
			body, _, _ = strings.Cut(body[i+len("data: "):], "\n")
		}
		if json.Unmarshal([]byte(body), &ans) != nil || ans.Result.Task.TaskID == "" {
			t.Fatalf("tools/call with params.task: %d %s", w.Code, w.Body)
		}
		if got := s.coreSessions.of(id); len(got) != 1 {
			t.Fatalf("session %d lists %v, want its task", i, got)
		}
		if w := send(http.MethodDelete, id, ""); w.Code/100 != 2 {
			t.Fatalf("DELETE session: %d %s", w.Code, w.Body)
		}
	}
	l := &s.coreSessions
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.tasks) != 0 || len(l.order) != 0 || len(l.speaks) != 0 || len(l.speakOrder) != 0 {
		t.Errorf("after %d sessions ended: %d task lists, %d in order, %d declared, %d in order; want none kept", sessions, len(l.tasks), len(l.order), len(l.speaks), len(l.speakOrder))
	}
}
