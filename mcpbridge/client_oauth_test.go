package mcpbridge_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
	"golang.org/x/oauth2"
)

// impAuthServer is an OAuth authorization server and an MCP server that
// requires its tokens, both on loopback: the server's metadata names the
// authorization server, which registers clients, approves authorization
// requests at once and issues tokens for codes, refresh tokens and client
// credentials.
type impAuthServer struct {
	t      *testing.T
	as, rs *httptest.Server
	key    *ecdsa.PublicKey // verifies client assertions

	mu        sync.Mutex
	issued    map[string]bool   // access tokens
	codes     map[string]string // code -> PKCE challenge
	refreshes map[string]bool
	grants    []string // grant_type of each token request, in order
	n         int
	redirect  string   // the redirect URL of the client; impRedirect unless set
	presented []string // bearer tokens the MCP server was sent
}

const (
	impClientID     = "wield-test"
	impClientSecret = "s3cret"
	impRedirect     = "http://127.0.0.1:1/callback"
)

func impNewAuthServer(t *testing.T, key *ecdsa.PublicKey) *impAuthServer {
	a := &impAuthServer{t: t, key: key, issued: map[string]bool{}, codes: map[string]string{}, refreshes: map[string]bool{}}
	asMux := http.NewServeMux()
	asMux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		impWriteJSON(w, http.StatusOK, map[string]any{
			"issuer": a.as.URL, "authorization_endpoint": a.as.URL + "/authorize", "token_endpoint": a.as.URL + "/token",
			"registration_endpoint": a.as.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "private_key_jwt", "none"},
		})
	})
	asMux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var meta struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		_ = json.NewDecoder(r.Body).Decode(&meta)
		impWriteJSON(w, http.StatusCreated, map[string]any{"client_id": "registered", "redirect_uris": meta.RedirectURIs,
			"token_endpoint_auth_method": "none"})
	})
	asMux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a.mu.Lock()
		redirect := a.redirect
		a.mu.Unlock()
		if redirect == "" {
			redirect = impRedirect
		}
		if q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != redirect {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		a.n++
		code := fmt.Sprintf("code-%d", a.n)
		a.codes[code] = q.Get("code_challenge")
		a.mu.Unlock()
		http.Redirect(w, r, redirect+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
	})
	asMux.HandleFunc("POST /token", a.token)
	a.as = httptest.NewServer(asMux)
	t.Cleanup(a.as.Close)

	srv := mcp.NewServer(&mcp.Implementation{Name: "protected"}, nil)
	srv.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "authorized"}}}, nil
		})
	rsMux := http.NewServeMux()
	rsMux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		impWriteJSON(w, http.StatusOK, map[string]any{"resource": a.rs.URL + "/mcp", "authorization_servers": []string{a.as.URL}})
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.presented = append(a.presented, tok)
		if !a.issued[tok] {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	rsMux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{})(h))
	a.rs = httptest.NewServer(rsMux)
	t.Cleanup(a.rs.Close)
	return a
}

// token issues a token for a valid grant and records the grant's type.
func (a *impAuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	grant := r.PostForm.Get("grant_type")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.grants = append(a.grants, grant)
	fail := func(why string) {
		impWriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": why})
	}
	switch grant {
	case "authorization_code":
		challenge, ok := a.codes[r.PostForm.Get("code")]
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			fail("unknown code or wrong verifier")
			return
		}
		delete(a.codes, r.PostForm.Get("code"))
	case "refresh_token":
		if !a.refreshes[r.PostForm.Get("refresh_token")] {
			fail("unknown refresh token")
			return
		}
	case "client_credentials":
		if err := a.checkClient(r); err != nil {
			impWriteJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": err.Error()})
			return
		}
	default:
		fail("unsupported grant " + grant)
		return
	}
	a.n++
	access, refresh := fmt.Sprintf("access-%d", a.n), fmt.Sprintf("refresh-%d", a.n)
	a.issued[access], a.refreshes[refresh] = true, true
	impWriteJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh})
}

// checkClient authenticates a client credentials request: a client secret
// in Basic auth, or an ES256 assertion signed by the test key.
func (a *impAuthServer) checkClient(r *http.Request) error {
	if id, secret, ok := r.BasicAuth(); ok {
		if id != impClientID || secret != impClientSecret {
			return errors.New("wrong client secret")
		}
		return nil
	}
	if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return errors.New("no client authentication")
	}
	parts := strings.Split(r.PostForm.Get("client_assertion"), ".")
	if len(parts) != 3 {
		return errors.New("malformed assertion")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return errors.New("malformed signature")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(a.key, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return errors.New("bad signature")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return err
	}
	var claims struct {
		Iss, Sub, Aud string
		Exp           int64
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return err
	}
	if claims.Iss != impClientID || claims.Sub != impClientID || claims.Aud != a.as.URL || claims.Exp < time.Now().Unix() {
		return fmt.Errorf("wrong claims %+v", claims)
	}
	return nil
}

func (a *impAuthServer) grantsSeen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.grants...)
}

func impWriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
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
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
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
			&mcpbridge.OAuthConfig{ClientID: impClientID, ClientSecret: impClientSecret, RedirectURL: impRedirect, Authorize: impFollow(&asked, &mu)},
			[]string{"authorization_code"}, 1},
		{"client credentials with a secret",
			&mcpbridge.OAuthConfig{ClientCredentials: true, ClientID: impClientID, ClientSecret: impClientSecret},
			[]string{"client_credentials"}, 0},
		{"client credentials with a signed assertion",
			&mcpbridge.OAuthConfig{ClientCredentials: true, ClientID: impClientID, PrivateKey: keyPEM},
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
			if err := im.AddOAuth(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.rs.URL + "/mcp", Enabled: true}, tt.oauth); err != nil {
				t.Fatalf("AddOAuth: %v", err)
			}
			r := impCall(t, impEngine(t, reg), "p__whoami", `{}`)
			if !r.OK || string(r.Output) != `"authorized"` {
				t.Errorf("call: ok %v, output %s, error %s", r.OK, r.Output, r.Error)
			}
			if diff := cmp.Diff(tt.wantGrants, a.grantsSeen()); diff != "" {
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
	err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.rs.URL + "/mcp", Enabled: true})
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
	cfg := mcpbridge.ServerConfig{Name: "p", URL: a.rs.URL + "/mcp", Enabled: true}
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
	if saved.TokenURL != a.as.URL+"/token" || saved.ClientID != "registered" || saved.Resource != cfg.URL {
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
	if diff := cmp.Diff([]string{"authorization_code", "refresh_token"}, a.grantsSeen()); diff != "" {
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
	err := im.AddOAuth(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.rs.URL + "/mcp", Enabled: true},
		&mcpbridge.OAuthConfig{RedirectURL: impRedirect, Authorize: impFollow(&asked, &mu), Tokens: store})
	if err != nil {
		t.Fatalf("AddOAuth: %v", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, tok := range a.presented {
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
	if err := im.AddOAuth(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.rs.URL + "/mcp", Enabled: true}, oauth); err == nil {
		t.Error("AddOAuth succeeded with an Authorize that panics")
	}
	if n := wield.CallbackPanics()[wield.CallbackMCPAuthorize] - before; n < 1 {
		t.Errorf("mcp_authorize panics counted: %d, want at least 1", n)
	}
}
