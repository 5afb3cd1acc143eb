// Package oauthtest is an OAuth authorization server and an MCP server
// that requires its tokens, both on loopback, for tests of wield's importer
// (mcpbridge's own and the journeys of the binary): the MCP server's
// protected resource metadata names the authorization server, which
// registers clients (dynamic client registration: "registered", then
// "registered-2" and on, counted by [Server.Registrations]), approves authorization
// requests at once (redirecting to the client's redirect URL with a code,
// PKCE S256 required) and issues tokens for codes, refresh tokens and
// client credentials (a client secret in Basic auth, or an ES256 client
// assertion, private_key_jwt). The MCP server's one tool, whoami (read-only), answers
// "authorized".
package oauthtest

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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client registered in advance for the client credentials grant.
const (
	ClientID     = "wield-test"
	ClientSecret = "s3cret"
)

// Server is the authorization server (AS) and the MCP server (RS).
type Server struct {
	AS, RS *httptest.Server
	key    *ecdsa.PublicKey // verifies client assertions; nil refuses them

	mu         sync.Mutex
	issued     map[string]bool   // access tokens
	codes      map[string]string // code -> PKCE challenge
	refreshes  map[string]bool
	grants     []string // grant_type of each token request, in order
	n          int
	redirect   string   // the one redirect URL accepted, when set
	registered []string // redirect URLs registered dynamically
	clients    int      // clients registered dynamically
	forgotten  map[string]bool
	presented  []string // bearer tokens the MCP server was sent
	// noRegistration refuses dynamic client registration.
	noRegistration bool
}

// New starts both servers on loopback; key, when not nil, verifies the
// client assertions of the client credentials grant. Close them with
// [Server.Close].
func New(key *ecdsa.PublicKey) *Server {
	a := &Server{key: key, issued: map[string]bool{}, codes: map[string]string{}, refreshes: map[string]bool{}, forgotten: map[string]bool{}}
	asMux := http.NewServeMux()
	asMux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": a.AS.URL, "authorization_endpoint": a.AS.URL + "/authorize", "token_endpoint": a.AS.URL + "/token",
			"registration_endpoint": a.AS.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "private_key_jwt", "none"},
		})
	})
	asMux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		closed := a.noRegistration
		a.mu.Unlock()
		if closed {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "registration is closed"})
			return
		}
		var meta struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		_ = json.NewDecoder(r.Body).Decode(&meta)
		a.mu.Lock()
		a.registered = append(a.registered, meta.RedirectURIs...)
		a.clients++
		id := "registered" // the first; then registered-2, registered-3 ...
		if a.clients > 1 {
			id = fmt.Sprintf("registered-%d", a.clients)
		}
		a.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs,
			"token_endpoint_auth_method": "none"})
	})
	asMux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		redirect := q.Get("redirect_uri")
		a.mu.Lock()
		ok := redirect == a.redirect || a.redirect == "" && slices.Contains(a.registered, redirect)
		a.mu.Unlock()
		if q.Get("code_challenge_method") != "S256" || !ok {
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
	a.AS = httptest.NewServer(asMux)

	srv := mcp.NewServer(&mcp.Implementation{Name: "protected"}, nil)
	srv.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "authorized"}}}, nil
		})
	rsMux := http.NewServeMux()
	rsMux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": a.RS.URL + "/mcp", "authorization_servers": []string{a.AS.URL}})
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
	a.RS = httptest.NewServer(rsMux)
	return a
}

// Close stops both servers.
func (a *Server) Close() {
	a.RS.Close()
	a.AS.Close()
}

// MCPURL is the MCP server's endpoint.
func (a *Server) MCPURL() string { return a.RS.URL + "/mcp" }

// SetRedirect makes u the one redirect URL the authorization endpoint
// accepts (a client registered in advance with it); without it, only the
// URLs registered dynamically are.
func (a *Server) SetRedirect(u string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.redirect = u
}

// Grants returns the grant_type of each token request, in order.
func (a *Server) Grants() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.grants)
}

// Presented returns the bearer tokens the MCP server was sent, in order.
func (a *Server) Presented() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.presented)
}

// RefuseRegistration makes dynamic client registration fail from now on.
func (a *Server) RefuseRegistration() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.noRegistration = true
}

// Registrations counts the clients registered dynamically so far.
func (a *Server) Registrations() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.clients
}

// ForgetClients makes every client registered dynamically so far unknown:
// the token endpoint answers invalid_client to its code and refresh
// token requests (the authorization endpoint still redirects, as one
// that checks only the redirect URL does).
func (a *Server) ForgetClients() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for n := 1; n <= a.clients; n++ {
		id := "registered"
		if n > 1 {
			id = fmt.Sprintf("registered-%d", n)
		}
		a.forgotten[id] = true
	}
}

// Revoke makes every token issued so far, access and refresh, unknown.
func (a *Server) Revoke() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.issued)
	clear(a.refreshes)
}

// token issues a token for a valid grant and records the grant's type.
func (a *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	grant := r.PostForm.Get("grant_type")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.grants = append(a.grants, grant)
	fail := func(why string) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": why})
	}
	id := r.PostForm.Get("client_id")
	if u, _, ok := r.BasicAuth(); ok {
		id = u
	}
	if (grant == "authorization_code" || grant == "refresh_token") && a.forgotten[id] {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "unknown client " + id})
		return
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
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": err.Error()})
			return
		}
	default:
		fail("unsupported grant " + grant)
		return
	}
	a.n++
	access, refresh := fmt.Sprintf("access-%d", a.n), fmt.Sprintf("refresh-%d", a.n)
	a.issued[access], a.refreshes[refresh] = true, true
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh})
}

// checkClient authenticates a client credentials request: a client secret
// in Basic auth, or an ES256 assertion signed by the key.
func (a *Server) checkClient(r *http.Request) error {
	if id, secret, ok := r.BasicAuth(); ok {
		if id != ClientID || secret != ClientSecret {
			return errors.New("wrong client secret")
		}
		return nil
	}
	if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return errors.New("no client authentication")
	}
	if a.key == nil {
		return errors.New("no key to verify client assertions")
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
	if claims.Iss != ClientID || claims.Sub != ClientID || claims.Aud != a.AS.URL || claims.Exp < time.Now().Unix() {
		return fmt.Errorf("wrong claims %+v", claims)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// NewKey returns a new EC P-256 key and it as a PEM PKCS#8 block: the
// client's key of private_key_jwt ([New] takes its public half).
func NewKey() (*ecdsa.PrivateKey, []byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	return k, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
