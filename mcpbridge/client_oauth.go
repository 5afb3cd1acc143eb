package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jwtkey"
	"github.com/wieldhq/wield/internal/safetext"
	"golang.org/x/oauth2"
)

// OAuthConfig authorizes the importer to a streamable HTTP server that
// requires OAuth, as MCP's authorization specification describes: on the
// server's 401 the importer discovers its authorization server (protected
// resource metadata, then authorization server metadata), registers or
// identifies itself, obtains a token and retries, all through the SDK's
// client-side handlers ([auth.AuthorizationCodeHandler],
// [extauth.ClientCredentialsHandler]).
//
// Two grants are supported. The authorization code grant (the default)
// acts for a person, who approves the access in a browser: Authorize
// completes that step. The client credentials grant (ClientCredentials)
// acts for the service itself, with a pre-registered ClientID and either a
// ClientSecret or a PrivateKey. It is given to [Importer.AddOAuth] beside a
// [ServerConfig], which stays a plain configuration that a file can hold.
type OAuthConfig struct {
	// ClientCredentials selects the client credentials grant (RFC 6749
	// §4.4): no person, no browser, no registration; it needs ClientID and
	// ClientSecret or PrivateKey.
	ClientCredentials bool
	// ClientID identifies a client registered in advance with the
	// authorization server. Empty means the importer registers itself:
	// with ClientMetadataURL when the server accepts client ID metadata
	// documents, else by dynamic client registration with RedirectURL.
	ClientID string
	// ClientSecret authenticates ClientID at the token endpoint
	// (client_secret_post or client_secret_basic, as the server supports).
	ClientSecret string
	// PrivateKey, a PEM PKCS#8 (or SEC 1, or PKCS#1) EC P-256 or RSA key,
	// signs the client assertion that authenticates ClientID with the client
	// credentials grant (private_key_jwt, RFC 7523), ES256 or RS256.
	PrivateKey []byte
	// ClientMetadataURL is the https URL of the client's metadata document
	// (it is then the client ID), used when the authorization server says it
	// supports client ID metadata documents.
	ClientMetadataURL string
	// RedirectURL is where the authorization server sends the browser back
	// with the code; it is registered by dynamic client registration.
	// Required for the authorization code grant.
	RedirectURL string
	// Scopes are requested in addition to those the server asks for (in its
	// challenge or its metadata).
	Scopes []string
	// OfflineAccess asks for a refresh token (scope offline_access) when the
	// authorization server offers one, so that a stored token outlives its
	// access token.
	OfflineAccess bool
	// Authorize completes the browser step of the authorization code grant:
	// it shows authURL to a person (or follows it, for an authorization
	// server that approves by itself) and returns what the authorization
	// server put on the redirect to RedirectURL ([ParseOAuthRedirect] reads
	// it). It runs when the server first refuses the importer, within the
	// handshake (bounded by [ImportOptions.ConnectTimeout]), and again
	// whenever the server refuses a token that cannot be refreshed, within
	// the call that found out. Required for the authorization code grant.
	// A panic in it is a failed authorization, logged and counted (see
	// [wield.Protect]).
	Authorize func(ctx context.Context, authURL string) (*OAuthRedirect, error)
	// Tokens keeps the tokens of the authorization code grant across
	// restarts, so that a person approves once; nil keeps them in memory for
	// the importer's life (a reconnection does not ask again).
	Tokens TokenStore
	// IDToken selects enterprise-managed authorization (MCP's extension
	// SEP-990) when set: it returns an ID token of the person from the
	// enterprise's identity provider (IdPIssuer), which is exchanged there
	// for an identity assertion grant (ID-JAG, RFC 8693 token exchange,
	// as IdPClientID and IdPClientSecret) for the server's authorization
	// server, found by its protected resource metadata; that grant gives
	// the access token (RFC 7523 JWT bearer grant, as ClientID and
	// ClientSecret). No browser step: Authorize and RedirectURL are unused.
	IDToken func(ctx context.Context) (string, error)
	// IdPIssuer is the identity provider's issuer URL, whose metadata names
	// its token endpoint; IdPClientID and IdPClientSecret identify the
	// importer there (the secret may be empty for a public client).
	IdPIssuer, IdPClientID, IdPClientSecret string
}

// OAuthRedirect is what an authorization server put on the redirect URL at
// the end of the browser step.
type OAuthRedirect struct {
	// Code is the authorization code.
	Code string
	// State must be the state of the authorization URL; it is checked.
	State string
	// Iss is the issuer (RFC 9207), when the server sends it; it is checked.
	Iss string
}

// ParseOAuthRedirect reads the redirect URL an authorization server sent
// the browser to. It returns an error for a URL that does not parse and for
// an error response (error=access_denied and the like), whose description
// it includes.
func ParseOAuthRedirect(redirect string) (*OAuthRedirect, error) {
	u, err := url.Parse(redirect)
	if err != nil {
		return nil, fmt.Errorf("parse oauth redirect: %w", err)
	}
	q := u.Query()
	if e := q.Get("error"); e != "" {
		// The authorization server's words, shown to a person: bounded
		// (the terminal escapes them).
		e = safetext.Clip(e, 64)
		if d := q.Get("error_description"); d != "" {
			e += ": " + safetext.Clip(d, 512)
		}
		return nil, fmt.Errorf("parse oauth redirect: the authorization server refused: %s", e)
	}
	if q.Get("code") == "" {
		return nil, errors.New("parse oauth redirect: no code")
	}
	return &OAuthRedirect{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// check reports what is missing for the chosen grant.
func (o *OAuthConfig) check() error {
	var errs []error
	if o.IDToken != nil {
		if o.ClientCredentials {
			errs = append(errs, errors.New("give IDToken (enterprise-managed authorization) or the client credentials grant, not both"))
		}
		if o.IdPIssuer == "" || o.IdPClientID == "" {
			errs = append(errs, errors.New("enterprise-managed authorization needs the identity provider's issuer and client id"))
		}
		if o.ClientID == "" {
			errs = append(errs, errors.New("enterprise-managed authorization needs the client id registered with the server's authorization server"))
		}
		return errors.Join(errs...)
	}
	if o.ClientCredentials {
		switch {
		case o.ClientID == "":
			errs = append(errs, errors.New("the client credentials grant needs a client id"))
		case o.ClientSecret == "" && len(o.PrivateKey) == 0:
			errs = append(errs, errors.New("the client credentials grant needs a client secret or a private key"))
		case o.ClientSecret != "" && len(o.PrivateKey) > 0:
			errs = append(errs, errors.New("give a client secret or a private key, not both"))
		}
		if len(o.PrivateKey) > 0 {
			if _, _, err := jwtkey.Parse(o.PrivateKey); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	if o.Authorize == nil {
		errs = append(errs, errors.New("the authorization code grant needs an Authorize callback"))
	}
	if o.RedirectURL == "" {
		errs = append(errs, errors.New("the authorization code grant needs a redirect url"))
	}
	if len(o.PrivateKey) > 0 {
		errs = append(errs, errors.New("a private key is only used by the client credentials grant"))
	}
	return errors.Join(errs...)
}

// impOAuthHandler builds the handler of one server; it lives as long as the
// server is added, so that a reconnection reuses its token.
func (s *impServer) impOAuthHandler(o *OAuthConfig) (auth.OAuthHandler, error) {
	hc := s.im.opts.HTTPClient // not the server's headers: they are for the server
	if hc == nil {
		hc = http.DefaultClient
	}
	if o.IDToken != nil {
		return &impEnterprise{o: o, hc: hc, server: s.cfg.Name, resource: s.cfg.URL, log: s.im}, nil
	}
	if o.ClientCredentials {
		if len(o.PrivateKey) > 0 {
			return impNewJWTHandler(o, hc)
		}
		return extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: o.ClientID,
				ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}},
			HTTPClient: hc,
		})
	}
	store := o.Tokens
	if store == nil {
		store = &MemTokens{}
	}
	if u, err := url.Parse(s.cfg.URL); err == nil {
		// A 2025-03-26 server's metadata at its origin (client_oauth_legacy.go).
		c := *hc
		base := c.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		c.Transport = &impLegacyMeta{base: base, origin: impOrigin(u)}
		hc = &c
	}
	server := s.cfg.Name
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         o.RedirectURL,
		RequestRefreshToken: o.OfflineAccess,
		Client:              hc,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			var r *OAuthRedirect
			var err error
			if !wield.Protect(s.im.log, wield.CallbackMCPAuthorize, func() { r, err = o.Authorize(ctx, args.URL) }) {
				// It runs on a connection's goroutine: contained, it is a
				// failed authorization, not the end of the process.
				err = errors.New("the authorize callback panicked")
			}
			if err != nil {
				return nil, fmt.Errorf("authorize with mcp server %q: %w", server, err)
			}
			if r == nil {
				return nil, fmt.Errorf("authorize with mcp server %q: no redirect", server)
			}
			return &auth.AuthorizationResult{Code: r.Code, State: r.State, Iss: r.Iss}, nil
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			st := &impSavingSource{store: store, server: server, resource: s.cfg.URL, log: s.im, base: c.TokenSource(ctx, t),
				tokenURL: c.Endpoint.TokenURL, clientID: c.ClientID, secret: c.ClientSecret, style: int(c.Endpoint.AuthStyle)}
			if err := st.save(t); err != nil {
				// The token works; only the next start will ask again.
				s.im.log.Warn("oauth token not stored", "server", server, "error", err)
			}
			return st, nil
		},
	}
	if len(o.Scopes) > 0 {
		extra := slices.Clone(o.Scopes)
		cfg.ScopeFilter = func(discovered []string) []string {
			out := slices.Clone(discovered)
			for _, sc := range extra {
				if !slices.Contains(out, sc) {
					out = append(out, sc)
				}
			}
			return out
		}
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	if o.ClientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
		cfg.PreregisteredClient = pre
	}
	meta := &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{o.RedirectURL}, ClientName: "wield"}
	if o.OfflineAccess {
		meta.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: meta}
	stored, err := store.Token(server)
	if err != nil {
		return nil, fmt.Errorf("load oauth token: %w", err)
	}
	// A token is only ever sent to the server it was obtained for: a
	// server renamed, or a name given to another URL, starts afresh.
	if stored != nil && stored.Token != nil && stored.Resource == s.cfg.URL {
		cfg.InitialTokenSource = impStoredSource(stored, store, server, hc, s.im)
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}

// impStoredSource serves a stored token, refreshing it when it carries
// what refreshing needs. A token that cannot be refreshed is served until
// the server refuses it, which starts the authorization again.
func impStoredSource(t *OAuthToken, store TokenStore, server string, hc *http.Client, im *Importer) oauth2.TokenSource {
	if t.Token.RefreshToken == "" || t.TokenURL == "" {
		return oauth2.StaticTokenSource(t.Token)
	}
	c := &oauth2.Config{ClientID: t.ClientID, ClientSecret: t.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: t.TokenURL, AuthStyle: oauth2.AuthStyle(t.AuthStyle)}}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	return &impSavingSource{store: store, server: server, resource: t.Resource, log: im, base: c.TokenSource(ctx, t.Token),
		tokenURL: t.TokenURL, clientID: t.ClientID, secret: t.ClientSecret, style: t.AuthStyle, last: t.Token.AccessToken, stored: true}
}

// impSavingSource stores every new token its base source returns.
type impSavingSource struct {
	base                       oauth2.TokenSource
	store                      TokenStore
	server, resource           string
	log                        *Importer
	tokenURL, clientID, secret string
	style                      int

	mu   sync.Mutex
	last string // access token last stored
	// stored: the store has held the server's token (it was read from
	// there, or saved once), so a new one replaces it only while it is
	// still there: a token refreshed after `wield mcp logout` is not kept.
	stored bool
}

func (s *impSavingSource) Token() (*oauth2.Token, error) {
	t, err := s.base.Token()
	if err != nil {
		return nil, err
	}
	if err := s.save(t); err != nil {
		// The token works; only the next start will ask again.
		s.log.log.Warn("oauth token not stored", "server", s.server, "error", err)
	}
	return t, nil
}

func (s *impSavingSource) save(t *oauth2.Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == nil || t.AccessToken == s.last {
		return nil
	}
	ot := &OAuthToken{Token: t, Resource: s.resource, TokenURL: s.tokenURL, ClientID: s.clientID, ClientSecret: s.secret, AuthStyle: s.style}
	if r, ok := s.store.(tokenReplacer); ok && s.stored {
		kept, err := r.replaceToken(s.server, ot)
		if err != nil {
			return fmt.Errorf("store oauth token of mcp server %q: %w", s.server, err)
		}
		if !kept {
			s.log.log.Info("the tokens of this mcp server were removed from the store (wield mcp logout): its refreshed token is used until it stops, not kept", "server", s.server)
		}
	} else if err := s.store.SetToken(s.server, ot); err != nil {
		return fmt.Errorf("store oauth token of mcp server %q: %w", s.server, err)
	}
	s.last, s.stored = t.AccessToken, true
	return nil
}

// impCheckOAuth reports what makes an OAuth configuration unusable with cfg.
func impCheckOAuth(cfg *ServerConfig, o *OAuthConfig) error {
	var errs []error
	if t := cfg.transport(); t != TransportHTTP {
		errs = append(errs, fmt.Errorf("oauth needs the http transport, not %s", t))
	}
	for k := range cfg.Headers {
		if strings.EqualFold(k, "Authorization") {
			errs = append(errs, errors.New("oauth sets the Authorization header; remove it from headers"))
		}
	}
	if err := o.check(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("mcp server %q: %w", cfg.Name, err)
	}
	return nil
}
