package mcpbridge

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// TestLegacyMetaIssuer: the authorization server metadata at an MCP
// server's origin, with no protected resource metadata there (MCP
// 2025-03-26), is read with an issuer on that origin as the origin; with
// protected resource metadata, on another origin, or at another path, the
// issuer is as sent (and the SDK checks it).
func TestLegacyMetaIssuer(t *testing.T) {
	var issuer string
	prm := false
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp":
			if !prm {
				http.NotFound(w, r)
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"resource": "x"})
		case "/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/oauth":
			json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "token_endpoint": issuer + "/token"})
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL)
	origin := impOrigin(u)
	read := func(c *http.Client, path string) string {
		t.Helper()
		resp, err := c.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m["issuer"].(string) + " " + m["token_endpoint"].(string)
	}
	for _, tc := range []struct {
		name, issuer, path string
		prm                bool
		want               string
	}{
		{"same origin, under a path", origin + "/oauth", "/.well-known/oauth-authorization-server", false, origin + " " + origin + "/oauth/token"},
		{"the origin itself", origin, "/.well-known/oauth-authorization-server", false, origin + " " + origin + "/token"},
		{"another origin", "http://other.example/oauth", "/.well-known/oauth-authorization-server", false, "http://other.example/oauth http://other.example/oauth/token"},
		{"the server has protected resource metadata", origin + "/oauth", "/.well-known/oauth-authorization-server", true, origin + "/oauth " + origin + "/oauth/token"},
		{"metadata at a path", origin + "/oauth", "/.well-known/oauth-authorization-server/oauth", false, origin + "/oauth " + origin + "/oauth/token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			issuer, prm = tc.issuer, tc.prm
			c := &http.Client{Transport: &impLegacyMeta{base: http.DefaultTransport, origin: origin}}
			c.Get(ts.URL + "/.well-known/oauth-protected-resource/mcp") // as the SDK's discovery does first
			if got := read(c, tc.path); got != tc.want {
				t.Errorf("issuer and token endpoint %q, want %q", got, tc.want)
			}
		})
	}
}
