package mcpbridge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestIssuerMeta: an identity provider's metadata is read from OAuth's or
// OpenID's well-known location without asking for PKCE (a provider used
// for token exchange need not offer it), and refused when it names
// another issuer or no token endpoint.
func TestIssuerMeta(t *testing.T) {
	var meta map[string]any
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(meta)
	}))
	defer ts.Close()
	for _, tc := range []struct {
		name string
		meta map[string]any
		want string // "" for success, else part of the error
	}{
		{"openid configuration without PKCE", map[string]any{"issuer": ts.URL, "token_endpoint": ts.URL + "/token"}, ""},
		{"another issuer", map[string]any{"issuer": "http://evil.example", "token_endpoint": ts.URL + "/token"}, `names issuer "http://evil.example"`},
		{"no token endpoint", map[string]any{"issuer": ts.URL}, "names no token endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta = tc.meta
			m, err := impIssuerMeta(context.Background(), ts.URL, http.DefaultClient)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want == "" && m.TokenEndpoint != ts.URL+"/token":
				t.Errorf("token endpoint %q", m.TokenEndpoint)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if _, err := impIssuerMeta(context.Background(), "file:///etc/passwd", http.DefaultClient); err == nil {
		t.Error("a file: issuer was read")
	}
}

// TestEnterpriseConfigCheck: enterprise-managed authorization says what
// it lacks.
func TestEnterpriseConfigCheck(t *testing.T) {
	tok := func(context.Context) (string, error) { return "id", nil }
	for _, tc := range []struct {
		o    OAuthConfig
		want string
	}{
		{OAuthConfig{IDToken: tok, IdPIssuer: "https://idp", IdPClientID: "c", ClientID: "m"}, ""},
		{OAuthConfig{IDToken: tok, ClientID: "m"}, "identity provider's issuer and client id"},
		{OAuthConfig{IDToken: tok, IdPIssuer: "https://idp", IdPClientID: "c"}, "client id registered with the server's authorization server"},
		{OAuthConfig{IDToken: tok, IdPIssuer: "https://idp", IdPClientID: "c", ClientID: "m", ClientCredentials: true}, "not both"},
	} {
		err := tc.o.check()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("check(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
}
