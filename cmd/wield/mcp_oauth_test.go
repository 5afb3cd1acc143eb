package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestServePicksUpLogin: a wield serve started before `wield mcp login`
// imports the server once the login is kept, without a restart, and says
// so on its log; so it does when a login replaces a token the server
// refused and that could not be refreshed.
func TestServePicksUpLogin(t *testing.T) {
	a := oauthtest.New(nil)
	t.Cleanup(a.Close) // after serve stops: its connections end first
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wield.yaml")
	if err := os.WriteFile(cfg, []byte("mcp_servers:\n  - {name: notes, url: \""+a.MCPURL()+"\", timeout: 5s, oauth: {grant: authorization_code, offline_access: true}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := launchServe(t, []string{"--config", cfg, "serve", "--addr", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(dir, "w.db"),
		"--keys", filepath.Join(dir, "keys.json")})
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("%s: not within 20 s\n%s", what, s.stderr)
	}
	waitFor("the warning of no login", func() bool {
		return strings.Contains(s.stderr.String(), "mcp server notes: no authorization yet") &&
			strings.Contains(s.stderr.String(), "this process imports it again once the login is kept")
	})
	called := func() bool {
		code, body := s.request(t, "POST", "/v1/tools/notes__whoami/call", "", `{"arguments":{}}`)
		return code == http.StatusOK && strings.Contains(string(body), "authorized")
	}
	if called() {
		t.Fatal("called before the login")
	}

	if code, out, errs := loginAsBrowser(t, cfg, "notes"); code != 0 {
		t.Fatalf("login: exit %d\n%s\n%s", code, out, errs)
	}
	waitFor("the call after the login", called)
	if !strings.Contains(s.stderr.String(), "mcp server notes: a login was kept in "+tokensFile()+": importing the server again with it") ||
		!strings.Contains(s.stderr.String(), "mcp server notes: imported with the login: its tools are callable") {
		t.Errorf("serve's log does not tell the login:\n%s", s.stderr)
	}

	// The tokens are revoked: the call is refused until a login again.
	a.Revoke()
	if called() {
		t.Fatal("called with revoked tokens")
	}
	if code, out, errs := loginAsBrowser(t, cfg, "notes"); code != 0 {
		t.Fatalf("login: exit %d\n%s\n%s", code, out, errs)
	}
	waitFor("the call after the second login", called)
	if n := strings.Count(s.stderr.String(), "imported with the login"); n != 2 {
		t.Errorf("%d imports with a login, want 2:\n%s", n, s.stderr)
	}
}
