package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wieldhq/wield/internal/atomicfile"
)

// clientsFile is where `wield mcp login` keeps the clients it registered
// (dynamic client registration) for the servers without a client_id,
// beside the tokens (mode 0600): the next login, and the refreshes of
// its tokens, use the same client instead of registering another.
func clientsFile() string { return filepath.Join(stateDir(), "mcp-clients.json") }

// keptClient is a client wield registered with an authorization server
// for one MCP server, and what it was registered for: a login whose
// authorization server (issuer) or redirect URL differs registers anew.
type keptClient struct {
	ClientID string `json:"client_id"`
	// ClientSecret is a secret: never print it.
	ClientSecret string `json:"client_secret,omitempty"`
	// Issuer is the authorization server's issuer, as its metadata said.
	Issuer string `json:"issuer"`
	// RedirectURI is the loopback redirect URL registered.
	RedirectURI string `json:"redirect_uri"`
	// Resource is the MCP server's URL it was registered to reach.
	Resource string `json:"resource"`
}

// readClients reads the kept clients by server name; a missing file is
// none.
func readClients() (map[string]keptClient, error) {
	m := map[string]keptClient{}
	b, err := os.ReadFile(clientsFile())
	switch {
	case errors.Is(err, os.ErrNotExist):
		return m, nil
	case err != nil:
		return nil, fmt.Errorf("mcp clients: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return m, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("mcp clients %s: %w", clientsFile(), err)
	}
	if m == nil {
		m = map[string]keptClient{}
	}
	return m, nil
}

// changeClients applies fn to the kept clients as the file holds them now
// and rewrites it (atomically, mode 0600) when fn reports a change. Only
// `wield mcp login` and `logout` write it.
func changeClients(fn func(map[string]keptClient) bool) error {
	if err := os.MkdirAll(stateDir(), 0o700); err != nil {
		return fmt.Errorf("mcp clients: %w", err)
	}
	m, err := readClients()
	if err != nil {
		return fmt.Errorf("%w; the file is left unchanged", err)
	}
	if !fn(m) {
		return nil
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(clientsFile(), append(b, '\n')); err != nil {
		return fmt.Errorf("mcp clients: %w", err)
	}
	return nil
}

// regWatch is the HTTP transport of a login: it passes every request on,
// and notes what the authorization handshake of the SDK does not tell:
// the issuer of the authorization server's metadata, whether a client was
// registered, and whether the token endpoint refused the client
// (invalid_client). With want set (a kept client is in use), metadata
// naming another issuer fails the handshake there, before any browser
// step: the kept client belongs to the other one; and once the kept
// client is refused, every request fails.
type regWatch struct {
	base http.RoundTripper
	want string

	mu            sync.Mutex
	issuer        string
	registration  string // the metadata's registration_endpoint
	token         string // the metadata's token_endpoint
	registered    bool
	issuerChanged bool
	clientRefused bool
}

func (w *regWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	w.mu.Lock()
	refused := w.clientRefused && w.want != ""
	w.mu.Unlock()
	if refused {
		// No second browser step with the refused client: the login
		// registers anew.
		return nil, errors.New("the authorization server refused wield's kept client (invalid_client)")
	}
	resp, err := w.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	at := r.URL.Scheme + "://" + r.URL.Host + r.URL.Path
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && resp.StatusCode == http.StatusOK &&
		(strings.Contains(r.URL.Path, "/.well-known/oauth-authorization-server") || strings.Contains(r.URL.Path, "/.well-known/openid-configuration")):
		var meta struct {
			Issuer       string `json:"issuer"`
			Registration string `json:"registration_endpoint"`
			Token        string `json:"token_endpoint"`
		}
		body := peek(resp)
		if json.Unmarshal(body, &meta) != nil || meta.Issuer == "" {
			return resp, nil // the SDK says what is wrong with it
		}
		w.issuer, w.registration, w.token = meta.Issuer, meta.Registration, meta.Token
		if w.want != "" && meta.Issuer != w.want {
			resp.Body.Close()
			w.issuerChanged = true
			return nil, fmt.Errorf("the authorization server is now %s, not %s, which wield's kept client was registered with", meta.Issuer, w.want)
		}
	case r.Method == http.MethodPost && w.registration != "" && at == w.registration && resp.StatusCode/100 == 2:
		w.registered = true
	case r.Method == http.MethodPost && w.token != "" && at == w.token && resp.StatusCode/100 == 4:
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(peek(resp), &e) == nil && e.Error == "invalid_client" {
			w.clientRefused = true
		}
	}
	return resp, nil
}

// peek reads resp's body (1 MiB at most) and puts it back for the reader
// after it.
func peek(resp *http.Response) []byte {
	orig := resp.Body
	b, err := io.ReadAll(io.LimitReader(orig, 1<<20))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), orig), orig}
	if err != nil {
		return nil
	}
	return b
}
