package mcpbridge_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// impNewEra2026Server is a go-sdk server that speaks only MCP 2026-07-28,
// statelessly: no initialize handshake, only server/discover.
func impNewEra2026Server(t *testing.T, tools ...impRemote) *impGoServer {
	t.Helper()
	g := &impGoServer{t: t, opts: &mcp.StreamableHTTPOptions{Stateless: true},
		srv: mcp.NewServer(&mcp.Implementation{Name: "go-2026", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2026-07-28"}})}
	for _, r := range tools {
		g.srv.AddTool(r.tool, r.handle)
	}
	g.start("127.0.0.1:0")
	t.Cleanup(g.stop)
	return g
}

// TestImportEra2026 checks that wield imports the tools of a server that
// speaks only 2026-07-28 (discovery, no session), calls them, follows the
// changes of its list and reconnects after an outage.
func TestImportEra2026(t *testing.T) {
	g := impNewEra2026Server(t, impEchoArgs("first", "one"))
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "new", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	want := impOutcome{OK: true, Output: `"args:{\"k\":1}"`}
	if diff := cmp.Diff(want, impOutcomeOf(impCall(t, e, "new__first", `{"k":1}`))); diff != "" {
		t.Errorf("call (-want +got):\n%s", diff)
	}
	r := impEchoArgs("second", "two")
	g.srv.AddTool(r.tool, r.handle)
	impEventually(t, "the added tool is imported", func() bool { _, ok := reg.Tool("new__second"); return ok })
	if got := impOutcomeOf(impCall(t, e, "new__second", `{}`)); !got.OK {
		t.Errorf("call of the added tool: %+v", got)
	}
	// Without a session there is no connection whose end tells of an
	// outage: the importer's periodic listing (every MaxBackoff) does.
	addr := g.addr
	g.stop()
	impEventually(t, "the importer sees the outage", func() bool { return !im.Servers()[0].Connected })
	got := impOutcomeOf(impCall(t, e, "new__first", `{}`))
	want = impOutcome{ErrorType: wield.ErrExecution, Error: `MCP server "new" is not reachable right now; try again shortly`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("call during the outage (-want +got):\n%s", diff)
	}
	g.start(addr)
	impEventually(t, "the importer reconnects", func() bool { return im.Servers()[0].Connected })
	if got := impOutcomeOf(impCall(t, e, "new__first", `{}`)); !got.OK {
		t.Errorf("call after reconnection: %+v", got)
	}
}
