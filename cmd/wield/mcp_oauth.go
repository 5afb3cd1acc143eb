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
	"time"

	"github.com/wieldhq/wield"
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
	// logins, of a serving process, waits for the logins of its servers
	// that have none that works.
	logins *loginWatch
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
// token says to do: why, and the command that logs in; a serving process
// picks the login up by itself.
func (a *app) loginHint(name, why string) string {
	cmd := "wield mcp login " + name
	if a.config != "" {
		cmd += " --config " + a.config
	}
	then := "then start again"
	if a.serving {
		then = "this process imports it again once the login is kept"
	}
	return fmt.Sprintf("mcp server %s: %s (oauth grant authorization_code): run `%s`, %s", name, why, cmd, then)
}

// oauthConfig is the importer's OAuth configuration of server s, as
// wield.yaml's oauth says; for the authorization code grant, the token of
// `wield mcp login` must be stored for s's URL, and a server that later
// refuses it (and it cannot be refreshed) is told to log in again. A
// serving process waits for that login ([loginWatch]).
func (a *app) oauthConfig(s toolfile.MCPServer, o toolfile.MCPOAuth, tokens *oauthTokens) (*mcpbridge.OAuthConfig, error) {
	if o.Grant == toolfile.GrantClientCredentials {
		return a.oauthConfigWith(s, o, nil, tokens)
	}
	store, err := tokens.open(a.warnf)
	if err != nil {
		return nil, err
	}
	return a.oauthConfigWith(s, o, store, tokens)
}

// oauthConfigWith is oauthConfig with the tokens of store (the authorization
// code grant only).
func (a *app) oauthConfigWith(s toolfile.MCPServer, o toolfile.MCPOAuth, store *mcpbridge.FileTokens, tokens *oauthTokens) (*mcpbridge.OAuthConfig, error) {
	oc := &mcpbridge.OAuthConfig{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes}
	if o.Grant == toolfile.GrantClientCredentials {
		oc.ClientCredentials, oc.PrivateKey = true, o.PrivateKey
		return oc, nil
	}
	if a.serving {
		tokens.watch(a)
	}
	t, err := store.Token(s.Name)
	if err != nil {
		return nil, err
	}
	if t == nil || t.Token == nil || t.Resource != s.URL {
		if a.serving {
			tokens.await(s, o, "")
		}
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
		if a.serving {
			// The token in the file now does not do: a login's new
			// one will.
			stale := ""
			if now, err := mcpbridge.OpenFileTokens(tokensFile()); err == nil {
				if t, _ := now.Token(s.Name); t != nil && t.Token != nil {
					stale = t.Token.AccessToken
				}
			}
			tokens.await(s, o, stale)
		}
		return nil, errors.New(hint)
	}
	return oc, nil
}

// loginWatch is how a serving process (wield serve, wield mcp) picks up a
// `wield mcp login` made while it runs, without a restart: it looks at the
// token file every loginPoll, and when a server waiting for a login (none
// was kept, or its token was refused and could not be refreshed) has a
// token there other than the one that did not do, it imports the server
// again with it, saying so on its log.
type loginWatch struct {
	a      *app
	tokens *oauthTokens
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	waiting map[string]*awaitedLogin // by server name
	dirty   bool                     // look at the file at the next tick, changed or not
}

// awaitedLogin is a server waiting for a login, and the access token
// that did not do ("" when none was kept).
type awaitedLogin struct {
	s     toolfile.MCPServer
	o     toolfile.MCPOAuth
	stale string
}

// loginPoll is how often a serving process looks at the token file while
// a server waits for a login.
const loginPoll = time.Second

// watch starts the watch of a serving process, once: called as its imports
// are set up, before any server waits.
func (t *oauthTokens) watch(a *app) {
	if t.logins != nil {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	w := &loginWatch{a: a, tokens: t, ctx: ctx, stop: stop, waiting: map[string]*awaitedLogin{}}
	t.logins = w
	w.wg.Go(w.run)
	// Among the closers, it ends before the importer closes.
	a.closers = append(a.closers, func() error { w.stop(); w.wg.Wait(); return nil })
}

// await makes server s wait for a login. A server waiting already keeps
// the token it waits to see replaced.
func (t *oauthTokens) await(s toolfile.MCPServer, o toolfile.MCPOAuth, stale string) {
	w := t.logins
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.waiting[s.Name]; !ok {
		w.waiting[s.Name] = &awaitedLogin{s: s, o: o, stale: stale}
		w.dirty = true
	}
}

// run looks at the token file until the process ends.
func (w *loginWatch) run() {
	path := tokensFile()
	stat := func() (time.Time, int64) {
		fi, err := os.Stat(path)
		if err != nil {
			return time.Time{}, -1
		}
		return fi.ModTime(), fi.Size()
	}
	var mod time.Time
	size := int64(-2) // unseen: the first tick looks
	tick := time.NewTicker(loginPoll)
	defer tick.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-tick.C:
		}
		m, n := stat()
		w.mu.Lock()
		changed := w.dirty || !m.Equal(mod) || n != size
		w.dirty = false
		w.mu.Unlock()
		if !changed {
			continue
		}
		mod, size = m, n
		w.check(path)
	}
}

// check imports again each waiting server whose login the token file at
// path now holds.
func (w *loginWatch) check(path string) {
	store, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		w.a.warnf("warning: mcp tokens: %v", err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, l := range w.waiting {
		t, err := store.Token(name)
		if err != nil || t == nil || t.Token == nil || t.Resource != l.s.URL || t.Token.AccessToken == l.stale {
			continue
		}
		delete(w.waiting, name)
		w.wg.Go(func() { w.reimport(l, store, path) })
	}
}

// reimport replaces the import of l's server with one of the login in
// store.
func (w *loginWatch) reimport(l *awaitedLogin, store *mcpbridge.FileTokens, path string) {
	a, name := w.a, l.s.Name
	im := a.importer
	if im == nil || w.ctx.Err() != nil {
		return
	}
	a.warnf("mcp server %s: a login was kept in %s: importing the server again with it", name, path)
	if err := im.Remove(name); err != nil && !errors.Is(err, wield.ErrNotFound) {
		a.warnf("warning: mcp server %s: %v", name, err)
		return
	}
	oc, err := a.oauthConfigWith(l.s, l.o, store, w.tokens)
	var connect func(context.Context) error
	if err == nil {
		connect, err = im.StartOAuth(mcpbridge.ServerConfig(l.s), oc)
	}
	if err == nil {
		err = connect(w.ctx)
	}
	switch {
	case w.ctx.Err() != nil:
	case err != nil:
		a.warnf("warning: %s: mcp_servers: %v", a.config, err)
	default:
		a.warnf("mcp server %s: imported with the login: its tools are callable", name)
	}
}

// loopbackRedirect is the redirect URL of a login on port (RFC 8252 §7.3).
func loopbackRedirect(port int) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/callback"
}
