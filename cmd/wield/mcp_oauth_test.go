package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/oauthtest"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestConfigImportsOAuthServer: a server of mcp_servers with oauth
// client_credentials is imported and called with the token wield obtains
// by itself; a wrong secret is a failed import that names the refusal, not
// a leak of the secret; a server of grant authorization_code is used with
// the token kept in the state folder, and without one (or once it is
// refused and cannot be refreshed) its import says to run wield mcp login.
func TestConfigImportsOAuthServer(t *testing.T) {
	a := oauthtest.New(nil)
	defer a.Close()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("P_SECRET", oauthtest.ClientSecret)
	dir := t.TempDir()
	write := func(oauth string) string {
		cfg := filepath.Join(dir, "wield.yaml")
		if err := os.WriteFile(cfg, []byte("mcp_servers:\n  - {name: p, url: \""+a.MCPURL()+"\", timeout: 5s, oauth: "+oauth+"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return cfg
	}

	cfg := write(`{grant: client_credentials, client_id: ` + oauthtest.ClientID + `, client_secret: "${P_SECRET}"}`)
	code, out, errs := runIn(t, "", "--config", cfg, "call", "p__whoami")
	if code != 0 || !strings.Contains(out, "authorized") {
		t.Fatalf("call with client credentials: exit %d\n%s\n%s", code, out, errs)
	}
	if got := a.Grants(); len(got) != 1 || got[0] != "client_credentials" {
		t.Errorf("token requests %q, want one client_credentials", got)
	}

	cfg = write(`{grant: client_credentials, client_id: ` + oauthtest.ClientID + `, client_secret: wrong-secret-1234}`)
	code, out, errs = runIn(t, "", "--config", cfg, "call", "p__whoami")
	if code == 0 || strings.Contains(out, "authorized") || !strings.Contains(errs, "mcp server p") {
		t.Errorf("call with a wrong secret: exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(out+errs, "wrong-secret-1234") {
		t.Errorf("the secret was shown:\n%s\n%s", out, errs)
	}

	cfg = write(`{grant: authorization_code}`)
	code, out, errs = runIn(t, "", "--config", cfg, "call", "p__whoami")
	if code == 0 || !strings.Contains(errs, "mcp server p: no authorization yet (oauth grant authorization_code): run `wield mcp login p --config "+cfg+"`") {
		t.Errorf("call without a login: exit %d\n%s\n%s", code, out, errs)
	}

	// A login's token, obtained as wield mcp login does, in the state folder.
	store, err := mcpbridge.OpenFileTokens(tokensFile())
	if err != nil {
		t.Fatal(err)
	}
	im := mcpbridge.NewImporter(wield.NewRegistry(nil), nil)
	redirect := "http://127.0.0.1:1/callback"
	a.SetRedirect(redirect)
	err = im.AddOAuth(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.MCPURL(), Enabled: true}, &mcpbridge.OAuthConfig{
		RedirectURL: redirect, Tokens: store, OfflineAccess: true,
		Authorize: func(ctx context.Context, authURL string) (*mcpbridge.OAuthRedirect, error) {
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Get(authURL)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			return mcpbridge.ParseOAuthRedirect(resp.Header.Get("Location"))
		}})
	im.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(tokensFile()); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file: %v, %v", st, err)
	}
	code, out, errs = runIn(t, "", "--config", cfg, "call", "p__whoami")
	if code != 0 || !strings.Contains(out, "authorized") {
		t.Fatalf("call with the stored token: exit %d\n%s\n%s", code, out, errs)
	}
	// The token is refused, and so is its refresh token: the message says
	// to log in again, without registering the client anew (an
	// authorization server may well refuse that).
	a.Revoke()
	a.RefuseRegistration()
	code, out, errs = runIn(t, "", "--config", cfg, "call", "p__whoami")
	if code == 0 || !strings.Contains(errs, "mcp server p: the server refused the stored token, and it could not be refreshed (oauth grant authorization_code): run `wield mcp login p") {
		t.Errorf("call with a revoked token: exit %d\n%s\n%s", code, out, errs)
	}
}
