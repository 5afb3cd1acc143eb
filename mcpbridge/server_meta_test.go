package mcpbridge_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// srvLaunch is a confirm tool whose annotations say nothing destructive:
// only its permission asks for a person.
func srvLaunch() *wield.Tool {
	t := wield.Func("launch", "Launch the rocket", func(_ context.Context, in srvEchoIn) (string, error) { return in.Message, nil })
	t.Permission = wield.PermissionConfirm
	t.Tags = []string{"ops", "rocket"}
	return t
}

// TestServerExportsMeaning: an exported tool says its permission and tags
// in _meta, and a confirm tool is destructive to clients that read only
// MCP's hints (it was exported with destructiveHint false).
func TestServerExportsMeaning(t *testing.T) {
	f := srvNew(t, nil, nil, srvLaunch())
	cs := srvConnect(t, f, srvStateful, "/mcp", nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Destructive bool
		Meta        mcp.Meta
	}
	got := map[string]view{}
	for _, tl := range res.Tools {
		got[tl.Name] = view{*tl.Annotations.DestructiveHint, tl.Meta}
	}
	want := map[string]view{
		"echo":   {false, mcp.Meta{"wield/permission": "auto"}},
		"fail":   {false, mcp.Meta{"wield/permission": "auto"}},
		"shout":  {false, mcp.Meta{"wield/permission": "auto"}},
		"wipe":   {true, mcp.Meta{"wield/permission": "confirm"}},
		"launch": {true, mcp.Meta{"wield/permission": "confirm", "wield/tags": []any{"ops", "rocket"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exported tools (-want +got):\n%s", diff)
	}
}

// TestImportWieldKeepsMeaning: a wield importing another wield's tools
// gets its confirm tool as confirm (it was auto) and its tags.
func TestImportWieldKeepsMeaning(t *testing.T) {
	f := srvNew(t, nil, nil, srvLaunch())
	ts := httptest.NewServer(f.srv.Handler())
	t.Cleanup(ts.Close)
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "w", URL: ts.URL + "/mcp", Enabled: true, Tags: []string{"remote"}}); err != nil {
		t.Fatal(err)
	}
	type view struct {
		Permission wield.Permission
		Tags       []string
	}
	got := map[string]view{}
	for _, name := range []string{"w__launch", "w__echo", "w__wipe"} {
		tl, ok := reg.Tool(name)
		if !ok {
			t.Fatalf("%s is not imported", name)
		}
		got[name] = view{tl.EffectivePermission(), tl.Tags}
	}
	want := map[string]view{
		"w__launch": {wield.PermissionConfirm, []string{"ops", "rocket", "remote"}},
		"w__echo":   {wield.PermissionAuto, []string{"remote"}},
		"w__wipe":   {wield.PermissionConfirm, []string{"remote"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("imported tools (-want +got):\n%s", diff)
	}
}

// TestImportPermission: the stricter of the local permission and the
// server's _meta wins; a server cannot make its tool less guarded.
func TestImportPermission(t *testing.T) {
	destructive := wield.Annotations{Destructive: true, OpenWorld: true}
	readOnly := wield.Annotations{ReadOnly: true}
	meta := func(p any) mcp.Meta { return mcp.Meta{mcpbridge.MetaPermission: p} }
	for _, tc := range []struct {
		name  string
		local wield.Permission
		ann   wield.Annotations
		meta  mcp.Meta
		want  wield.Permission // effective
	}{
		{"confirm hint on a read-only tool", "", readOnly, meta("confirm"), wield.PermissionConfirm},
		{"confirm hint over a local auto", wield.PermissionAuto, readOnly, meta("confirm"), wield.PermissionConfirm},
		{"deny hint", "", readOnly, meta("deny"), wield.PermissionDeny},
		{"auto hint on a destructive tool", "", destructive, meta("auto"), wield.PermissionConfirm},
		{"auto hint under a local confirm", wield.PermissionConfirm, readOnly, meta("auto"), wield.PermissionConfirm},
		{"confirm hint under a local deny", wield.PermissionDeny, readOnly, meta("confirm"), wield.PermissionDeny},
		{"unknown hint", "", readOnly, meta("never"), wield.PermissionAuto},
		{"hint not a string", "", readOnly, meta([]any{"deny"}), wield.PermissionAuto},
		{"letter case", "", readOnly, meta("CONFIRM"), wield.PermissionAuto},
		{"no meta", "", readOnly, nil, wield.PermissionAuto},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mcpbridge.ImportPermission(tc.local, tc.ann, tc.meta)
			if got := (&wield.Tool{Permission: p, Annotations: tc.ann}).EffectivePermission(); got != tc.want {
				t.Errorf("effective permission %q, want %q", got, tc.want)
			}
		})
	}
}
