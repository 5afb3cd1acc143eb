package mcpbridge

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/wieldhq/wield/internal/jwtkey"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The SDK's client credentials handler authenticates with a client secret
// only; a client that holds a key pair instead (private_key_jwt, RFC 7523
// §2.2) gets this handler, which discovers the token endpoint the same way
// and signs a fresh assertion for every token request.

// impJWTHandler is an [auth.OAuthHandler] for the client credentials grant
// with a signed client assertion.
type impJWTHandler struct {
	clientID string
	scopes   []string
	key      crypto.Signer
	alg      string
	hc       *http.Client

	mu sync.Mutex
	ts oauth2.TokenSource
}

func impNewJWTHandler(o *OAuthConfig, hc *http.Client) (*impJWTHandler, error) {
	key, alg, err := jwtkey.Parse(o.PrivateKey)
	if err != nil {
		return nil, err
	}
	return &impJWTHandler{clientID: o.ClientID, scopes: o.Scopes, key: key, alg: alg, hc: hc}, nil
}

// TokenSource implements [auth.OAuthHandler].
func (h *impJWTHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

// Authorize implements [auth.OAuthHandler]: it finds the authorization
// server of the resource req was for and gets a token from it.
func (h *impJWTHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("authorize: parse WWW-Authenticate: %w", err)
	}
	if resp.StatusCode == http.StatusForbidden && impChallengeParam(challenges, "error") != "insufficient_scope" {
		return nil // not a matter of scope: the retry reports the refusal
	}
	prm, err := impResourceMeta(ctx, challenges, req.URL.String(), h.hc)
	if err != nil {
		return err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], h.hc)
	if err != nil {
		return fmt.Errorf("authorize: authorization server metadata: %w", err)
	}
	if asm == nil { // 2025-03-26 servers without metadata: the default endpoints
		asm = &oauthex.AuthServerMeta{Issuer: prm.AuthorizationServers[0], TokenEndpoint: prm.AuthorizationServers[0] + "/token"}
	}
	scopes := strings.Fields(impChallengeParam(challenges, "scope"))
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	for _, s := range h.scopes {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	src := &impAssertionSource{h: h, tokenURL: asm.TokenEndpoint, audience: asm.Issuer, resource: prm.Resource, scopes: scopes,
		ctx: context.WithValue(context.Background(), oauth2.HTTPClient, h.hc)}
	ts := oauth2.ReuseTokenSource(nil, src)
	if _, err := ts.Token(); err != nil {
		return fmt.Errorf("authorize: client credentials token request: %w", err)
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// impAssertionSource requests a token with a new assertion each time.
type impAssertionSource struct {
	h                            *impJWTHandler
	tokenURL, audience, resource string
	scopes                       []string
	ctx                          context.Context // carries the HTTP client; outlives the request that authorized
}

func (s *impAssertionSource) Token() (*oauth2.Token, error) {
	assertion, err := s.h.assertion(s.audience, time.Now())
	if err != nil {
		return nil, err
	}
	params := url.Values{
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion":      {assertion},
	}
	if s.resource != "" {
		params.Set("resource", s.resource) // RFC 8707
	}
	c := &clientcredentials.Config{ClientID: s.h.clientID, TokenURL: s.tokenURL, Scopes: s.scopes,
		EndpointParams: params, AuthStyle: oauth2.AuthStyleInParams}
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	return c.Token(ctx)
}

// assertion signs the client assertion: the client is its issuer and
// subject, the authorization server its audience, and it is good for five
// minutes and once (jti).
func (h *impJWTHandler) assertion(audience string, now time.Time) (string, error) {
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	header, _ := json.Marshal(map[string]string{"alg": h.alg, "typ": "JWT"})
	claims, err := json.Marshal(map[string]any{"iss": h.clientID, "sub": h.clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": base64.RawURLEncoding.EncodeToString(jti)})
	if err != nil {
		return "", fmt.Errorf("sign client assertion: %w", err)
	}
	input := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := h.key.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			return "", fmt.Errorf("sign client assertion: %w", err)
		}
		sig = make([]byte, 64) // JWS wants r and s, 32 bytes each (RFC 7518 §3.4)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		if err != nil {
			return "", fmt.Errorf("sign client assertion: %w", err)
		}
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// impChallengeParam returns a parameter of the Bearer challenge.
func impChallengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

// impResourceMeta finds the protected resource metadata of an MCP server as
// the specification orders it: the URL in the challenge, then the one at
// the endpoint's path, then the one at the root; a server with none is its
// own authorization server (2025-03-26).
func impResourceMeta(ctx context.Context, cs []oauthex.Challenge, resource string, hc *http.Client) (*oauthex.ProtectedResourceMetadata, error) {
	ru, err := url.Parse(resource)
	if err != nil {
		return nil, fmt.Errorf("authorize: resource %q: %w", resource, err)
	}
	type try struct{ meta, resource string }
	var tries []try
	for _, c := range cs {
		if u := c.Params["resource_metadata"]; u != "" {
			tries = append(tries, try{u, resource})
			break
		}
	}
	mu := *ru
	mu.RawQuery, mu.Fragment = "", ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	tries = append(tries, try{mu.String(), resource})
	mu.Path = "/.well-known/oauth-protected-resource"
	root := *ru
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	tries = append(tries, try{mu.String(), root.String()})
	for _, t := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, t.meta, t.resource, hc)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("authorize: the protected resource metadata names no authorization server")
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{root.String()}, Resource: resource}, nil
}
