package mcpbridge_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wieldhq/wield/mcpbridge"
)

// srvSizedBody pads a JSON-RPC message to n bytes: head, then x's, then
// tail.
func srvSizedBody(head, tail string, n int) string {
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// TestServerMaxBody checks ServerOptions.MaxBody: a body one byte over it
// is answered 413 with a JSON-RPC error naming the limit, on either era,
// with or without a Content-Length, before the fast path (which reads up
// to 1 MiB) could answer it; a body at the limit is served. A bound put in
// front of the handler (http.MaxBytesReader, as httpapi's) is named when
// it is the smaller.
func TestServerMaxBody(t *testing.T) {
	const limit = 3000
	f := srvNew(t, &mcpbridge.ServerOptions{MaxBody: limit}, nil)
	h := f.srv.Handler()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	call := func(n int) string {
		return srvSizedBody(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"echo","arguments":{"message":"`, `"}}}`, n)
	}
	initialize := func(n int) string {
		return srvSizedBody(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"version":"1","name":"`, `"}}}`, n)
	}
	post := func(h http.Handler, era, method, body string, chunked bool) *httptest.ResponseRecorder {
		var rd io.Reader = strings.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd)
		}
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", rd)
		if chunked {
			r.ContentLength = -1
		}
		r.Host = "127.0.0.1"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if era != "" {
			r.Header.Set("Mcp-Protocol-Version", era)
			r.Header.Set("Mcp-Method", method)
			r.Header.Set("Mcp-Name", "echo")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	tooLarge := func(w *httptest.ResponseRecorder, limit int) error {
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		want := fmt.Sprintf("the request body is over the limit of %d bytes", limit)
		if err := json.Unmarshal(w.Body.Bytes(), &msg); w.Code != http.StatusRequestEntityTooLarge || err != nil || msg.Error.Code != -32600 || msg.Error.Message != want || string(msg.ID) != "null" {
			return fmt.Errorf("answered %d %.300s; want 413 with error -32600 %q", w.Code, w.Body, want)
		}
		return nil
	}
	for _, chunked := range []bool{false, true} {
		if err := tooLarge(post(h, "2026-07-28", "tools/call", call(limit+1), chunked), limit); err != nil {
			t.Errorf("2026-07-28 tools/call of %d bytes (chunked %v): %v", limit+1, chunked, err)
		}
		if w := post(h, "2026-07-28", "tools/call", call(limit), chunked); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"result"`) {
			t.Errorf("2026-07-28 tools/call of %d bytes (chunked %v): %d %.300s; want its result", limit, chunked, w.Code, w.Body)
		}
		if err := tooLarge(post(h, "", "", initialize(limit+1), chunked), limit); err != nil {
			t.Errorf("initialize of %d bytes (chunked %v): %v", limit+1, chunked, err)
		}
		if w := post(h, "", "", initialize(limit), chunked); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"protocolVersion"`) {
			t.Errorf("initialize of %d bytes (chunked %v): %d %.300s; want a session", limit, chunked, w.Code, w.Body)
		}
	}
	front := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 2000)
		h.ServeHTTP(w, r)
	})
	if err := tooLarge(post(front, "2026-07-28", "tools/call", call(2500), true), 2000); err != nil {
		t.Errorf("behind a bound of 2000 bytes, a body of 2500: %v", err)
	}
}
