package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/toolfile"
)

func (a *app) mcpLoginCommand() *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "login NAME",
		Short: "Authorize wield with an MCP server of mcp_servers whose oauth grant is authorization_code",
		Long: `Authorize wield with the MCP server NAME of --config, whose oauth grant is
authorization_code: wield prints the authorization server's URL, to open in a
browser, and listens on 127.0.0.1 (oauth.redirect_port, else a free port) for
the browser's return (RFC 8252). It then exchanges the code for tokens and
keeps them in ` + "`$XDG_STATE_HOME/wield/mcp-tokens.json`" + ` (mode 0600), where
'wield serve', 'wield call' and 'wield list' find them; a refresh token, when
the server gives one (oauth.offline_access), renews them. Without
oauth.client_id, wield registers itself once and keeps that client in
` + "`mcp-clients.json`" + ` beside the tokens, for the next login; it registers again
when the authorization server or the redirect URL changes, or the server
refuses the client. A running 'wield serve' picks the login up without a
restart. No browser is started. Ctrl-C ends the wait, and so does --wait.
See docs/mcp.md#oauth.`,
		Example: `  wield mcp login notes --config wield.yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.mcpLogin(cmd.Context(), args[0], wait)
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 5*time.Minute, "how long to wait for the browser to come back")
	return cmd
}

func (a *app) mcpLogin(ctx context.Context, name string, wait time.Duration) error {
	if a.cfg == nil {
		return usagef("mcp login: give --config: NAME is one of its mcp_servers")
	}
	if wait <= 0 {
		return usagef("mcp login: --wait must be more than 0")
	}
	var s *toolfile.MCPServer
	for i := range a.cfg.MCPServers {
		if a.cfg.MCPServers[i].Name == name {
			s = &a.cfg.MCPServers[i]
		}
	}
	if s == nil {
		// A server whose ${VAR} is unset is off: say that, not that it is
		// missing.
		if w, off := a.cfg.MCPServersOff[name]; off {
			return fmt.Errorf("mcp login: %s", w)
		}
		return fmt.Errorf("mcp login: %s has no MCP server %q in mcp_servers", a.config, name)
	}
	o, ok := a.cfg.MCPOAuth[name]
	switch {
	case !ok:
		return fmt.Errorf("mcp login: mcp server %s has no oauth in %s: there is nothing to log in to", name, a.config)
	case o.Grant != toolfile.GrantAuthorizationCode:
		return fmt.Errorf("mcp login: mcp server %s's oauth grant is %s: wield obtains its tokens by itself, no person logs in", name, o.Grant)
	}
	store, err := (&oauthTokens{}).open(a.warnf)
	if err != nil {
		return err
	}
	// The client a login before registered (no client_id configured) is
	// used again, for the same server and its redirect URL; not a new one
	// per login.
	var kept *keptClient
	if o.ClientID == "" {
		clients, err := readClients()
		if err != nil {
			return fmt.Errorf("mcp login: %w", err)
		}
		if c, ok := clients[name]; ok && c.Resource == s.URL && c.ClientID != "" {
			kept = &c
		}
	}
	port := o.RedirectPort
	if port == 0 && kept != nil {
		// The port of the kept client's redirect URL, while it is free.
		port = keptPort(kept.RedirectURI)
	}
	if port == 0 {
		if port, err = freeLoopbackPort(); err != nil {
			return fmt.Errorf("mcp login: %w", err)
		}
	}
	redirect := loopbackRedirect(port)
	if kept != nil && kept.RedirectURI != redirect {
		kept = nil // registered for another redirect: wield registers anew
	}
	show := func(authURL string) {
		fmt.Fprintf(a.stdout, "To authorize wield with mcp server %s, open this URL in a browser:\n\n  %s\n\nWaiting for the browser to come back to %s (Ctrl-C to stop) ...\n",
			safetext.Line(name), safetext.Line(authURL), redirect)
	}
	cfg := mcpbridge.ServerConfig(*s)
	cfg.Enabled = true
	// The handshake holds the browser step: the importer's own limit is
	// past --wait, which ends it.
	cfg.Timeout = wait + time.Minute
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var w *regWatch
	for {
		w = &regWatch{base: http.DefaultTransport}
		oc := &mcpbridge.OAuthConfig{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes,
			OfflineAccess: o.OfflineAccess, RedirectURL: redirect, Tokens: freshLogin{store}, Authorize: mcpbridge.AuthorizeOnLoopback(redirect, show)}
		if kept != nil {
			oc.ClientID, oc.ClientSecret, w.want = kept.ClientID, kept.ClientSecret, kept.Issuer
		}
		// Errors only: a login that ends is told below, not as the
		// importer's background warnings.
		im := mcpbridge.NewImporter(wield.NewRegistry(nil), &mcpbridge.ImportOptions{HTTPClient: &http.Client{Transport: w},
			Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
		connect, err := im.StartOAuth(cfg, oc)
		if err != nil {
			im.Close()
			return fmt.Errorf("mcp login: %s: %w", a.config, err)
		}
		err = connect(lctx)
		im.Close()
		if err == nil {
			break
		}
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("mcp login %s: interrupted before the browser came back", name)
		case lctx.Err() != nil:
			return fmt.Errorf("mcp login %s: the browser did not come back within %s (--wait)", name, wait)
		case kept != nil && (w.issuerChanged || w.clientRefused):
			// Once: the next round registers, kept is nil.
			why := "the authorization server no longer knows the client wield registered (invalid_client)"
			if w.issuerChanged {
				why = fmt.Sprintf("the authorization server of mcp server %s is now %s, not the one wield registered with", name, w.issuer)
			}
			fmt.Fprintf(a.stdout, "%s: wield registers itself again\n", safetext.Line(why))
			if err := forgetClient(name); err != nil {
				a.warnf("warning: %v", err)
			}
			kept = nil
			continue
		}
		return fmt.Errorf("mcp login %s: %s", name, reasonOf(err))
	}
	t, err := store.Token(name)
	if err != nil || t == nil {
		return fmt.Errorf("mcp login %s: the server let wield in without a token to keep: it may not need oauth", name)
	}
	if o.ClientID == "" && w.registered && t.ClientID != "" {
		err := changeClients(func(m map[string]keptClient) bool {
			m[name] = keptClient{ClientID: t.ClientID, ClientSecret: t.ClientSecret, Issuer: w.issuer, RedirectURI: redirect, Resource: s.URL}
			return true
		})
		if err != nil {
			// The login stands; the next one registers again.
			a.warnf("warning: the client wield registered is not kept: %v", err)
		}
	}
	refresh := "no refresh token: log in again when it expires"
	if t.Token.RefreshToken != "" {
		refresh = "with a refresh token"
	}
	fmt.Fprintf(a.stdout, "Logged in to mcp server %s (%s); tokens kept in %s\n", safetext.Line(name), refresh, store.Path())
	return nil
}

// keptPort is the port of a kept client's loopback redirect URL when it is
// free now, else 0.
func keptPort(redirect string) int {
	u, err := url.Parse(redirect)
	if err != nil || u.Hostname() != "127.0.0.1" {
		return 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port <= 0 || port > 65535 {
		return 0
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", u.Port()))
	if err != nil {
		return 0
	}
	ln.Close()
	return port
}

// forgetClient removes the client kept for server name, and reports
// whether there was one.
func forgetClient(name string) error {
	return changeClients(func(m map[string]keptClient) bool {
		_, had := m[name]
		delete(m, name)
		return had
	})
}

// freeLoopbackPort returns a port of 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// freshLogin is the token file as a login sees it: without the tokens it
// holds, so that a login always asks the person (another account, a
// revoked token), and replaces them once it succeeds.
type freshLogin struct{ *mcpbridge.FileTokens }

// Token implements [mcpbridge.TokenStore]: there is none yet.
func (freshLogin) Token(string) (*mcpbridge.OAuthToken, error) { return nil, nil }

func (a *app) mcpLogoutCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget the tokens 'wield mcp login NAME' kept, and the client it registered",
		Long: `Remove the tokens of the MCP server NAME from ` + "`$XDG_STATE_HOME/wield/mcp-tokens.json`" + `,
where 'wield mcp login' keeps them, and the client it registered for NAME
(without a client_id in wield.yaml) from ` + "`mcp-clients.json`" + ` beside it: wield then
no longer reaches that server until a login again, which registers anew (a
server running now keeps the token it holds until it restarts). Both are
forgotten here, not revoked at the authorization server. Saying so when
none were kept, exit 0 either way.`,
		Example: `  wield mcp logout notes`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := (&oauthTokens{}).open(a.warnf)
			if err != nil {
				return err
			}
			had, err := store.DeleteToken(args[0])
			if err != nil {
				return fmt.Errorf("mcp logout: %w", err)
			}
			client := false
			err = changeClients(func(m map[string]keptClient) bool {
				_, client = m[args[0]]
				delete(m, args[0])
				return client
			})
			if err != nil {
				return fmt.Errorf("mcp logout: %w", err)
			}
			if client {
				fmt.Fprintf(a.stdout, "The client wield registered for mcp server %s is removed from %s\n", safetext.Line(args[0]), clientsFile())
			}
			if !had {
				fmt.Fprintf(a.stdout, "No tokens of mcp server %s were kept in %s\n", safetext.Line(args[0]), store.Path())
				return nil
			}
			fmt.Fprintf(a.stdout, "Logged out of mcp server %s: its tokens are removed from %s\n", safetext.Line(args[0]), store.Path())
			return nil
		},
	}
}
