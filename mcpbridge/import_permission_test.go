package mcpbridge_test

import (
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestImportServerPermission: a server's own Permission is given to each of
// its tools, over the importer's and over what the annotations imply (a
// read-only tool of a server configured confirm needs confirmation; a
// server configured auto runs its tools unasked), and a server without one
// keeps the importer's rule. A tool's _meta asking for a stricter one
// still wins (see ImportPermission).
func TestImportServerPermission(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("read", "Reads."))
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	for _, cfg := range []mcpbridge.ServerConfig{
		{Name: "guarded", URL: g.url(), Enabled: true, Permission: wield.PermissionConfirm},
		{Name: "plain", URL: g.url(), Enabled: true},
	} {
		if err := im.Add(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]wield.Permission{"guarded__read": wield.PermissionConfirm, "plain__read": wield.PermissionAuto} {
		tool, ok := reg.Tool(name)
		if !ok {
			t.Fatalf("%s was not imported", name)
		}
		if got := tool.EffectivePermission(); got != want {
			t.Errorf("%s: permission %s, want %s", name, got, want)
		}
	}
}
