package mcpbridge_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/policy"
)

// BenchmarkServerPolicyCall is a tools/call of the echo tool on the fast
// paths of a server with a Cedar policy that permits the calling key: in a
// 2025-11-25 session and as a 2026-07-28 request. It measures what a
// permitted call pays for the policy on those paths (the decision with its
// arguments, and the one without that tells whether the tool is hidden
// from the caller, srvHidden).
func BenchmarkServerPolicyCall(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(`permit(principal == Key::"ops", action, resource);`), 0o644); err != nil {
		b.Fatal(err)
	}
	set, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		b.Fatal(err)
	}
	inner := srvNew(b, nil, &engine.Options{Policy: set}).srv.Handler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r.WithContext(wield.WithRequester(r.Context(), "key:ops")))
	})
	b.Run("2025-11-25-session", func(b *testing.B) {
		w := srvPost(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		id := w.Header().Get("Mcp-Session-Id")
		if w.Code != http.StatusOK || id == "" {
			b.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
		hdr := []string{"Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25"}
		srvPost(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
		b.ReportAllocs()
		for b.Loop() {
			if w := srvPost(h, body, hdr...); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"echo":"hi"`) {
				b.Fatalf("tools/call: %d %s", w.Code, w.Body)
			}
		}
	})
	b.Run("2026-07-28-fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if w := srvPost(h, srvEraBody, srvEraEchoHeaders...); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `\"echo\":\"hi\"`) {
				b.Fatalf("tools/call: %d %s", w.Code, w.Body)
			}
		}
	})
}
