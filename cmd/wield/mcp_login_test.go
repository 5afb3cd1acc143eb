package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wieldhq/wield/internal/oauthtest"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestMCPLoginRefusals: wield mcp login needs --config, a server of it with
// oauth of grant authorization_code, and ends after --wait when no browser
// comes back, saying so.
func TestMCPLoginRefusals(t *testing.T) {
	a := oauthtest.New(nil)
	defer a.Close()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cfg := filepath.Join(t.TempDir(), "wield.yaml")
	os.WriteFile(cfg, []byte(`mcp_servers:
  - {name: notes, url: "`+a.MCPURL()+`", oauth: {grant: authorization_code}}
  - {name: svc, url: "`+a.MCPURL()+`", oauth: {grant: client_credentials, client_id: c, client_secret: s}}
  - {name: plain, url: "`+a.MCPURL()+`"}
  - {name: unset, url: "`+a.MCPURL()+`", oauth: {grant: authorization_code, client_id: "${WIELD_TEST_UNSET_CLIENT}"}}
`), 0o600)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "login", "notes"}, "mcp login: give --config: NAME is one of its mcp_servers"},
		{[]string{"--config", cfg, "mcp", "login", "nope"}, `has no MCP server "nope" in mcp_servers`},
		{[]string{"--config", cfg, "mcp", "login", "plain"}, "mcp server plain has no oauth in " + cfg},
		{[]string{"--config", cfg, "mcp", "login", "unset"}, "mcp login: " + cfg + ":5:"},
		{[]string{"--config", cfg, "mcp", "login", "unset"}, "mcp server unset is off: environment variable WIELD_TEST_UNSET_CLIENT is not set"},
		{[]string{"--config", cfg, "mcp", "login", "svc"}, "mcp server svc's oauth grant is client_credentials: wield obtains its tokens by itself"},
		{[]string{"--config", cfg, "mcp", "login", "notes", "--wait", "0s"}, "--wait must be more than 0"},
		{[]string{"--config", cfg, "mcp", "login", "notes", "--wait", "300ms"}, "mcp login notes: the browser did not come back within 300ms (--wait)"},
	} {
		code, out, errs := runIn(t, "", tt.args...)
		if code == 0 || !strings.Contains(errs, tt.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q\n%s", tt.args, code, errs, tt.want, out)
		}
	}
	if _, err := os.Stat(tokensFile()); err == nil {
		t.Error("a token file was written without a login")
	}
}

// TestTokensFileReadableWarns: a token file others may read (copied in
// with mode 0644) is used, with a warning naming it and its mode.
func TestTokensFileReadableWarns(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are Unix's")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if err := os.MkdirAll(stateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokensFile(), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tokensFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runIn(t, "", "mcp", "logout", "notes")
	if code != 0 || !strings.Contains(errs, "may be read by others (mode 0644)") || !strings.Contains(out, "No tokens of mcp server notes") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}

// lockedBuffer is a bytes.Buffer written by a command while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// loginAsBrowser runs `wield --config cfg mcp login name` and plays the
// browser: it follows each authorization URL the login prints (an
// authorization server that approves by itself redirects it to the
// login's loopback listener). It returns the exit code and output.
func loginAsBrowser(t *testing.T, cfg, name string) (int, string, string) {
	t.Helper()
	var out, errs lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), []string{"--config", cfg, "mcp", "login", name, "--wait", "20s"}, strings.NewReader(""), &out, &errs)
	}()
	c := &http.Client{Timeout: 10 * time.Second}
	followed := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case code := <-done:
			return code, out.String(), errs.String()
		case <-time.After(20 * time.Millisecond):
		}
		var urls []string
		for line := range strings.Lines(out.String()) {
			if l := strings.TrimSpace(line); strings.HasPrefix(l, "http") && strings.Contains(l, "/authorize?") {
				urls = append(urls, l)
			}
		}
		for ; followed < len(urls); followed++ {
			resp, err := c.Get(urls[followed])
			if err != nil {
				t.Errorf("browse %s: %v", urls[followed], err)
				continue
			}
			resp.Body.Close()
		}
	}
	t.Fatalf("mcp login %s did not end\n%s\n%s", name, out.String(), errs.String())
	return 0, "", ""
}

// TestMCPLoginKeepsRegisteredClient: a login without a client_id registers
// wield once and keeps the client (mode 0600, with the issuer and redirect
// URL it was registered for): the next login, and the refresh of its
// tokens, use it without registering again. It registers again when the
// authorization server refuses the client (invalid_client, after which it
// asks the browser again), when the issuer it was registered with is no
// longer the server's, or when the redirect URL changes; a logout forgets
// it with the tokens.
func TestMCPLoginKeepsRegisteredClient(t *testing.T) {
	a := oauthtest.New(nil)
	defer a.Close()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "wield.db"))
	cfg := filepath.Join(t.TempDir(), "wield.yaml")
	write := func(oauth string) {
		if err := os.WriteFile(cfg, []byte("mcp_servers:\n  - {name: notes, url: \""+a.MCPURL()+"\", timeout: 5s, oauth: "+oauth+"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{grant: authorization_code, offline_access: true}`)
	login := func(wantRegistrations int, wantClient string) (string, keptClient) {
		t.Helper()
		code, out, errs := loginAsBrowser(t, cfg, "notes")
		if code != 0 || !strings.Contains(out, "Logged in to mcp server notes") {
			t.Fatalf("login: exit %d\n%s\n%s", code, out, errs)
		}
		if n := a.Registrations(); n != wantRegistrations {
			t.Errorf("after the login, %d registrations, want %d\n%s", n, wantRegistrations, out)
		}
		clients, err := readClients()
		if err != nil {
			t.Fatal(err)
		}
		c := clients["notes"]
		if c.ClientID != wantClient || c.Issuer != a.AS.URL || c.Resource != a.MCPURL() || !strings.HasPrefix(c.RedirectURI, "http://127.0.0.1:") {
			t.Errorf("kept client %+v, want %s of issuer %s", c, wantClient, a.AS.URL)
		}
		store, err := mcpbridge.OpenFileTokens(tokensFile())
		if err != nil {
			t.Fatal(err)
		}
		if tok, _ := store.Token("notes"); tok == nil || tok.ClientID != wantClient {
			t.Errorf("the tokens were obtained as %+v, want client %s", tok, wantClient)
		}
		return out, c
	}
	login(1, "registered")
	if st, err := os.Stat(clientsFile()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("clients file: %v %v", st, err)
	}
	login(1, "registered")

	// The tokens expire: the refresh is the kept client's.
	store, err := mcpbridge.OpenFileTokens(tokensFile())
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := store.Token("notes")
	tok.Token.Expiry = time.Now().Add(-time.Minute)
	if err := store.SetToken("notes", tok); err != nil {
		t.Fatal(err)
	}
	before := len(a.Grants())
	if code, out, errs := runIn(t, "", "--config", cfg, "call", "notes__whoami"); code != 0 || !strings.Contains(out, "authorized") ||
		!slices.Contains(a.Grants()[before:], "refresh_token") {
		t.Errorf("call with an expired token: exit %d, grants %q\n%s\n%s", code, a.Grants()[before:], out, errs)
	}

	// The authorization server forgets the client: the code's exchange is
	// refused, and the login registers again and asks the browser again.
	a.ForgetClients()
	out, _ := login(2, "registered-2")
	if !strings.Contains(out, "no longer knows the client wield registered (invalid_client): wield registers itself again") ||
		strings.Count(out, "/authorize?") != 2 {
		t.Errorf("login with a forgotten client:\n%s", out)
	}

	// The kept client was registered with another issuer: registered again
	// before any browser step.
	if err := changeClients(func(m map[string]keptClient) bool {
		c := m["notes"]
		c.Issuer = "https://old-issuer.example"
		m["notes"] = c
		return true
	}); err != nil {
		t.Fatal(err)
	}
	out, _ = login(3, "registered-3")
	if !strings.Contains(out, "is now "+a.AS.URL+", not the one wield registered with") || strings.Count(out, "/authorize?") != 1 {
		t.Errorf("login with another issuer:\n%s", out)
	}

	// Another redirect port: another redirect URL, registered again.
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	write(`{grant: authorization_code, offline_access: true, redirect_port: ` + strconv.Itoa(port) + `}`)
	if _, c := login(4, "registered-4"); c.RedirectURI != loopbackRedirect(port) {
		t.Errorf("kept redirect %s, want %s", c.RedirectURI, loopbackRedirect(port))
	}
	login(4, "registered-4")

	// A logout forgets the client with the tokens: the next login registers.
	code, out, errs := runIn(t, "", "mcp", "logout", "notes")
	if code != 0 || !strings.Contains(out, "The client wield registered for mcp server notes is removed") {
		t.Errorf("logout: exit %d\n%s\n%s", code, out, errs)
	}
	if clients, err := readClients(); err != nil || len(clients) != 0 {
		t.Errorf("clients after the logout: %v %v", clients, err)
	}
	login(5, "registered-5")
}
