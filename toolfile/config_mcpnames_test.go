package toolfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadConfigMCPServerNames: a server name that would make its tools'
// names ambiguous (server x__y's echo and server x's y__echo were both
// x__y__echo), or that differs only in letter case from another, is a
// problem at its file:line:col; max_pages and max_tools are read.
func TestLoadConfigMCPServerNames(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(`mcp_servers:
  - {name: x, command: [x]}
  - {name: x__y, command: [x]}
  - {name: y_, command: [y]}
  - {name: X, command: [x]}
  - {name: z, command: [z], max_pages: -1}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{
		bad + ":3:6: mcp server x__y: the name must not contain __ nor end with _ (its tools are named x__y__<tool>, which would be ambiguous)",
		bad + ":4:6: mcp server y_: the name must not contain __ nor end with _ (its tools are named y___<tool>, which would be ambiguous)",
		bad + `:5:5: mcp_servers: server name "X" differs only in letter case from "x" (at ` + bad + ":2:6)",
		bad + ":6:40: max_pages: must not be negative",
	}
	if diff := cmp.Diff(want, configProblems(t, bad)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}

	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("mcp_servers:\n  - {name: big, command: [big], max_pages: 5, max_tools: 300}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	want2 := []MCPServer{{Name: "big", Command: []string{"big"}, Transport: "stdio", Enabled: true, MaxPages: 5, MaxTools: 300}}
	if diff := cmp.Diff(want2, cfg.MCPServers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}
