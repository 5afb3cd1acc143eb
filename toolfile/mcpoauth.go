package toolfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wieldhq/wield/internal/jwtkey"
	"go.yaml.in/yaml/v3"
)

// MCPOAuth is an MCP server's `oauth:` in mcp_servers: how wield obtains
// the bearer token a streamable HTTP server requires (MCP's authorization:
// the server's protected resource metadata names its authorization
// server).
//
//	mcp_servers:
//	  - name: crm
//	    url: https://crm.example/mcp
//	    oauth:
//	      grant: client_credentials        # or authorization_code (the default)
//	      client_id: wield
//	      client_secret: "${CRM_SECRET}"   # or private_key_file: crm-key.pem (private_key_jwt)
//	      scopes: [tools.read]
//	  - name: notes
//	    url: https://notes.example/mcp
//	    oauth: {grant: authorization_code, offline_access: true, redirect_port: 8765}
//
// The client credentials grant acts for wield itself; the authorization
// code grant acts for a person, who approves once with `wield mcp login
// NAME`. It is kept apart from [MCPServer] (in [Config].MCPOAuth, by
// server name) so that an MCPServer still converts to mcpbridge's
// ServerConfig as is.
type MCPOAuth struct {
	// Grant is GrantClientCredentials or GrantAuthorizationCode.
	Grant string
	// ClientID is the client registered with the authorization server;
	// empty (authorization code only) lets wield register itself.
	ClientID string
	// ClientSecret authenticates ClientID. It is a secret: never print it.
	ClientSecret string `json:"-"`
	// PrivateKeyFile is the PEM key that signs client assertions
	// (private_key_jwt), resolved against the config file's folder;
	// PrivateKey is its content, read and checked when the file loads.
	PrivateKeyFile string
	PrivateKey     []byte `json:"-"`
	// Scopes are asked for besides those the server names.
	Scopes []string
	// OfflineAccess asks for a refresh token (authorization code only).
	OfflineAccess bool
	// RedirectPort is the loopback port `wield mcp login` listens on for
	// the browser's return; zero means a free one.
	RedirectPort int
}

// The grants of [MCPOAuth].
const (
	GrantClientCredentials = "client_credentials"
	GrantAuthorizationCode = "authorization_code"
)

// mcpOAuth reads a server's oauth mapping. Fields named by an unset
// variable are skipped (the server is off, with a warning), and so are
// the checks between fields then.
func (c *configDecoder) mcpOAuth(f field, server string, unset []*unsetVar, dir string) *MCPOAuth {
	fs, ok := c.mapping(f.val, "mcp server "+server+": oauth")
	if !ok {
		return nil
	}
	o := &MCPOAuth{Grant: GrantAuthorizationCode}
	what := "mcp server " + server + ": oauth."
	var keyAt, portAt, offlineAt, secretAt *yaml.Node
	skipped := false
	for _, e := range fs {
		if unsetUnder(unset, e.val) {
			skipped = true
			continue
		}
		switch e.name {
		case "grant":
			o.Grant = c.str(e)
			if o.Grant != GrantClientCredentials && o.Grant != GrantAuthorizationCode {
				c.errorf(e.val, "%sgrant: %q is not client_credentials or authorization_code", what, o.Grant)
			}
		case "client_id":
			o.ClientID = c.str(e)
		case "client_secret":
			secretAt = e.val
			o.ClientSecret = c.str(e)
		case "private_key_file":
			keyAt = e.val
			o.PrivateKeyFile, o.PrivateKey = c.privateKey(e, what, dir)
		case "scopes":
			o.Scopes = c.strings(e)
		case "offline_access":
			offlineAt = e.val
			o.OfflineAccess = c.flag(e)
		case "redirect_port":
			portAt = e.val
			o.RedirectPort = c.integer(e)
			if o.RedirectPort > 65535 {
				c.errorf(e.val, "%sredirect_port: %d is not a port (1-65535, or 0 for a free one)", what, o.RedirectPort)
			}
		default:
			c.unknown(e, what[:len(what)-1])
		}
	}
	if skipped {
		return o
	}
	at := start(f.val, fs)
	switch o.Grant {
	case GrantClientCredentials:
		switch {
		case o.ClientID == "":
			c.errorf(at, "%sclient_id: the client_credentials grant needs a client_id", what)
		case o.ClientSecret == "" && o.PrivateKeyFile == "":
			c.errorf(at, "%sclient_secret: the client_credentials grant needs a client_secret or a private_key_file", what)
		case o.ClientSecret != "" && o.PrivateKeyFile != "":
			c.errorf(keyAt, "%sprivate_key_file: give a client_secret or a private_key_file, not both", what)
		}
		if portAt != nil {
			c.errorf(portAt, "%sredirect_port: only the authorization_code grant has a redirect (no person logs in with client_credentials)", what)
		}
		if offlineAt != nil && o.OfflineAccess {
			c.errorf(offlineAt, "%soffline_access: only the authorization_code grant has refresh tokens to ask for", what)
		}
	case GrantAuthorizationCode:
		if keyAt != nil {
			c.errorf(keyAt, "%sprivate_key_file: a private key signs client assertions of the client_credentials grant only", what)
		}
		if secretAt != nil && o.ClientID == "" {
			c.errorf(secretAt, "%sclient_secret: a client_secret needs the client_id it belongs to", what)
		}
	}
	return o
}

// unsetUnder reports whether one of unset is at or under n (a list of
// scopes, say), aliases followed as claim follows them.
func unsetUnder(unset []*unsetVar, n *yaml.Node) bool {
	under := nodesUnder(n)
	return slices.ContainsFunc(unset, func(u *unsetVar) bool { return under[u.node] })
}

// privateKey reads a private key file, relative to dir, and checks that it
// signs: a key that does not is a problem at the file's name, not a
// failure at the first token request.
func (c *configDecoder) privateKey(f field, what, dir string) (string, []byte) {
	p := c.str(f)
	if p == "" {
		return "", nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		c.errorf(f.val, "%sprivate_key_file: %q cannot be read: %v", what, p, unwrapPathError(err))
		return p, nil
	}
	if _, _, err := jwtkey.Parse(b); err != nil {
		c.errorf(f.val, "%sprivate_key_file: %q: %v", what, p, err)
		return p, nil
	}
	return p, b
}

// unwrapPathError drops the path an *os.PathError repeats.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// checkOAuthServer reports what makes oauth unfit for s: a command (stdio)
// or an sse server, an Authorization header of its own.
func (c *configDecoder) checkOAuthServer(s *MCPServer, at *yaml.Node) {
	if len(s.Command) > 0 || s.Transport == "stdio" {
		c.errorf(at, "mcp server %s: oauth: a stdio server (command) takes no oauth: it authorizes a streamable HTTP server (url)", s.Name)
		return
	}
	if s.Transport != "" && s.Transport != "http" {
		c.errorf(at, "mcp server %s: oauth: needs the http transport, not %s", s.Name, s.Transport)
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			c.errorf(at, "mcp server %s: oauth: sets the Authorization header; remove it from headers", s.Name)
		}
	}
}
