package mcpbridge_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

func TestResourceURI(t *testing.T) {
	got := []string{mcpbridge.ResourceURI("01abc", false), mcpbridge.ResourceURI("01abc", true)}
	if diff := cmp.Diff([]string{"wield://calls/01abc", "wield://calls/01abc/output"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestResourceCalls(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	long := wield.Func("long", "A long output", func(_ context.Context, _ srvNoArgs) (string, error) {
		return strings.Repeat("abcdefghij", 10), nil
	})
	long.MaxOutput = 20
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, long)
	cs := srvConnect(t, f, srvStateful, "/mcp", nil)

	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range templates.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
	}
	if diff := cmp.Diff([]string{mcpbridge.CallResource, mcpbridge.CallOutputResource}, uris); diff != "" {
		t.Errorf("resource templates (-want +got):\n%s", diff)
	}

	echoed := srvCall(t, cs, "echo", map[string]any{"message": "hi"})
	echoID, _ := echoed.Meta[mcpbridge.MetaCallID].(string)
	read := func(cs *mcp.ClientSession, uri string) (*mcp.ResourceContents, error) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return nil, err
		}
		if len(res.Contents) != 1 {
			t.Fatalf("read %s: %d contents, want 1", uri, len(res.Contents))
		}
		return res.Contents[0], nil
	}
	c, err := read(cs, mcpbridge.ResourceURI(echoID, false))
	if err != nil {
		t.Fatal(err)
	}
	var rec wield.Record
	if err := json.Unmarshal([]byte(c.Text), &rec); err != nil {
		t.Fatalf("record %s: %v", c.Text, err)
	}
	type view struct {
		MIME, Tool, Caller, Args, Output string
		OK                               bool
	}
	if diff := cmp.Diff(view{"application/json", "echo", "mcp:tester", `{"message":"hi"}`, `{"echo":"hi"}`, true},
		view{c.MIMEType, rec.Call.Tool, rec.Call.Caller.ID, string(rec.Arguments), string(rec.Result.Output), rec.Result.OK}); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	if rec.Call.Caller.ConversationID != cs.ID() || cs.ID() == "" {
		t.Errorf("record's conversation %q, want the session %q", rec.Call.Caller.ConversationID, cs.ID())
	}

	// A cut output links to its whole self.
	cut := srvCall(t, cs, "long", map[string]any{})
	cutID, _ := cut.Meta[mcpbridge.MetaCallID].(string)
	var links []string
	for _, ct := range cut.Content {
		if l, ok := ct.(*mcp.ResourceLink); ok {
			links = append(links, l.URI)
		}
	}
	if diff := cmp.Diff([]string{mcpbridge.ResourceURI(cutID, true)}, links); diff != "" {
		t.Errorf("links of a cut output (-want +got):\n%s", diff)
	}
	c, err = read(cs, mcpbridge.ResourceURI(cutID, true))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([2]string{"text/plain", strings.Repeat("abcdefghij", 10)}, [2]string{c.MIMEType, c.Text}); diff != "" {
		t.Errorf("whole output (-want +got):\n%s", diff)
	}
	c, err = read(cs, mcpbridge.ResourceURI(echoID, true))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([2]string{"application/json", `{"echo":"hi"}`}, [2]string{c.MIMEType, c.Text}); diff != "" {
		t.Errorf("JSON output (-want +got):\n%s", diff)
	}

	// Unknown calls, and calls of tools outside a toolset's endpoint, are
	// not found.
	loud := srvConnect(t, f, srvStateful, "/mcp/loud", nil)
	for _, tc := range []struct {
		cs  *mcp.ClientSession
		uri string
	}{
		{cs, mcpbridge.ResourceURI("01nosuchcall0000000000000", false)},
		{cs, "wield://calls/"},
		{loud, mcpbridge.ResourceURI(echoID, false)},
	} {
		if _, err := read(tc.cs, tc.uri); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("read %s: err = %v, want not found", tc.uri, err)
		}
	}
}
