package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/toolfile"
)

// tokensFile is where `wield mcp login` keeps the OAuth tokens of the MCP
// servers whose grant is authorization_code, beside the pins (mode 0600):
// `wield serve`, `call` and `list` of the same user read them.
func tokensFile() string { return filepath.Join(stateDir(), "mcp-tokens.json") }

// oauthTokens opens the token file once per process.
type oauthTokens struct {
	once  sync.Once
	store *mcpbridge.FileTokens
	err   error
}

// open opens the token file; one that others may read (copied in with
// mode 0644, say) is used, with a warning through warn: its bearer and
// refresh tokens are secrets.
func (t *oauthTokens) open(warn func(format string, args ...any)) (*mcpbridge.FileTokens, error) {
	t.once.Do(func() {
		if err := os.MkdirAll(stateDir(), 0o700); err != nil {
			t.err = fmt.Errorf("mcp tokens: %w", err)
			return
		}
		path := tokensFile()
		if t.store, t.err = mcpbridge.OpenFileTokens(path); t.err != nil {
			return
		}
		if st, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
			warn("warning: mcp tokens: %s may be read by others (mode %04o): the tokens in it are secrets; run chmod 600 %s", path, st.Mode().Perm(), path)
		}
	})
	return t.store, t.err
}

// loginHint is what a server of grant authorization_code without a usable
// token says to do: why, and the command that logs in.
func (a *app) loginHint(name, why string) string {
	cmd := "wield mcp login " + name
	if a.config != "" {
		cmd += " --config " + a.config
	}
	return fmt.Sprintf("mcp server %s: %s (oauth grant authorization_code): run `%s`, then start again", name, why, cmd)
}

// oauthConfig is the importer's OAuth configuration of server s, as
// wield.yaml's oauth says; for the authorization code grant, the token of
// `wield mcp login` must be stored for s's URL, and a server that later
// refuses it (and it cannot be refreshed) is told to log in again.
func (a *app) oauthConfig(s toolfile.MCPServer, o toolfile.MCPOAuth, tokens *oauthTokens) (*mcpbridge.OAuthConfig, error) {
	oc := &mcpbridge.OAuthConfig{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes}
	if o.Grant == toolfile.GrantClientCredentials {
		oc.ClientCredentials, oc.PrivateKey = true, o.PrivateKey
		return oc, nil
	}
	store, err := tokens.open(a.warnf)
	if err != nil {
		return nil, err
	}
	t, err := store.Token(s.Name)
	if err != nil {
		return nil, err
	}
	if t == nil || t.Token == nil || t.Resource != s.URL {
		return nil, errors.New(a.loginHint(s.Name, "no authorization yet"))
	}
	oc.Tokens, oc.OfflineAccess = store, o.OfflineAccess
	if oc.ClientID == "" && t.ClientID != "" {
		// The client the login registered: a refused token goes straight
		// to Authorize below, not through another registration first.
		oc.ClientID, oc.ClientSecret = t.ClientID, t.ClientSecret
	}
	oc.RedirectURL = loopbackRedirect(o.RedirectPort)
	hint := a.loginHint(s.Name, "the server refused the stored token, and it could not be refreshed")
	oc.Authorize = func(context.Context, string) (*mcpbridge.OAuthRedirect, error) {
		return nil, errors.New(hint)
	}
	return oc, nil
}

// loopbackRedirect is the redirect URL of a login on port (RFC 8252 §7.3).
func loopbackRedirect(port int) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/callback"
}
