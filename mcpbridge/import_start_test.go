package mcpbridge_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/toolfile"
)

// TestImportStart: a server added by Start is known by name before it is
// connected, so a tool file's mcp entry naming it loads (serve imports in
// the background, and loading such a file used to race the import: "MCP
// server h is not configured"); the entry then works once connect has
// listed the tools.
func TestImportStart(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("raw_echo", "Version one."))
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Pins: &mcpbridge.MemPins{}})
	connect, err := im.Start(mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "say.yaml"), []byte("name: say\ndescription: Say it through the remote echo\nentry: {type: mcp, server: go, tool: raw_echo}\n"), 0o644)
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"mcp": im.Kind()}}
	set, err := l.LoadDirs(context.Background(), dir)
	if err != nil {
		t.Fatalf("a tool file naming a started, not yet connected server: %v", err)
	}
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	if got := impOutcomeOf(impCall(t, e, "say", `{}`)); got.OK {
		t.Errorf("call before connect: %+v, want a failure (not listed yet)", got)
	}
	if err := connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := impOutcomeOf(impCall(t, e, "say", `{}`)); !got.OK {
		t.Errorf("call after connect: %+v", got)
	}
	if err := connect(t.Context()); err == nil || !strings.Contains(err.Error(), "connected already") {
		t.Errorf("second connect = %v, want refused", err)
	}
}

// TestImportStartNeverConnected: Close does not wait for a server that was
// started and never connected.
func TestImportStartNeverConnected(t *testing.T) {
	im := mcpbridge.NewImporter(wield.NewRegistry(nil), nil)
	if _, err := im.Start(mcpbridge.ServerConfig{Name: "later", URL: "http://127.0.0.1:1/mcp", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { im.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for a server never connected")
	}
}
