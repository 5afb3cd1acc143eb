package mcpbridge_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// BenchmarkServerTaskAfterCall measures what TaskAfter costs a short
// tools/call of a 2026-07-28 client on a SQLite store: from a client that
// declared the Tasks extension (started as a task could be: its ID
// reserved in the store, then answered plainly) and from one that did not
// (the fast path).
func BenchmarkServerTaskAfterCall(b *testing.B) {
	store, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "wield.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close(b.Context()) })
	h := srvNew(b, &mcpbridge.ServerOptions{Calls: store, TaskAfter: 30 * time.Second}, &engine.Options{Store: store}).srv.Handler()
	hdr := srvEraHeaders("tools/call", "echo")
	for _, c := range []struct{ name, caps string }{
		{"plain-client", `{}`},
		{"tasks-client", `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`},
	} {
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":` + c.caps + `}}}`
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if w := srvPost(h, body, hdr...); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `\"echo\":\"hi\"`) {
					b.Fatalf("tools/call: %d %s", w.Code, w.Body)
				}
			}
		})
	}
}
