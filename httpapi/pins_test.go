package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// pinsServer serves the tools of a real MCP server (tools "tool" and
// "other", imported as up__tool and up__other; toolset mine holds
// up__other) through an importer, and returns the MCP server to change.
func pinsServer(t *testing.T, keys *Keyring) (*httptest.Server, *mcp.Server, *wield.Registry) {
	t.Helper()
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	handle := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	}
	obj := &jsonschema.Schema{Type: "object"}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	up.AddTool(&mcp.Tool{Name: "tool", Description: "Version one.", InputSchema: obj, Annotations: ro}, handle)
	up.AddTool(&mcp.Tool{Name: "other", Description: "Other one.", InputSchema: obj, Annotations: ro}, handle)
	upHS := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upHS.Close)

	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { im.Close() })
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "up", URL: upHS.URL, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := reg.DefineToolset(wield.Toolset{Name: "mine", Tools: []string{"up__other"}}); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(reg, &engine.Options{Store: store})
	t.Cleanup(func() { eng.Close(context.Background()) })
	s, err := New(Options{Engine: eng, Store: store, Keys: keys, Imports: im, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs, up, reg
}

// pinsDrift changes the remote tool and waits until wield holds it.
func pinsDrift(t *testing.T, up *mcp.Server, reg *wield.Registry, name, desc string) {
	t.Helper()
	up.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: &jsonschema.Schema{Type: "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if x, ok := reg.Tool("up__" + name); ok && x.Status == wield.StatusHeld {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("up__%s never held", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPinsEndpoints(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	reader, _ := mustKey(t, file, nil, RightRead)
	caller, _ := mustKey(t, file, nil, RightCall)
	operator, _ := mustKey(t, file, nil, RightPins)
	scoped, _ := mustKey(t, file, []string{"mine"}, RightPins)
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	hs, up, reg := pinsServer(t, ring)

	status, b := do(t, hs, "GET", "/v1/imports", reader, "")
	var imports ImportList
	if status != 200 || json.Unmarshal(b, &imports) != nil || len(imports.Servers) != 1 ||
		imports.Servers[0].State != "connected" || imports.Servers[0].Tools != 2 || imports.Servers[0].HeldCount != 0 || imports.Servers[0].Transport != "http" {
		t.Fatalf("GET /v1/imports: %d %s", status, b)
	}
	if status, b := do(t, hs, "GET", "/v1/pins", reader, ""); status != 200 || strings.TrimSpace(string(b)) != `{"held":[],"can_accept":false}` {
		t.Errorf("GET /v1/pins with nothing held: %d %s", status, b)
	}

	pinsDrift(t, up, reg, "tool", "Version two.")
	status, b = do(t, hs, "GET", "/v1/pins", operator, "")
	var pins PinList
	if status != 200 || json.Unmarshal(b, &pins) != nil || len(pins.Held) != 1 || !pins.CanAccept {
		t.Fatalf("GET /v1/pins: %d %s", status, b)
	}
	h := pins.Held[0]
	if h.Name != "up__tool" || h.Server != "up" || h.Tool != "tool" || strings.Join(h.Changed, ",") != "description" ||
		!strings.Contains(h.Diff, "-Version one.\n+Version two.\n") || !strings.Contains(string(h.Pinned), "Version one.") || !strings.Contains(string(h.Current), "Version two.") {
		t.Errorf("held tool: %+v", h)
	}
	if status, b := do(t, hs, "GET", "/v1/pins", reader, ""); status != 200 || !strings.Contains(string(b), `"can_accept":false`) {
		t.Errorf("GET /v1/pins with a read key: %d %s", status, b)
	}
	if status, b := do(t, hs, "GET", "/v1/imports", reader, ""); status != 200 || !strings.Contains(string(b), `"held":["up__tool"],`) || !strings.Contains(string(b), `"held_count":1`) {
		t.Errorf("GET /v1/imports with a held tool: %d %s", status, b)
	}
	// A scoped key sees its own tools only: up__other, not held.
	if status, b := do(t, hs, "GET", "/v1/pins", scoped, ""); status != 200 || !strings.Contains(string(b), `"held":[]`) {
		t.Errorf("GET /v1/pins with a scoped key: %d %s", status, b)
	}
	if status, b := do(t, hs, "GET", "/v1/imports", scoped, ""); status != 200 || !strings.Contains(string(b), `"tools":1,`) || !strings.Contains(string(b), `"held_count":0`) {
		t.Errorf("GET /v1/imports with a scoped key: %d %s", status, b)
	}

	for _, tt := range []struct {
		name, key, path, body string
		status                int
		want                  string
	}{
		{"no right (read)", reader, "/v1/pins/up__tool/accept", "", 403, `lacks the \"pins\" right`},
		{"no right (call)", caller, "/v1/pins/up__tool/accept", "", 403, `lacks the \"pins\" right`},
		{"out of scope", scoped, "/v1/pins/up__tool/accept", "", 403, "does not reach tool 'up__tool'"},
		{"unknown name", operator, "/v1/pins/nope/accept", "", 404, "no MCP server imported a tool of that name"},
		{"not held", operator, "/v1/pins/up__other/accept", "", 404, "the tool is not held"},
		{"stale hash", operator, "/v1/pins/up__tool/accept", `{"hash":"sha256:00"}`, 409, "changed again"},
		{"unknown field", operator, "/v1/pins/up__tool/accept", `{"hash":"x","force":true}`, 400, "force"},
	} {
		status, b := do(t, hs, "POST", tt.path, tt.key, tt.body)
		if status != tt.status || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: %d %s; want %d with %q", tt.name, status, b, tt.status, tt.want)
		}
	}
	if x, _ := reg.Tool("up__tool"); x.Callable() {
		t.Fatal("a refused accept released the tool")
	}
	status, b = do(t, hs, "POST", "/v1/pins/up__tool/accept", operator, `{"hash":"`+h.Hash+`"}`)
	if status != 200 || !strings.Contains(string(b), `"name":"up__tool"`) {
		t.Fatalf("accept: %d %s", status, b)
	}
	if x, _ := reg.Tool("up__tool"); !x.Callable() {
		t.Errorf("after accept the tool is %q", x.Status)
	}
	if status, b := do(t, hs, "POST", "/v1/tools/up__tool/call", caller, `{"arguments":{}}`); status != 200 || !strings.Contains(string(b), `"ok":true`) {
		t.Errorf("call after accept: %d %s", status, b)
	}
	if status, b := do(t, hs, "POST", "/v1/pins/up__tool/accept", operator, ""); status != 404 {
		t.Errorf("second accept: %d %s; want 404", status, b)
	}
}

// A server with no importer answers empty lists, and 404 to an accept.
func TestPinsWithoutImports(t *testing.T) {
	_, hs := newTestServer(t, nil)
	if status, b := do(t, hs, "GET", "/v1/imports", "", ""); status != 200 || strings.TrimSpace(string(b)) != `{"servers":[]}` {
		t.Errorf("GET /v1/imports: %d %s", status, b)
	}
	if status, b := do(t, hs, "GET", "/v1/pins", "", ""); status != 200 || strings.TrimSpace(string(b)) != `{"held":[],"can_accept":true}` {
		t.Errorf("GET /v1/pins: %d %s", status, b)
	}
	if status, b := do(t, hs, "POST", "/v1/pins/x/accept", "", ""); status != 404 {
		t.Errorf("accept: %d %s", status, b)
	}
}

// A client following /v1/events?type=tool_held hears of a held tool, with
// its name, its server as source and what changed.
func TestPinsEventStream(t *testing.T) {
	hs, up, reg := pinsServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/v1/events?type=tool_held", nil)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/events?type=tool_held: %d", resp.StatusCode)
	}
	pinsDrift(t, up, reg, "tool", "Version two.")
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e wield.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatal(err)
		}
		if e.Type != wield.EventToolHeld || e.Tool != "up__tool" || e.Source != "mcp:up" || !strings.Contains(e.Message, `changed the description of tool "tool"`) {
			t.Errorf("event = %+v", e)
		}
		return
	}
	t.Fatalf("no tool_held event: %v", sc.Err())
}
