package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentOfMCPServerDown: a configured MCP server that does not answer
// is a warning (configuration.md's first run), so an agent naming one of
// its tools does not stop `wield call` and `wield list`: the agent is left
// out, said on stderr, and the other agents and the tools are there. With
// no MCP server configured, an agent naming a tool nobody has stays an
// error.
func TestAgentOfMCPServerDown(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens there now
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tools/analyst.agent.yaml", "kind: agent\nname: analyst\ntools: [calculator, inner__current_time]\n")
	write("tools/helper.agent.yaml", "kind: agent\nname: helper\ntools: [echo]\n")
	config := filepath.Join(dir, "wield.yaml")
	write("wield.yaml", fmt.Sprintf("tool_dirs: [tools]\nmcp_servers:\n  - name: inner\n    url: \"http://%s/mcp\"\n", closed))

	code, out, errs := run(t, "call", "echo", "--config", config, "message=hi")
	if code != 0 || !strings.Contains(out, `"ok": true`) {
		t.Fatalf("call echo beside an agent of a server that does not answer: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, `"analyst"`) || !strings.Contains(errs, "does not answer") {
		t.Errorf("stderr does not say the agent is left out for the server:\n%s", errs)
	}
	if code, out, errs := run(t, "list", "--config", config, "--agent", "helper"); code != 0 || !strings.Contains(out, "echo") {
		t.Errorf("list --agent helper: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := run(t, "list", "--config", config, "--agent", "analyst"); code != 2 || strings.Contains(errs, "the agents are analyst") {
		t.Errorf("list --agent analyst, left out: exit %d, want 2 not offering it\n%s", code, errs)
	}

	write("plain.yaml", "tool_dirs: [tools]\n")
	if code, _, errs := run(t, "call", "echo", "--config", filepath.Join(dir, "plain.yaml"), "message=hi"); code != 1 || !strings.Contains(errs, "inner__current_time") {
		t.Errorf("an agent naming a tool nobody has, no MCP server configured: exit %d, want 1 naming the tool\n%s", code, errs)
	}
}
