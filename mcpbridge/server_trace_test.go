package mcpbridge_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/mcpbridge"
)

// traced is one span ServerOptions.Trace was asked for, and how it ended.
type traced struct {
	Tool, RequestID, Parent, End string
	Session                      bool
}

// TestServerTrace: each tools/call, on the fast path or through the go-sdk
// (a request with _meta), starts a span told the tool, the session, the
// JSON-RPC ID as the conventions write it (a string's text, at most 128
// bytes) and the _meta's traceparent, and ends it with the outcome.
func TestServerTrace(t *testing.T) {
	var mu sync.Mutex
	var got []traced
	trace := func(ctx context.Context, r mcpbridge.TraceRequest) (context.Context, func(string)) {
		parent, _ := r.Meta["traceparent"].(string)
		return ctx, func(errType string) {
			mu.Lock()
			got = append(got, traced{Tool: r.Tool, RequestID: r.RequestID, Parent: parent, End: errType, Session: r.SessionID != "" && r.Method == "tools/call"})
			mu.Unlock()
		}
	}
	f := srvNew(t, &mcpbridge.ServerOptions{Trace: trace}, nil)
	ts := httptest.NewServer(f.srv.Handler())
	defer ts.Close()
	c := &srvRaw{t: t, url: ts.URL + "/mcp"}
	c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	long := strings.Repeat("x", 500)
	c.post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	c.post(`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"traceparent":"tp"}}}`)
	c.post(`{"jsonrpc":"2.0","id":"` + long + `","method":"tools/call","params":{"name":"fail","arguments":{"message":"x"},"_meta":{"traceparent":"tp2"}}}`)
	c.post(`{"jsonrpc":"2.0","id":"fast","method":"tools/call","params":{"name":"fail","arguments":{"message":"x"}}}`)
	want := []traced{
		{Tool: "echo", RequestID: "5", Session: true},
		{Tool: "echo", RequestID: "abc", Parent: "tp", Session: true},
		{Tool: "fail", RequestID: long[:128], Parent: "tp2", End: "tool_error", Session: true},
		{Tool: "fail", RequestID: "fast", End: "tool_error", Session: true},
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}
