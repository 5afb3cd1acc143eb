package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrintsTextAsIs checks that what wield prints for a person keeps <, >
// and & as they are, byte for byte: a call's result, the record of it, and
// the tools listed.
func TestPrintsTextAsIs(t *testing.T) {
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	const code = "a<b && c>d"
	for _, args := range [][]string{
		{"call", "echo", "message=" + code, "--conversation", "esc"},
		{"calls", "--conversation", "esc", "--json"},
	} {
		status, out, errs := run(t, args...)
		if status != 0 || !strings.Contains(out, code) || strings.Contains(out, `\u00`) {
			t.Errorf("%v: exit %d, stdout %s, stderr %s; want %q as it is", args, status, out, errs, code)
		}
	}
	dir := t.TempDir()
	say := `{"name": "compare", "description": "Say whether a<b && c>d", "category": "custom",
  "parameters": [{"name": "message", "type": "string", "description": "the <left> side & more"}],
  "entry": {"type": "builtin", "handler": "echo"}}`
	if err := os.WriteFile(filepath.Join(dir, "compare.json"), []byte(say), 0o600); err != nil {
		t.Fatal(err)
	}
	status, out, errs := run(t, "list", "--json", "--tools", dir)
	if status != 0 || !strings.Contains(out, "Say whether "+code) || !strings.Contains(out, "the <left> side & more") || strings.Contains(out, `\u00`) {
		t.Errorf("list --json: exit %d, stderr %s; want the text as it is in\n%s", status, errs, out)
	}
}

// TestErrorEscaped: the error a command ends with is written to the
// terminal with its control characters escaped: a server's error answer
// (here one that sets the terminal's title and clears the screen) was
// printed raw after "wield:".
func TestErrorEscaped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "upstream \x1b]0;pwned\x07\x1b[2J down\nsecond line")
	}))
	defer srv.Close()
	code, _, stderr := run(t, "call", "--server", srv.URL, "echo", "message=hi")
	if code == 0 {
		t.Fatalf("exit 0 against a 502, stderr:\n%s", stderr)
	}
	if strings.ContainsAny(stderr, "\x1b\x07") {
		t.Fatalf("stderr holds raw control characters: %q", stderr)
	}
	if !strings.Contains(stderr, `\x1b]0;pwned`) || !strings.Contains(stderr, "second line") {
		t.Fatalf("stderr does not show the escaped answer: %q", stderr)
	}
}

// TestWarningsEscaped: a warning (what an MCP server, Redis or a file said)
// is written with its control characters escaped and its lines kept; the
// warnings of mcp_servers, the event relay, search and the approval record
// were printed raw.
func TestWarningsEscaped(t *testing.T) {
	var b strings.Builder
	a := &app{stderr: &b}
	a.warnf("warning: %v\n(left out)", errors.New("server said \x1b]8;;http://evil\x07click\x1b]8;;\x07"))
	if got, want := b.String(), "warning: server said \\x1b]8;;http://evil\\x07click\\x1b]8;;\\x07\n(left out)\n"; got != want {
		t.Fatalf("warnf wrote %q, want %q", got, want)
	}
}
