package mcpbridge_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/toolfile"
)

func TestKindRunsAnImportedTool(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("raw_echo", "Version one."))
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Pins: &mcpbridge.MemPins{}})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "say.yaml"), []byte(`name: say
description: Say something through the remote echo
parameters:
  - {name: text, type: string, required: true, validation: {max_length: 10}}
entry: {type: mcp, server: go, tool: raw_echo}
`), 0o644)
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"mcp": im.Kind()}}
	set, err := l.LoadDirs(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	if got := impOutcomeOf(impCall(t, e, "say", `{"text":"hi"}`)); !got.OK || !strings.Contains(string(got.Output), `args:{\"text\":\"hi\"}`) {
		t.Errorf("call: %+v", got)
	}
	// The file's schema is this server's: it narrows the remote one.
	if got := impOutcomeOf(impCall(t, e, "say", `{"text":"far too long for it"}`)); got.OK || got.ErrorType != wield.ErrValidation {
		t.Errorf("narrowed schema: %+v", got)
	}
	// A change of the remote tool holds the file's tool too.
	r := impEchoArgs("raw_echo", "Version two.")
	g.srv.AddTool(r.tool, r.handle)
	impEventually(t, "the remote tool is held", func() bool { x, _ := reg.Tool("go__raw_echo"); return x != nil && !x.Callable() })
	if got := impOutcomeOf(impCall(t, e, "say", `{"text":"hi"}`)); got.OK || got.ErrorType != wield.ErrPermissionDenied || !strings.Contains(got.Error, "held") {
		t.Errorf("held: %+v", got)
	}

	for src, want := range map[string]string{
		"entry: {type: mcp, server: nowhere}":       `MCP server "nowhere" is not configured`,
		"entry: {type: mcp, tool: raw_echo}":        "missing server",
		"entry: {type: mcp, server: go, header: x}": `unknown field "header"`,
	} {
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		os.WriteFile(bad, []byte("name: bad\ndescription: d\n"+src+"\n"), 0o644)
		if _, err := l.LoadDirs(context.Background(), bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", src, err, want)
		}
	}
}

// An mcp entry calls only a tool the server lists, and so has pinned (issue
// 19: an entry for a tool the server never listed, or no longer lists, was
// called with no pin check).
func TestKindRefusesUnlistedTool(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("raw_echo", "Version one."))
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Pins: &mcpbridge.MemPins{}})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ghost.yaml"), []byte("name: ghost\ndescription: d\nentry: {type: mcp, server: go, tool: never_listed}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "say.yaml"), []byte("name: say\ndescription: d\nparameters: [{name: text, type: string}]\nentry: {type: mcp, server: go, tool: raw_echo}\n"), 0o644)
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"mcp": im.Kind()}}
	set, err := l.LoadDirs(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	if got := impOutcomeOf(impCall(t, e, "ghost", `{}`)); got.OK || got.ErrorType != wield.ErrToolNotFound || !strings.Contains(got.Error, `does not list a tool "never_listed"`) {
		t.Errorf("never listed: %+v", got)
	}
	if got := impOutcomeOf(impCall(t, e, "say", `{"text":"hi"}`)); !got.OK {
		t.Fatalf("listed: %+v", got)
	}
	g.srv.RemoveTools("raw_echo")
	impEventually(t, "the remote tool is gone", func() bool { x, _ := reg.Tool("go__raw_echo"); return x == nil })
	if got := impOutcomeOf(impCall(t, e, "say", `{"text":"hi"}`)); got.OK || got.ErrorType != wield.ErrToolNotFound {
		t.Errorf("no longer listed: %+v", got)
	}
}
