package mcpbridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/wieldhq/wield"
	"golang.org/x/oauth2"
)

// impEnterprise is the handler of enterprise-managed authorization
// ([OAuthConfig].IDToken). On the server's 401 it finds the server's
// authorization server from its protected resource metadata (the
// challenge's resource_metadata, else the well-known locations), exchanges
// the person's ID token at the identity provider for an ID-JAG (the SDK's
// oauthex.ExchangeToken) and that at the authorization server for an
// access token (the JWT bearer grant). The SDK's extauth.EnterpriseHandler
// does the same but cannot be used: it asks the identity provider's
// metadata for PKCE, which a provider used only for token exchange has no
// reason to offer, sends the client's secret only in the form, and must be
// told the authorization server beforehand.
type impEnterprise struct {
	o        *OAuthConfig
	hc       *http.Client
	server   string
	resource string
	log      *Importer

	mu  sync.Mutex
	src oauth2.TokenSource
}

func (e *impEnterprise) TokenSource(context.Context) (oauth2.TokenSource, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.src, nil
}

func (e *impEnterprise) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	tok, err := e.authorize(ctx, req, resp)
	if err != nil {
		return fmt.Errorf("authorize with mcp server %q: %w", e.server, err)
	}
	e.mu.Lock()
	e.src = oauth2.StaticTokenSource(tok)
	e.mu.Unlock()
	return nil
}

func (e *impEnterprise) authorize(ctx context.Context, req *http.Request, resp *http.Response) (*oauth2.Token, error) {
	prm, err := e.metadata(ctx, req, resp)
	if err != nil {
		return nil, err
	}
	asURL := prm.AuthorizationServers[0]
	var idToken string
	if !wield.Protect(e.log.log, wield.CallbackMCPAuthorize, func() { idToken, err = e.o.IDToken(ctx) }) {
		err = errors.New("the id token callback panicked")
	}
	if err != nil {
		return nil, fmt.Errorf("id token: %w", err)
	}
	idp, err := impIssuerMeta(ctx, e.o.IdPIssuer, e.hc)
	if err != nil {
		return nil, fmt.Errorf("identity provider %s: %w", e.o.IdPIssuer, err)
	}
	idpCreds := &oauthex.ClientCredentials{ClientID: e.o.IdPClientID}
	if e.o.IdPClientSecret != "" {
		idpCreds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: e.o.IdPClientSecret}
	}
	jag, err := oauthex.ExchangeToken(ctx, idp.TokenEndpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           asURL,
		Resource:           cmp.Or(prm.Resource, e.resource),
		Scope:              e.o.Scopes,
		SubjectToken:       idToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, idpCreds, e.hc)
	if err != nil {
		return nil, fmt.Errorf("token exchange at the identity provider: %w", err)
	}
	as, err := impIssuerMeta(ctx, asURL, e.hc)
	if err != nil {
		return nil, fmt.Errorf("authorization server %s: %w", asURL, err)
	}
	style := oauth2.AuthStyleInHeader // client_secret_basic, RFC 6749's default
	if len(as.TokenEndpointAuthMethodsSupported) > 0 && !slices.Contains(as.TokenEndpointAuthMethodsSupported, "client_secret_basic") {
		style = oauth2.AuthStyleInParams
	}
	cfg := &oauth2.Config{ClientID: e.o.ClientID, ClientSecret: e.o.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: as.TokenEndpoint, AuthStyle: style}}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, e.hc), "",
		oauth2.SetAuthURLParam("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
		oauth2.SetAuthURLParam("assertion", jag.AccessToken))
	if err != nil {
		return nil, fmt.Errorf("JWT bearer grant at the authorization server: %w", err)
	}
	return tok, nil
}

// impIssuerMeta reads an issuer's metadata (OAuth's well-known location,
// then OpenID's) and checks that it names that issuer (RFC 8414 §3.3) and
// a token endpoint.
func impIssuerMeta(ctx context.Context, issuer string, hc *http.Client) (*oauthex.AuthServerMeta, error) {
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("issuer %q is not an http(s) URL", issuer)
	}
	path := strings.TrimSuffix(u.Path, "/")
	var errs []error
	for _, m := range []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + path,
		u.Scheme + "://" + u.Host + "/.well-known/openid-configuration" + path,
		strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration",
	} {
		meta, err := impGetMeta(ctx, m, hc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if strings.TrimSuffix(meta.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("metadata at %s names issuer %q", m, meta.Issuer)
		}
		if meta.TokenEndpoint == "" {
			return nil, fmt.Errorf("metadata at %s names no token endpoint", m)
		}
		return meta, nil
	}
	return nil, fmt.Errorf("no metadata: %w", errors.Join(errs...))
}

func impGetMeta(ctx context.Context, u string, hc *http.Client) (*oauthex.AuthServerMeta, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	var meta oauthex.AuthServerMeta
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&meta); err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return &meta, nil
}

// metadata reads the server's protected resource metadata: at the
// challenge's resource_metadata, else at the path-based then the root
// well-known location of the server's URL.
func (e *impEnterprise) metadata(ctx context.Context, req *http.Request, resp *http.Response) (*oauthex.ProtectedResourceMetadata, error) {
	var urls []string
	if chs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); err == nil {
		for _, ch := range chs {
			if u := ch.Params["resource_metadata"]; u != "" {
				urls = append(urls, u)
			}
		}
	}
	u := *req.URL
	u.RawQuery, u.Fragment = "", ""
	if p := strings.TrimSuffix(u.Path, "/"); p != "" {
		urls = append(urls, (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/.well-known/oauth-protected-resource" + p}).String())
	}
	urls = append(urls, (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/.well-known/oauth-protected-resource"}).String())
	var errs []error
	for _, m := range urls {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, m, u.String(), e.hc)
		if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			return prm, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return nil, fmt.Errorf("no protected resource metadata names an authorization server: %w", errors.Join(errs...))
}
