package mcpbridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// coreListed is the task support of each tool of a 2025-11-25 tools/list
// ("" for none).
func coreListed(t testing.TB, c *coreSession) map[string]string {
	res, e := c.rpc("tools/list", map[string]any{})
	if e != nil {
		t.Fatalf("tools/list: %+v", e)
	}
	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tl := range list.Tools {
		out[tl.Name] = ""
		if tl.Execution != nil {
			out[tl.Name] = tl.Execution.TaskSupport
		}
	}
	return out
}

// TestServerCoreListKept: a 2025-11-25 session's tools/list with task
// tools is made once per change of the tools and given again as made,
// and a change (a task tool added, one removed) shows in the next list.
func TestServerCoreListKept(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(context.Background())
	add := func(context.Context, srvNoArgs) (string, error) { return "ok", nil }
	slow := wield.Func("slow", "A task.", add)
	slow.Task = wield.TaskOptional
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow)
	c := &coreSession{t: t, h: f.srv.Handler()}
	if _, e := c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tasks": map[string]any{}},
		"clientInfo": map[string]any{"name": "core", "version": "1"}}); e != nil {
		t.Fatalf("initialize: %+v", e)
	}
	c.rpc("notifications/initialized", map[string]any{})
	first := coreListed(t, c)
	if first["slow"] != "optional" || first["echo"] != "" {
		t.Fatalf("first list %v: want slow optional and echo without", first)
	}
	if diff := cmp.Diff(first, coreListed(t, c)); diff != "" {
		t.Errorf("the list again (-first +again):\n%s", diff)
	}
	must := wield.Func("must", "Always a task.", add)
	must.Task = wield.TaskRequired
	f.reg.MustRegister(must)
	f.reg.Remove("slow")
	got := coreListed(t, c)
	want := maps.Clone(first)
	delete(want, "slow")
	want["must"] = "required"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after adding must and removing slow (-want +got):\n%s", diff)
	}
}

// BenchmarkServerCoreList is a 2025-11-25 session's tools/list on a
// server with a task tool (execution.taskSupport added to the list).
func BenchmarkServerCoreList(b *testing.B) {
	store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "wield.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close(context.Background())
	slow := wield.Func("slow", "A task.", func(context.Context, srvNoArgs) (string, error) { return "ok", nil })
	slow.Task = wield.TaskOptional
	h := srvNew(b, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow).srv.Handler()
	w := srvPost(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":"bench","version":"1"}}}`,
		"Mcp-Protocol-Version", "2025-11-25")
	id := w.Header().Get("Mcp-Session-Id")
	srvPost(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Protocol-Version", "2025-11-25", "Mcp-Session-Id", id)
	b.ReportAllocs()
	for b.Loop() {
		w := srvPost(h, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, "Mcp-Protocol-Version", "2025-11-25", "Mcp-Session-Id", id)
		if w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte(`"taskSupport":"optional"`)) {
			b.Fatalf("tools/list: %d %s", w.Code, w.Body)
		}
	}
}
