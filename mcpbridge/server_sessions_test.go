package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

// srvDirect sends one request straight to a handler, as client addr (its
// remote address) would, and returns the status, the session ID the answer
// names and the JSON-RPC message of the answer (nil without one).
func srvDirect(t *testing.T, h http.Handler, addr, method, session, body string, header ...string) (int, string, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
	req.Host = "localhost"
	req.RemoteAddr = addr
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	raw := w.Body.String()
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(raw) {
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				raw = d
			}
		}
	}
	var msg map[string]any
	if json.Unmarshal([]byte(raw), &msg) != nil {
		msg = nil
	}
	return w.Code, w.Header().Get("Mcp-Session-Id"), msg
}

const srvInitialize = `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`

// srvOpen opens a session as client addr, failing the test if it is
// refused.
func srvOpen(t *testing.T, h http.Handler, addr string, header ...string) string {
	t.Helper()
	code, id, msg := srvDirect(t, h, addr, "POST", "", fmt.Sprintf(srvInitialize, 1), header...)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize as %s: status %d, session %q, answer %v", addr, code, id, msg)
	}
	if code, _, _ := srvDirect(t, h, addr, "POST", id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized: status %d", code)
	}
	return id
}

// srvRefusal is what a refused initialize answers, without the message.
type srvRefusal struct {
	Status int
	ID     any
	Code   float64
	Data   any
}

func srvRefused(t *testing.T, h http.Handler, addr string, header ...string) (srvRefusal, string) {
	t.Helper()
	code, id, msg := srvDirect(t, h, addr, "POST", "", fmt.Sprintf(srvInitialize, 7), header...)
	if id != "" {
		t.Fatalf("initialize as %s past the bound opened session %q", addr, id)
	}
	e, _ := msg["error"].(map[string]any)
	if e == nil {
		t.Fatalf("initialize as %s past the bound: status %d, answer %v: want a JSON-RPC error", addr, code, msg)
	}
	text, _ := e["message"].(string)
	return srvRefusal{Status: code, ID: msg["id"], Code: e["code"].(float64), Data: e["data"]}, text
}

// TestServerSessionsPerClient floods initialize from one client: past its
// bound each is refused with 429 and a JSON-RPC error saying how to free a
// place, other clients still get theirs, and a DELETE frees one.
func TestServerSessionsPerClient(t *testing.T) {
	f := srvNew(t, &mcpbridge.ServerOptions{MaxSessionsPerClient: 3}, nil)
	h := f.srv.Handler()
	var mine []string
	for range 3 {
		mine = append(mine, srvOpen(t, h, "192.0.2.1:1000"))
	}
	for range 5 {
		got, text := srvRefused(t, h, "192.0.2.1:1001")
		want := srvRefusal{Status: 429, ID: float64(7), Code: mcpbridge.CodeSessionLimit, Data: map[string]any{"bound": "client", "max": float64(3)}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("refusal (-want +got):\n%s", diff)
		}
		for _, part := range []string{"session limit reached", "3 MCP sessions open", "DELETE", "Mcp-Session-Id", "10m0s"} {
			if !strings.Contains(text, part) {
				t.Errorf("refusal %q does not say %q", text, part)
			}
		}
	}
	srvOpen(t, h, "192.0.2.2:1000") // another client
	if got := f.srv.Sessions(); got != 4 {
		t.Errorf("Sessions() = %d, want 4", got)
	}
	if code, _, _ := srvDirect(t, h, "192.0.2.1:1000", "DELETE", mine[0], ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: status %d", code)
	}
	if code, _, _ := srvDirect(t, h, "192.0.2.1:1000", "POST", mine[0], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusNotFound {
		t.Errorf("tools/list in a deleted session: status %d, want 404", code)
	}
	srvOpen(t, h, "192.0.2.1:1002")
	if _, text := srvRefused(t, h, "192.0.2.1:1003"); text == "" {
		t.Error("no message")
	}
}

// TestServerSessionsTotal checks the server's bound, met by many clients.
func TestServerSessionsTotal(t *testing.T) {
	f := srvNew(t, &mcpbridge.ServerOptions{MaxSessions: 2, MaxSessionsPerClient: -1}, nil)
	h := f.srv.Handler()
	srvOpen(t, h, "192.0.2.1:1")
	srvOpen(t, h, "192.0.2.2:1")
	got, text := srvRefused(t, h, "192.0.2.3:1")
	want := srvRefusal{Status: 503, ID: float64(7), Code: mcpbridge.CodeSessionLimit, Data: map[string]any{"bound": "server", "max": float64(2)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
	if !strings.Contains(text, "the server has 2 MCP sessions open") {
		t.Errorf("refusal %q does not name the server's bound", text)
	}
}

// TestServerSessionsClientKey counts by what ClientKey names (an API key,
// in wield serve), not by address, when it names something.
func TestServerSessionsClientKey(t *testing.T) {
	f := srvNew(t, &mcpbridge.ServerOptions{MaxSessionsPerClient: 1,
		ClientKey: func(r *http.Request) string { return r.Header.Get("X-Key") }}, nil)
	h := f.srv.Handler()
	srvOpen(t, h, "192.0.2.1:1", "X-Key", "a")
	srvOpen(t, h, "192.0.2.1:1", "X-Key", "b")
	srvOpen(t, h, "192.0.2.1:1") // no key: the address
	srvRefused(t, h, "192.0.2.1:2", "X-Key", "a")
	srvRefused(t, h, "192.0.2.1:2")
}

// TestServerSessionsExpire leaves a session idle: it is closed after the
// timeout, on the fast path as on the SDK's, and its place is free again.
// Requests keep it open, a call in progress too.
func TestServerSessionsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := wield.Func("slow", "Takes three minutes", func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-time.After(3 * time.Minute):
				return "done", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
		for _, disabled := range []bool{false, true} {
			f := srvNew(t, &mcpbridge.ServerOptions{SessionTimeout: time.Minute, MaxSessionsPerClient: 1, DisableFastPath: disabled},
				&engine.Options{DefaultTimeout: time.Hour}, slow)
			h := f.srv.Handler()
			const addr = "192.0.2.1:1"
			id := srvOpen(t, h, addr)
			list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
			for range 4 { // used every 40 s: never idle a minute
				time.Sleep(40 * time.Second)
				if code, _, _ := srvDirect(t, h, addr, "POST", id, list); code != http.StatusOK {
					t.Fatalf("fast path off: %v: tools/list after 40 s: status %d", disabled, code)
				}
			}
			// A call of three minutes: busy, so not idle.
			call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
			if code, _, msg := srvDirect(t, h, addr, "POST", id, call); code != http.StatusOK || msg["result"] == nil {
				t.Fatalf("fast path off: %v: a call of 3 minutes: status %d, %v", disabled, code, msg)
			}
			time.Sleep(59 * time.Second)
			synctest.Wait()
			if f.srv.Sessions() != 1 {
				t.Fatalf("fast path off: %v: closed before a minute idle", disabled)
			}
			time.Sleep(8 * time.Second) // the sweep looks every 6 s
			synctest.Wait()
			if got := f.srv.Sessions(); got != 0 {
				t.Fatalf("fast path off: %v: %d sessions open 67 s after the last request (timeout 1 min), want 0", disabled, got)
			}
			if code, _, _ := srvDirect(t, h, addr, "POST", id, list); code != http.StatusNotFound {
				t.Errorf("fast path off: %v: tools/list in an expired session: status %d, want 404", disabled, code)
			}
			srvOpen(t, h, addr) // its place is free
			f.srv.Close()
		}
	})
}

// TestServerSessionsStandingStream keeps a session open while its GET
// stream stands, and closes the stream with the session once idle.
func TestServerSessionsStandingStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := srvNew(t, &mcpbridge.ServerOptions{SessionTimeout: time.Minute}, nil)
		h := f.srv.Handler()
		id := srvOpen(t, h, "192.0.2.1:1")
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			req := httptest.NewRequestWithContext(ctx, "GET", "/mcp", nil)
			req.Host, req.RemoteAddr = "localhost", "192.0.2.1:1"
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			h.ServeHTTP(httptest.NewRecorder(), req)
		}()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if f.srv.Sessions() != 1 {
			t.Fatal("a session with a standing stream was closed as idle")
		}
		cancel() // the client goes away
		<-ended
		time.Sleep(67 * time.Second)
		synctest.Wait()
		if got := f.srv.Sessions(); got != 0 {
			t.Errorf("%d sessions open 67 s after the stream ended (timeout 1 min), want 0", got)
		}
	})
}
