package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wieldhq/wield/internal/oauthtest"
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
