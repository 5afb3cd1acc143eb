//go:build unix

package journeys

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wieldhq/wield/internal/oauthtest"
)

// loginAsBrowser runs `wield mcp login name` and follows, as a browser
// would, each authorization URL it prints (the authorization server
// approves by itself and redirects to the login's loopback listener); it
// returns the login once it ended.
func loginAsBrowser(t *testing.T, u *user, name string) *server {
	t.Helper()
	login := u.launch([]string{"--config", "wield.yaml", "mcp", "login", name, "--wait", "30s"}, func(s *server) bool { return authURL(s) != "" })
	c := &http.Client{Timeout: 10 * time.Second}
	followed := 0
	for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); {
		var urls []string
		for line := range strings.Lines(login.stdout.String()) {
			if l := strings.TrimSpace(line); strings.HasPrefix(l, "http") && strings.Contains(l, "/authorize?") {
				urls = append(urls, l)
			}
		}
		for ; followed < len(urls); followed++ {
			resp, err := c.Get(urls[followed])
			if err != nil {
				t.Fatalf("browse: %v\n%s", err, login.stdout)
			}
			resp.Body.Close()
		}
		select {
		case <-login.done:
			return login
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the login did not end:\n%s\n%s", login.stdout, login.stderr)
	return nil
}

// TestJourneyOAuthLoginKeepsClient: `wield mcp login` of a server without
// a client_id registers wield with the authorization server once and keeps
// that client (mode 0600, with the issuer and redirect URL it was
// registered for) beside the tokens: a second login, and the refresh of
// the tokens, use it, with no new registration. When the authorization
// server no longer knows it (invalid_client), the login says so, registers
// again and asks the browser again. `wield mcp logout` forgets it with the
// tokens, and the next login registers anew.
func TestJourneyOAuthLoginKeepsClient(t *testing.T) {
	a := oauthtest.New(nil)
	defer a.Close()
	u := newUser(t)
	u.write("wield.yaml", `mcp_servers:
  - {name: notes, url: "`+a.MCPURL()+`", oauth: {grant: authorization_code, offline_access: true}}
`)
	login := func(want int) *server {
		t.Helper()
		l := loginAsBrowser(t, u, "notes")
		if l.code != 0 || !strings.Contains(l.stdout.String(), "Logged in to mcp server notes") {
			t.Fatalf("login: exit %d\n%s\n%s", l.code, l.stdout, l.stderr)
		}
		if n := a.Registrations(); n != want {
			t.Errorf("%d registrations after the login, want %d\n%s", n, want, l.stdout)
		}
		return l
	}
	login(1)
	clients := u.path(".state/wield/mcp-clients.json")
	st, err := os.Stat(clients)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("clients file: %v %v", st, err)
	}
	b, _ := os.ReadFile(clients)
	var kept map[string]struct {
		ClientID    string `json:"client_id"`
		Issuer      string `json:"issuer"`
		RedirectURI string `json:"redirect_uri"`
		Resource    string `json:"resource"`
	}
	if err := json.Unmarshal(b, &kept); err != nil {
		t.Fatalf("clients file: %v\n%s", err, b)
	}
	if c := kept["notes"]; c.ClientID != "registered" || c.Issuer != a.AS.URL || c.Resource != a.MCPURL() || !strings.HasPrefix(c.RedirectURI, "http://127.0.0.1:") {
		t.Errorf("kept client %+v", c)
	}
	login(1)
	if r := u.must("--config", "wield.yaml", "call", "notes__whoami"); !strings.Contains(r.stdout, `"output": "authorized"`) {
		t.Errorf("call after the second login:\n%s", r)
	}

	// The authorization server forgets the client.
	a.ForgetClients()
	l := login(2)
	if out := l.stdout.String(); !strings.Contains(out, "no longer knows the client wield registered (invalid_client): wield registers itself again") ||
		strings.Count(out, "/authorize?") != 2 {
		t.Errorf("login with a forgotten client:\n%s", out)
	}
	if r := u.must("--config", "wield.yaml", "call", "notes__whoami"); !strings.Contains(r.stdout, `"output": "authorized"`) {
		t.Errorf("call after registering again:\n%s", r)
	}

	r := u.must("mcp", "logout", "notes")
	if !strings.Contains(r.stdout, "The client wield registered for mcp server notes is removed") || !strings.Contains(r.stdout, "Logged out of mcp server notes") {
		t.Errorf("logout:\n%s", r)
	}
	if b, _ := os.ReadFile(clients); strings.Contains(string(b), "notes") {
		t.Errorf("the client is still kept after the logout:\n%s", b)
	}
	login(3)
}

// TestJourneyOAuthLoginPickedUpByServe: a `wield serve` started before
// any login warns that the server needs one; `wield mcp login` from
// another process is picked up without a restart (serve's log says so) and
// the imported tool answers; when the tokens are revoked, a login again is
// picked up the same way.
func TestJourneyOAuthLoginPickedUpByServe(t *testing.T) {
	a := oauthtest.New(nil)
	defer a.Close()
	u := newUser(t)
	u.write("wield.yaml", `mcp_servers:
  - {name: notes, url: "`+a.MCPURL()+`", oauth: {grant: authorization_code, offline_access: true}}
`)
	s := u.serve("--config", "wield.yaml")
	defer s.stop(syscall.SIGTERM, 20*time.Second)
	if !eventually(20*time.Second, func() bool {
		return strings.Contains(s.stderr.String(), "mcp server notes: no authorization yet") &&
			strings.Contains(s.stderr.String(), "this process imports it again once the login is kept")
	}) {
		t.Fatalf("serve does not say the server waits for a login:\n%s", s.stderr)
	}
	called := func() bool {
		code, body := s.do("POST", "/v1/tools/notes__whoami/call", `{"arguments":{}}`)
		return code == http.StatusOK && strings.Contains(string(body), `"authorized"`)
	}
	if called() {
		t.Fatal("called before any login")
	}
	for round := 1; round <= 2; round++ {
		if l := loginAsBrowser(t, u, "notes"); l.code != 0 {
			t.Fatalf("login: exit %d\n%s\n%s", l.code, l.stdout, l.stderr)
		}
		if !eventually(20*time.Second, called) {
			t.Fatalf("round %d: serve did not pick the login up:\n%s", round, s.stderr)
		}
		if n := strings.Count(s.stderr.String(), "mcp server notes: a login was kept in "); n != round {
			t.Errorf("round %d: serve's log tells %d logins:\n%s", round, n, s.stderr)
		}
		// The tokens are revoked, the refresh token too: refused until a
		// login again.
		a.Revoke()
		if called() {
			t.Fatalf("round %d: called with revoked tokens", round)
		}
	}
}
