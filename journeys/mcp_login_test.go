//go:build unix

package journeys

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wieldhq/wield/internal/oauthtest"
)

// TestJourneyMCPLogin: a server of grant authorization_code is refused by
// `wield call` with a message naming `wield mcp login NAME`; the login
// prints the authorization URL, which the journey fetches as a browser
// would from an authorization server that approves by itself and
// redirects to wield's loopback listener; the tokens are kept in the state
// folder (mode 0600), and `wield call` and `wield serve` use them, a
// refresh token renewing an expired one. Ctrl-C ends a login waiting for
// the browser at once; a second login asks the browser again; `wield mcp
// logout` forgets the tokens (the server out of reach until a login
// again), and says so when there were none.
func TestJourneyMCPLogin(t *testing.T) {
	a := oauthtest.New(nil)
	defer a.Close()
	u := newUser(t)
	u.write("wield.yaml", `mcp_servers:
  - {name: notes, url: "`+a.MCPURL()+`", oauth: {grant: authorization_code, offline_access: true}}
`)
	r := u.wield("--config", "wield.yaml", "call", "notes__whoami")
	if r.code == 0 || !strings.Contains(r.stderr, "mcp server notes: no authorization yet") || !strings.Contains(r.stderr, "wield mcp login notes --config wield.yaml") {
		t.Fatalf("call before the login:\n%s", r)
	}

	// Ctrl-C while the login waits for the browser.
	login := u.launch([]string{"--config", "wield.yaml", "mcp", "login", "notes"}, func(s *server) bool { return authURL(s) != "" })
	code, took := login.stop(syscall.SIGINT, 5*time.Second)
	if code == 0 || took > 3*time.Second || !strings.Contains(login.stderr.String(), "interrupted") {
		t.Errorf("Ctrl-C: exit %d after %v\n%s", code, took, login.stderr)
	}

	login = u.launch([]string{"--config", "wield.yaml", "mcp", "login", "notes"}, func(s *server) bool { return authURL(s) != "" })
	c := &http.Client{Timeout: 10 * time.Second} // the browser: it follows the redirect back to wield
	resp, err := c.Get(authURL(login))
	if err != nil {
		t.Fatalf("browse: %v\n%s", err, login.stdout)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Authorized") {
		t.Errorf("the page after the redirect: %d %s", resp.StatusCode, page)
	}
	select {
	case <-login.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the login did not end after the redirect:\n%s\n%s", login.stdout, login.stderr)
	}
	if login.code != 0 || !strings.Contains(login.stdout.String(), "Logged in to mcp server notes (with a refresh token)") {
		t.Fatalf("login: exit %d\n%s\n%s", login.code, login.stdout, login.stderr)
	}
	tokens := u.path(".state/wield/mcp-tokens.json")
	if st, err := os.Stat(tokens); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file: %v %v", st, err)
	}

	r = u.must("--config", "wield.yaml", "call", "notes__whoami")
	if !strings.Contains(r.stdout, `"output": "authorized"`) {
		t.Errorf("call after the login:\n%s", r)
	}
	s := u.serve("--config", "wield.yaml")
	if !s.listed("notes__whoami", 20*time.Second) {
		t.Fatalf("serve did not import notes:\n%s", s.stderr)
	}
	if code, body := s.do("POST", "/v1/tools/notes__whoami/call", `{"arguments":{}}`); code != http.StatusOK || !strings.Contains(string(body), `"authorized"`) {
		t.Errorf("serve's call: %d %s", code, body)
	}
	s.stop(syscall.SIGTERM, 20*time.Second)

	// The access token expires: the next call refreshes it, without a login.
	b, err := os.ReadFile(tokens)
	if err != nil {
		t.Fatal(err)
	}
	var kept map[string]map[string]any
	if err := json.Unmarshal(b, &kept); err != nil {
		t.Fatal(err)
	}
	kept["notes"]["token"].(map[string]any)["expiry"] = time.Now().Add(-time.Minute).Format(time.RFC3339)
	b, _ = json.Marshal(kept)
	if err := os.WriteFile(tokens, b, 0o600); err != nil {
		t.Fatal(err)
	}
	before := len(a.Grants())
	r = u.must("--config", "wield.yaml", "call", "notes__whoami")
	if !strings.Contains(r.stdout, `"output": "authorized"`) || !slices.Contains(a.Grants()[before:], "refresh_token") {
		t.Errorf("call with an expired token: grants %q\n%s", a.Grants()[before:], r)
	}

	// A login again asks the person again (another account, say), though
	// the kept token is good; stopped, it leaves that token kept.
	login = u.launch([]string{"--config", "wield.yaml", "mcp", "login", "notes"}, func(s *server) bool { return authURL(s) != "" })
	login.stop(syscall.SIGINT, 5*time.Second)
	u.must("--config", "wield.yaml", "call", "notes__whoami")

	// A logout forgets the tokens: the server is out of reach until a
	// login again; a second logout says there was nothing kept.
	if r := u.must("mcp", "logout", "notes"); !strings.Contains(r.stdout, "Logged out of mcp server notes") {
		t.Errorf("logout:\n%s", r)
	}
	if r := u.wield("--config", "wield.yaml", "call", "notes__whoami"); r.code == 0 || !strings.Contains(r.stderr, "wield mcp login notes") {
		t.Errorf("call after the logout:\n%s", r)
	}
	if r := u.must("mcp", "logout", "notes"); !strings.Contains(r.stdout, "No tokens of mcp server notes were kept") {
		t.Errorf("a second logout:\n%s", r)
	}
}

// authURL is the authorization URL a running `wield mcp login` printed,
// or "".
func authURL(s *server) string {
	for line := range strings.Lines(s.stdout.String()) {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "http") && strings.Contains(l, "/authorize?") {
			return l
		}
	}
	return ""
}
