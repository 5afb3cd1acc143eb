package mcpbridge_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

// TestServerListCacheScope: a tools/list answered to a request with a key
// is that caller's own (keys may be scoped, policies decide per caller),
// so its cacheScope is "private": a cache shared between callers must not
// hand it to another. Without a key it is "public". Both eras, the
// session's fast path and the stateless one, the same.
func TestServerListCacheScope(t *testing.T) {
	f := srvNew(t, nil, &engine.Options{})
	as := func(requester string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if requester != "" {
				r = r.WithContext(wield.WithRequester(r.Context(), requester))
			}
			f.srv.Handler().ServeHTTP(w, r)
		})
	}
	for _, tc := range []struct{ requester, want string }{{"", `"cacheScope":"public"`}, {"key:a", `"cacheScope":"private"`}, {"", `"cacheScope":"public"`}} {
		h := as(tc.requester)
		// 2026-07-28, stateless.
		w := srvEraSend(h, 1, "tools/list", "", map[string]any{}, map[string]any{}, "scope")
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("2026-07-28 tools/list as %q: %d %s, want %s", tc.requester, w.Code, w.Body, tc.want)
		}
		// 2025-11-25, a session.
		w = srvPost(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scope","version":"1"}}}`)
		id := w.Header().Get("Mcp-Session-Id")
		hdr := []string{"Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25"}
		srvPost(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
		w = srvPost(h, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, hdr...)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("2025-11-25 tools/list as %q: %d %s, want %s", tc.requester, w.Code, w.Body, tc.want)
		}
	}
}
