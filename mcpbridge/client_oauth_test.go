package mcpbridge_test

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/oauthtest"
	"github.com/wieldhq/wield/mcpbridge"
	"golang.org/x/oauth2"
)

const impRedirect = "http://127.0.0.1:1/callback"

// impNewAuthServer starts oauthtest's authorization server and MCP server
// for t; the authorization endpoint accepts impRedirect.
func impNewAuthServer(t *testing.T, key *ecdsa.PublicKey) *oauthtest.Server {
	a := oauthtest.New(key)
	t.Cleanup(a.Close)
	a.SetRedirect(impRedirect)
	return a
}

// impFollow is the browser: it follows the authorization URL and reads
// the redirect, counting the times it was asked.
func impFollow(count *int, mu *sync.Mutex) func(context.Context, string) (*mcpbridge.OAuthRedirect, error) {
	return func(ctx context.Context, authURL string) (*mcpbridge.OAuthRedirect, error) {
		mu.Lock()
		*count++
		mu.Unlock()
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		return mcpbridge.ParseOAuthRedirect(resp.Header.Get("Location"))
	}
}

func impTestKey(t *testing.T) (*ecdsa.PrivateKey, []byte) {
	k, pemKey, err := oauthtest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k, pemKey
}

// The tools of an OAuth-protected server are imported and called, with
// each grant.
func TestImportOAuthGrants(t *testing.T) {
	key, keyPEM := impTestKey(t)
	var asked int
	var mu sync.Mutex
	tests := []struct {
		name       string
		oauth      *mcpbridge.OAuthConfig
		wantGrants []string
		wantAsked  int
	}{
		{"authorization code, registered dynamically",
			&mcpbridge.OAuthConfig{RedirectURL: impRedirect, Authorize: impFollow(&asked, &mu)},
			[]string{"authorization_code"}, 1},
		{"authorization code, pre-registered client",
			&mcpbridge.OAuthConfig{ClientID: oauthtest.ClientID, ClientSecret: oauthtest.ClientSecret, RedirectURL: impRedirect, Authorize: impFollow(&asked, &mu)},
			[]string{"authorization_code"}, 1},
		{"client credentials with a secret",
			&mcpbridge.OAuthConfig{ClientCredentials: true, ClientID: oauthtest.ClientID, ClientSecret: oauthtest.ClientSecret},
			[]string{"client_credentials"}, 0},
		{"client credentials with a signed assertion",
			&mcpbridge.OAuthConfig{ClientCredentials: true, ClientID: oauthtest.ClientID, PrivateKey: keyPEM},
			[]string{"client_credentials"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			asked = 0
			mu.Unlock()
			a := impNewAuthServer(t, &key.PublicKey)
			reg := wield.NewRegistry(nil)
			im := impImporter(t, reg, &mcpbridge.ImportOptions{Permission: wield.PermissionAuto})
			if err := im.AddOAuth(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.RS.URL + "/mcp", Enabled: true}, tt.oauth); err != nil {
				t.Fatalf("AddOAuth: %v", err)
			}
			r := impCall(t, impEngine(t, reg), "p__whoami", `{}`)
			if !r.OK || string(r.Output) != `"authorized"` {
				t.Errorf("call: ok %v, output %s, error %s", r.OK, r.Output, r.Error)
			}
			if diff := cmp.Diff(tt.wantGrants, a.Grants()); diff != "" {
				t.Errorf("token requests (-want +got):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if asked != tt.wantAsked {
				t.Errorf("the browser step ran %d times, want %d", asked, tt.wantAsked)
			}
		})
	}
}

// Without authorization the server is unavailable, and Add says so.
func TestImportOAuthRequired(t *testing.T) {
	a := impNewAuthServer(t, nil)
	im := impImporter(t, wield.NewRegistry(nil), nil)
	err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.RS.URL + "/mcp", Enabled: true})
	if !errors.Is(err, mcpbridge.ErrUnavailable) {
		t.Errorf("Add without oauth = %v, want ErrUnavailable", err)
	}
}

// A token file lets the next start use the token the first obtained,
// refreshing it when it has expired, without the browser.
func TestImportOAuthTokenStore(t *testing.T) {
	a := impNewAuthServer(t, nil)
	path := filepath.Join(t.TempDir(), "tokens.json")
	var store *mcpbridge.FileTokens
	var asked int
	var mu sync.Mutex
	cfg := mcpbridge.ServerConfig{Name: "p", URL: a.RS.URL + "/mcp", Enabled: true}
	oauth := &mcpbridge.OAuthConfig{RedirectURL: impRedirect, Authorize: impFollow(&asked, &mu)}
	start := func() {
		t.Helper()
		var err error
		if store, err = mcpbridge.OpenFileTokens(path); err != nil {
			t.Fatal(err)
		}
		oauth.Tokens = store
		reg := wield.NewRegistry(nil)
		im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{Permission: wield.PermissionAuto})
		defer im.Close()
		if err := im.AddOAuth(t.Context(), cfg, oauth); err != nil {
			t.Fatalf("AddOAuth: %v", err)
		}
		if r := impCall(t, impEngine(t, reg), "p__whoami", `{}`); !r.OK {
			t.Fatalf("call: %s", r.Error)
		}
	}
	start()
	saved, err := store.Token("p")
	if err != nil || saved == nil || saved.Token.AccessToken == "" {
		t.Fatalf("stored token = %+v, %v; want the token obtained", saved, err)
	}
	if saved.TokenURL != a.AS.URL+"/token" || saved.ClientID != "registered" || saved.Resource != cfg.URL {
		t.Errorf("stored token: token url %q, client %q, resource %q; want what refreshing needs, for %s",
			saved.TokenURL, saved.ClientID, saved.Resource, cfg.URL)
	}
	start() // the stored token is still good
	// It expires: the next start refreshes it.
	expired := *saved.Token
	expired.Expiry = time.Now().Add(-time.Minute)
	saved.Token = &expired
	if err := store.SetToken("p", saved); err != nil {
		t.Fatal(err)
	}
	start()
	if diff := cmp.Diff([]string{"authorization_code", "refresh_token"}, a.Grants()); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Errorf("the browser step ran %d times, want 1", asked)
	}
	now, _ := store.Token("p")
	if now.Token.AccessToken == expired.AccessToken {
		t.Error("the refreshed token was not stored")
	}
}

func TestImportOAuthCheck(t *testing.T) {
	_, keyPEM := impTestKey(t)
	follow := func(context.Context, string) (*mcpbridge.OAuthRedirect, error) { return nil, errors.New("no browser") }
	plain := mcpbridge.ServerConfig{Name: "p", URL: "http://127.0.0.1:1/mcp", Enabled: true}
	tests := []struct {
		name  string
		cfg   mcpbridge.ServerConfig
		oauth *mcpbridge.OAuthConfig
		want  string
	}{
		{"nil", plain, nil, "nil oauth configuration"},
		{"sse", mcpbridge.ServerConfig{Name: "p", URL: "http://127.0.0.1:1/sse", Transport: "sse", Enabled: true},
			&mcpbridge.OAuthConfig{RedirectURL: impRedirect, Authorize: follow}, "needs the http transport"},
		{"authorization header", mcpbridge.ServerConfig{Name: "p", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"authorization": "Bearer x"}, Enabled: true},
			&mcpbridge.OAuthConfig{RedirectURL: impRedirect, Authorize: follow}, "Authorization header"},
		{"no browser", plain, &mcpbridge.OAuthConfig{RedirectURL: impRedirect}, "Authorize callback"},
		{"no redirect", plain, &mcpbridge.OAuthConfig{Authorize: follow}, "redirect url"},
		{"no client id", plain, &mcpbridge.OAuthConfig{ClientCredentials: true, ClientSecret: "s"}, "client id"},
		{"no secret", plain, &mcpbridge.OAuthConfig{ClientCredentials: true, ClientID: "c"}, "client secret or a private key"},
		{"both", plain, &mcpbridge.OAuthConfig{ClientCredentials: true, ClientID: "c", ClientSecret: "s", PrivateKey: keyPEM}, "not both"},
		{"bad key", plain, &mcpbridge.OAuthConfig{ClientCredentials: true, ClientID: "c", PrivateKey: []byte("nope")}, "no PEM block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im := impImporter(t, wield.NewRegistry(nil), nil)
			err := im.AddOAuth(t.Context(), tt.cfg, tt.oauth)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AddOAuth = %v, want an error containing %q", err, tt.want)
			}
			if n := len(im.Servers()); n != 0 {
				t.Errorf("%d servers added, want none", n)
			}
		})
	}
}

func TestParseOAuthRedirect(t *testing.T) {
	tests := []struct {
		in      string
		want    *mcpbridge.OAuthRedirect
		wantErr string
	}{
		{"http://127.0.0.1/cb?code=c&state=s&iss=https%3A%2F%2Fas", &mcpbridge.OAuthRedirect{Code: "c", State: "s", Iss: "https://as"}, ""},
		{"http://127.0.0.1/cb?code=c", &mcpbridge.OAuthRedirect{Code: "c"}, ""},
		{"http://127.0.0.1/cb?error=access_denied&error_description=no+thanks", nil, "access_denied: no thanks"},
		{"http://127.0.0.1/cb?state=s", nil, "no code"},
		{"http://[::1/cb", nil, "parse oauth redirect"},
	}
	// A server's (or a forged visit's) error text is bounded, not a
	// megabyte on the terminal.
	long := "http://127.0.0.1/cb?error=" + strings.Repeat("e", 1<<16) + "&error_description=" + strings.Repeat("d", 1<<16)
	if _, err := mcpbridge.ParseOAuthRedirect(long); err == nil || len(err.Error()) > 1024 {
		t.Errorf("ParseOAuthRedirect of a long error = an error of %d bytes, want at most 1024", len(fmt.Sprint(err)))
	}
	for _, tt := range tests {
		got, err := mcpbridge.ParseOAuthRedirect(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseOAuthRedirect(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseOAuthRedirect(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseOAuthRedirect(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// A stored token obtained for another URL is not sent to the server.
func TestImportOAuthTokenOfAnotherServer(t *testing.T) {
	a := impNewAuthServer(t, nil)
	store := &mcpbridge.MemTokens{}
	leak := &mcpbridge.OAuthToken{Token: &oauth2.Token{AccessToken: "for-the-other", Expiry: time.Now().Add(time.Hour)},
		Resource: "http://127.0.0.1:1/mcp"}
	if err := store.SetToken("p", leak); err != nil {
		t.Fatal(err)
	}
	var asked int
	var mu sync.Mutex
	im := impImporter(t, wield.NewRegistry(nil), nil)
	err := im.AddOAuth(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.RS.URL + "/mcp", Enabled: true},
		&mcpbridge.OAuthConfig{RedirectURL: impRedirect, Authorize: impFollow(&asked, &mu), Tokens: store})
	if err != nil {
		t.Fatalf("AddOAuth: %v", err)
	}
	for _, tok := range a.Presented() {
		if tok == "for-the-other" {
			t.Fatal("the token of another server was sent")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Errorf("the browser step ran %d times, want 1", asked)
	}
}

// TestImportOAuthAuthorizePanics: an Authorize that panics is a failed
// authorization (AddOAuth's error), counted, not the end of the process.
func TestImportOAuthAuthorizePanics(t *testing.T) {
	key, _ := impTestKey(t)
	before := wield.CallbackPanics()[wield.CallbackMCPAuthorize]
	a := impNewAuthServer(t, &key.PublicKey)
	im := impImporter(t, wield.NewRegistry(nil), nil)
	oauth := &mcpbridge.OAuthConfig{RedirectURL: impRedirect, Authorize: func(context.Context, string) (*mcpbridge.OAuthRedirect, error) {
		panic("Authorize bug")
	}}
	if err := im.AddOAuth(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.RS.URL + "/mcp", Enabled: true}, oauth); err == nil {
		t.Error("AddOAuth succeeded with an Authorize that panics")
	}
	if n := wield.CallbackPanics()[wield.CallbackMCPAuthorize] - before; n < 1 {
		t.Errorf("mcp_authorize panics counted: %d, want at least 1", n)
	}
}

// A server's tokens removed from the file by another process (wield mcp
// logout beside a running wield serve) stay removed when the running
// importer refreshes the token it holds: it uses the new token, and does
// not write it back.
func TestImportOAuthRefreshAfterLogout(t *testing.T) {
	a := impNewAuthServer(t, nil)
	path := filepath.Join(t.TempDir(), "tokens.json")
	cfg := mcpbridge.ServerConfig{Name: "p", URL: a.RS.URL + "/mcp", Enabled: true}
	var asked int
	var mu sync.Mutex
	add := func(store *mcpbridge.FileTokens) {
		t.Helper()
		reg := wield.NewRegistry(nil)
		im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{Permission: wield.PermissionAuto})
		defer im.Close()
		if err := im.AddOAuth(t.Context(), cfg, &mcpbridge.OAuthConfig{RedirectURL: impRedirect, Authorize: impFollow(&asked, &mu), Tokens: store}); err != nil {
			t.Fatalf("AddOAuth: %v", err)
		}
		if r := impCall(t, impEngine(t, reg), "p__whoami", `{}`); !r.OK {
			t.Fatalf("call: %s", r.Error)
		}
	}
	login, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	add(login)
	saved, err := login.Token("p")
	if err != nil || saved == nil || saved.Token.RefreshToken == "" {
		t.Fatalf("stored token = %+v, %v; want one with a refresh token", saved, err)
	}
	expired := *saved.Token
	expired.Expiry = time.Now().Add(-time.Minute)
	saved.Token = &expired
	if err := login.SetToken("p", saved); err != nil {
		t.Fatal(err)
	}
	// serve reads the file; then a logout removes p's tokens.
	serve, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	logout, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if had, err := logout.DeleteToken("p"); err != nil || !had {
		t.Fatalf("logout: %v, %v", had, err)
	}
	add(serve) // refreshes the expired token it read
	if diff := cmp.Diff([]string{"authorization_code", "refresh_token"}, a.Grants()); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
	now, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if tok, _ := now.Token("p"); tok != nil {
		t.Errorf("the refresh brought back the tokens the logout removed: %+v", tok)
	}
}
