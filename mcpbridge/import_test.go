package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/toolfile"
)

// impGoServer is a Go-SDK MCP server served over streamable HTTP on a
// loopback port that survives restarts (for reconnection tests).
type impGoServer struct {
	t    testing.TB
	srv  *mcp.Server
	addr string
	opts *mcp.StreamableHTTPOptions // of its handler; nil: the defaults
	mu   sync.Mutex
	hs   *httptest.Server
}

func impNewGoServer(t *testing.T, tools ...impRemote) *impGoServer {
	t.Helper()
	g := &impGoServer{t: t, srv: mcp.NewServer(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)}
	for _, r := range tools {
		g.srv.AddTool(r.tool, r.handle)
	}
	g.start("127.0.0.1:0")
	t.Cleanup(g.stop)
	return g
}

func (g *impGoServer) url() string { return "http://" + g.addr + "/mcp" }

func (g *impGoServer) start(addr string) {
	g.t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		g.t.Fatalf("listen %s: %v", addr, err)
	}
	hs := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.srv }, g.opts))
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	g.mu.Lock()
	g.hs, g.addr = hs, ln.Addr().String()
	g.mu.Unlock()
}

func (g *impGoServer) stop() {
	g.mu.Lock()
	hs := g.hs
	g.hs = nil
	g.mu.Unlock()
	if hs != nil {
		hs.CloseClientConnections()
		hs.Close()
	}
}

// impRemote is one tool of a test server.
type impRemote struct {
	tool   *mcp.Tool
	handle mcp.ToolHandler
}

var impObject = &jsonschema.Schema{Type: "object"}

func impResultTool(name string, res *mcp.CallToolResult) impRemote {
	return impRemote{
		tool: &mcp.Tool{Name: name, InputSchema: impObject, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		handle: func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return res, nil
		},
	}
}

// impEchoArgs answers with the raw arguments it received, as text.
func impEchoArgs(name, desc string) impRemote {
	return impRemote{
		tool: &mcp.Tool{Name: name, Description: desc, InputSchema: impObject, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		handle: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "args:" + string(req.Params.Arguments)}}}, nil
		},
	}
}

func impEngine(t *testing.T, reg *wield.Registry) *engine.Engine {
	t.Helper()
	e := engine.New(reg, &engine.Options{Retry: engine.RetryPolicy{MaxAttempts: 1}})
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func impImporter(t *testing.T, reg *wield.Registry, opts *mcpbridge.ImportOptions) *mcpbridge.Importer {
	t.Helper()
	if opts == nil {
		opts = &mcpbridge.ImportOptions{}
	}
	if opts.MinBackoff == 0 {
		opts.MinBackoff, opts.MaxBackoff = 20*time.Millisecond, 200*time.Millisecond
	}
	if opts.KillGrace == 0 {
		opts.KillGrace = 500 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	im := mcpbridge.NewImporter(reg, opts)
	t.Cleanup(func() { _ = im.Close() })
	return im
}

// impEventually polls cond every 10 ms until it holds or 20 s pass.
func impEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// impCall runs one call through the engine.
func impCall(t *testing.T, e *engine.Engine, tool, args string) *wield.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := wield.Call{Tool: tool}
	if args != "" {
		c.Arguments = json.RawMessage(args)
	}
	res, err := e.Call(ctx, c)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

// impOutcome is what a test compares of a result.
type impOutcome struct {
	OK        bool
	Output    string
	ErrorType wield.ErrorType
	Error     string
}

func impOutcomeOf(r *wield.Result) impOutcome {
	return impOutcome{OK: r.OK, Output: string(r.Output), ErrorType: r.ErrorType, Error: r.Error}
}

func TestImportResultConversion(t *testing.T) {
	g := impNewGoServer(t,
		impResultTool("fails", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}}),
		impResultTool("structured", &mcp.CallToolResult{
			StructuredContent: map[string]any{"sum": 3, "terms": []any{1, 2}},
			Content:           []mcp.Content{&mcp.TextContent{Text: "the sum is 3"}},
		}),
		impResultTool("json_text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{\"x\": [1, 2],\n \"y\": null}"}}}),
		impResultTool("number_text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "42"}}}),
		impResultTool("plain_text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, world"}, &mcp.TextContent{Text: "ignored"}}}),
		impResultTool("image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}}}),
		impResultTool("link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///a.txt", Name: "a"}}}),
		impResultTool("nothing", &mcp.CallToolResult{}),
		impEchoArgs("args", ""),
	)
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	tests := []struct {
		tool, args string
		want       impOutcome
	}{
		{"go__fails", "", impOutcome{ErrorType: wield.ErrExecution, Error: "disk full"}},
		{"go__structured", "", impOutcome{OK: true, Output: `{"sum":3,"terms":[1,2]}`}},
		{"go__json_text", "", impOutcome{OK: true, Output: `{"x":[1,2],"y":null}`}},
		{"go__number_text", "", impOutcome{OK: true, Output: `42`}},
		{"go__plain_text", "", impOutcome{OK: true, Output: `"hello, world"`}},
		{"go__image", "", impOutcome{OK: true, Output: `{"type":"image","mimeType":"image/png","data":"AQID"}`}},
		{"go__link", "", impOutcome{OK: true, Output: `{"type":"resource_link","uri":"file:///a.txt","name":"a"}`}},
		{"go__nothing", "", impOutcome{OK: true, Output: `null`}},
		{"go__args", "", impOutcome{OK: true, Output: `"args:{}"`}},
		{"go__args", `{"a":[1,"x"]}`, impOutcome{OK: true, Output: `"args:{\"a\":[1,\"x\"]}"`}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			got := impOutcomeOf(impCall(t, e, tt.tool, tt.args))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImportArgumentsNeverNull(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("args", ""))
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	tool, _ := reg.Tool("go__args")
	for _, args := range []string{"", "null", " "} {
		out, err := tool.Handler.Handle(t.Context(), json.RawMessage(args))
		if err != nil {
			t.Fatalf("handle %q: %v", args, err)
		}
		if diff := cmp.Diff(`"args:{}"`, string(out)); diff != "" {
			t.Errorf("arguments %q sent as (-want +got):\n%s", args, diff)
		}
	}
}

func TestImportToolDefinitions(t *testing.T) {
	yes, no := true, false
	out := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}}
	in := &jsonschema.Schema{Type: "object", Required: []string{"q"},
		Properties: map[string]*jsonschema.Schema{"q": {Type: "string", Description: "the query", MinLength: jsonschema.Ptr(1)}}}
	nop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	g := impNewGoServer(t,
		impRemote{&mcp.Tool{Name: "search", Description: "Search things.", InputSchema: in, OutputSchema: out,
			Meta:        mcp.Meta{"_fastmcp": map[string]any{"tags": []any{"find", "read"}}},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no}}, nop},
		impRemote{&mcp.Tool{Name: "bare", Title: "A bare tool", InputSchema: impObject}, nop},
		impRemote{&mcp.Tool{Name: "gentle", Description: "Writes, not destructive.", InputSchema: impObject,
			Meta:        mcp.Meta{"tags": []any{"write", "team"}},
			Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &yes}}, nop},
	)
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Naming: func(server, tool string) string { return server + "." + tool }})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "srv", URL: g.url(), Tags: []string{"team", "remote"}, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	want := []*wield.Tool{
		{Name: "srv.bare", Description: "A bare tool", Category: wield.CategoryMCP, Tags: []string{"team", "remote"},
			InputSchema: impObject, Annotations: wield.Annotations{Destructive: true, OpenWorld: true}, Source: "mcp:srv"},
		{Name: "srv.gentle", Description: "Writes, not destructive.", Category: wield.CategoryMCP, Tags: []string{"write", "team", "remote"},
			InputSchema: impObject, Annotations: wield.Annotations{OpenWorld: true}, Source: "mcp:srv"},
		{Name: "srv.search", Description: "Search things.", Category: wield.CategoryMCP, Tags: []string{"find", "read", "team", "remote"},
			InputSchema: in, OutputSchema: out, Annotations: wield.Annotations{ReadOnly: true, Idempotent: true}, Source: "mcp:srv"},
	}
	got := reg.List(wield.Query{Category: wield.CategoryMCP})
	opts := []cmp.Option{cmpopts.IgnoreFields(wield.Tool{}, "Handler"), cmpopts.IgnoreUnexported(jsonschema.Schema{}),
		cmpopts.SortSlices(func(a, b *wield.Tool) bool { return a.Name < b.Name })}
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("imported tools (-want +got):\n%s", diff)
	}
	if bare, _ := reg.Tool("srv.bare"); bare.EffectivePermission() != wield.PermissionConfirm {
		t.Errorf("an unannotated tool's permission is %s, want confirm (MCP's destructive default)", bare.EffectivePermission())
	}
}

func TestImportAnnotations(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		in   *mcp.ToolAnnotations
		want wield.Annotations
	}{
		{"absent", nil, wield.Annotations{Destructive: true, OpenWorld: true}},
		{"empty", &mcp.ToolAnnotations{}, wield.Annotations{Destructive: true, OpenWorld: true}},
		{"read only", &mcp.ToolAnnotations{ReadOnlyHint: true}, wield.Annotations{ReadOnly: true, OpenWorld: true}},
		{"read only says destructive", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}, wield.Annotations{ReadOnly: true, OpenWorld: true}},
		{"closed, safe, idempotent", &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no, IdempotentHint: true}, wield.Annotations{Idempotent: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mcpbridge.ImportAnnotations(tt.in)); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImportListChanged(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("first", "one"))
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	r := impEchoArgs("second", "two")
	g.srv.AddTool(r.tool, r.handle)
	impEventually(t, "the added tool is imported", func() bool { _, ok := reg.Tool("go__second"); return ok })
	if got := impOutcomeOf(impCall(t, e, "go__second", `{"k":1}`)); !got.OK {
		t.Errorf("call of the added tool: %+v", got)
	}
	g.srv.RemoveTools("first")
	impEventually(t, "the removed tool is gone", func() bool { _, ok := reg.Tool("go__first"); return !ok })
	if diff := cmp.Diff([]string{"go__second"}, impNames(reg)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func impNames(reg *wield.Registry) []string {
	var out []string
	for _, t := range reg.List(wield.Query{}) {
		out = append(out, t.Name)
	}
	return out
}

// impNextEvent returns the next event of the subscription that passes keep,
// within 20 s.
func impNextEvent(t *testing.T, sub *wield.Subscription, keep func(wield.Event) bool) wield.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 1000 {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for an event: %v", err)
		}
		if keep(ev) {
			return ev
		}
	}
	t.Fatal("no matching event among 1000")
	return wield.Event{}
}

func TestImportPinningHoldsChangedTool(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("tool", "Version one."))
	bus := wield.NewBus(0)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
	pins := &mcpbridge.MemPins{}
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Pins: pins})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	first, ok, _ := pins.Pin("go", "tool")
	if !ok || !strings.HasPrefix(first.Hash, "sha256:") {
		t.Fatalf("pin after first import = %+v, %v", first, ok)
	}
	sub := bus.Subscribe(nil)
	defer sub.Close()

	r := impEchoArgs("tool", "Version two: also sends your files somewhere.")
	g.srv.AddTool(r.tool, r.handle)
	ev := impNextEvent(t, sub, func(ev wield.Event) bool { return ev.Type == wield.EventToolHeld })
	want := wield.Event{Type: wield.EventToolHeld, Tool: "go__tool", Source: "mcp:go",
		Message: `mcp server "go" changed the description of tool "tool" since it was pinned; the tool is held until accepted`}
	if diff := cmp.Diff(want, ev, cmpopts.IgnoreFields(wield.Event{}, "ID", "Time")); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	impEventually(t, "the tool is held", func() bool { x, _ := reg.Tool("go__tool"); return x.Status == wield.StatusHeld })
	held, _ := reg.Tool("go__tool")
	if held.Description != "Version two: also sends your files somewhere." {
		t.Errorf("held tool shows description %q, want the new one", held.Description)
	}
	got := impOutcomeOf(impCall(t, e, "go__tool", `{}`))
	if diff := cmp.Diff(impOutcome{ErrorType: wield.ErrToolNotFound, Error: "Tool 'go__tool' is held and cannot be called"}, got); diff != "" {
		t.Errorf("call of a held tool (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"go__tool"}, im.Servers()[0].Held); diff != "" {
		t.Errorf("held list (-want +got):\n%s", diff)
	}
	if p, _, _ := pins.Pin("go", "tool"); p.Hash != first.Hash {
		t.Errorf("the pin moved before acceptance")
	}

	if err := im.Accept("go", "nope"); !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("accept of an unknown tool: %v, want ErrNotFound", err)
	}
	if err := im.Accept("go", "tool"); err != nil {
		t.Fatal(err)
	}
	if got := impOutcomeOf(impCall(t, e, "go__tool", `{}`)); !got.OK {
		t.Errorf("call after accept: %+v", got)
	}
	if p, _, _ := pins.Pin("go", "tool"); p.Hash == first.Hash {
		t.Errorf("accept kept the old pin")
	}
	if err := im.Accept("go", "tool"); err == nil {
		t.Errorf("a second accept succeeded; the tool is no longer held")
	}
}

func TestImportPinningFollowChanges(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("tool", "Version one."))
	bus := wield.NewBus(0)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
	pins := &mcpbridge.MemPins{}
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Pins: pins, FollowChanges: true})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	first, _, _ := pins.Pin("go", "tool")
	sub := bus.Subscribe(nil)
	defer sub.Close()
	r := impEchoArgs("tool", "Version two.")
	r.tool.InputSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": {Type: "string"}}}
	g.srv.AddTool(r.tool, r.handle)
	ev := impNextEvent(t, sub, func(ev wield.Event) bool { return ev.Type == wield.EventToolLoaded })
	if want := `mcp server "go" changed the description and input schema of tool "tool"; following the change (FollowChanges)`; ev.Message != want {
		t.Errorf("event message %q, want %q", ev.Message, want)
	}
	impEventually(t, "the new definition is registered", func() bool { x, _ := reg.Tool("go__tool"); return x.Description == "Version two." })
	if x, _ := reg.Tool("go__tool"); !x.Callable() {
		t.Errorf("status %q, want callable", x.Status)
	}
	if got := impOutcomeOf(impCall(t, e, "go__tool", `{"x":"y"}`)); !got.OK {
		t.Errorf("call after a followed change: %+v", got)
	}
	if p, _, _ := pins.Pin("go", "tool"); p.Hash == first.Hash {
		t.Errorf("FollowChanges kept the old pin")
	}
}

func TestImportPinsSurviveRestart(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("tool", "Version one."))
	path := filepath.Join(t.TempDir(), "pins.json")
	open := func() *mcpbridge.FilePins {
		p, err := mcpbridge.OpenFilePins(path)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	reg1 := wield.NewRegistry(nil)
	im1 := impImporter(t, reg1, &mcpbridge.ImportOptions{Pins: open()})
	if err := im1.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := im1.Close(); err != nil {
		t.Fatal(err)
	}
	if n := reg1.Len(); n != 0 {
		t.Errorf("Close left %d tools in the registry", n)
	}
	r := impEchoArgs("tool", "Version two.")
	g.srv.AddTool(r.tool, r.handle)

	reg2 := wield.NewRegistry(nil)
	im2 := impImporter(t, reg2, &mcpbridge.ImportOptions{Pins: open()})
	if err := im2.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if x, _ := reg2.Tool("go__tool"); x == nil || x.Status != wield.StatusHeld {
		t.Fatalf("after a restart the changed tool is %+v, want held", x)
	}
	if err := im2.Accept("go", "tool"); err != nil {
		t.Fatal(err)
	}
	p, _, _ := open().Pin("go", "tool")
	want, _ := mcpbridge.PinTool(r.tool)
	if p.Hash != want.Hash {
		t.Errorf("the file keeps pin %s, want the accepted %s", p.Hash, want.Hash)
	}
}

func TestImportReconnects(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("tool", ""))
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	if got := impOutcomeOf(impCall(t, e, "go__tool", `{}`)); !got.OK {
		t.Fatalf("first call: %+v", got)
	}
	addr := g.addr
	g.stop()
	got := impOutcomeOf(impCall(t, e, "go__tool", `{}`))
	want := impOutcome{ErrorType: wield.ErrExecution, Error: `MCP server "go" is not reachable right now; try again shortly`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("call during the outage (-want +got):\n%s", diff)
	}
	impEventually(t, "the importer sees the outage", func() bool { return !im.Servers()[0].Connected })
	g.start(addr)
	impEventually(t, "the importer reconnects", func() bool { return im.Servers()[0].Connected })
	if got := impOutcomeOf(impCall(t, e, "go__tool", `{}`)); !got.OK {
		t.Errorf("call after reconnection: %+v", got)
	}
}

func TestImportUnreachableAtStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	err = im.Add(t.Context(), mcpbridge.ServerConfig{Name: "late", URL: "http://" + addr + "/mcp", Enabled: true})
	if !errors.Is(err, mcpbridge.ErrUnavailable) {
		t.Fatalf("Add of a server that is down: %v, want ErrUnavailable", err)
	}
	st := im.Servers()[0]
	if st.Connected || st.LastError == "" || st.State != mcpbridge.StateFailed {
		t.Errorf("status of a server that is down: %+v", st)
	}
	g := &impGoServer{t: t, srv: mcp.NewServer(&mcp.Implementation{Name: "late"}, nil)}
	r := impEchoArgs("tool", "")
	g.srv.AddTool(r.tool, r.handle)
	g.start(addr)
	t.Cleanup(g.stop)
	impEventually(t, "the tools arrive once the server is up", func() bool { _, ok := reg.Tool("late__tool"); return ok })
	if st := im.Servers()[0]; !st.Connected || st.LastError != "" || st.Tools != 1 || st.State != mcpbridge.StateConnected {
		t.Errorf("status once up: %+v", st)
	}
	im.Close()
	if st := im.Servers()[0]; st.State != mcpbridge.StateClosed {
		t.Errorf("status once closed: %+v", st)
	}
}

func TestImportServerConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  mcpbridge.ServerConfig
		want string // part of the error; "" for none
	}{
		{"url", mcpbridge.ServerConfig{Name: "a", URL: "http://127.0.0.1:1/mcp"}, ""},
		{"sse", mcpbridge.ServerConfig{Name: "a", URL: "https://x.test/sse", Transport: "sse"}, ""},
		{"command", mcpbridge.ServerConfig{Name: "a-b.c", Command: []string{"node", "x.js"}}, ""},
		{"both", mcpbridge.ServerConfig{Name: "a", URL: "http://x.test", Command: []string{"x"}}, "has both url and command"},
		{"neither", mcpbridge.ServerConfig{Name: "a"}, "has neither url nor command"},
		{"bad name", mcpbridge.ServerConfig{Name: "a b", URL: "http://x.test"}, `name "a b" must be`},
		{"bad url", mcpbridge.ServerConfig{Name: "a", URL: "ftp://x.test"}, `url "ftp://x.test" is not an http or https URL`},
		{"stdio with url", mcpbridge.ServerConfig{Name: "a", URL: "http://x.test", Transport: "stdio"}, "transport stdio needs a command"},
		{"unknown transport", mcpbridge.ServerConfig{Name: "a", URL: "http://x.test", Transport: "ws"}, `transport "ws" is not stdio, http or sse`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Check()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.want == "" && err != nil || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("Check() = %q, want %q", got, tt.want)
			}
		})
	}
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "off", URL: "http://127.0.0.1:1/mcp"}); err != nil {
		t.Errorf("Add of a disabled server: %v", err)
	}
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "off", URL: "http://127.0.0.1:1/mcp"}); err == nil {
		t.Errorf("a second server of the same name was added")
	}
	want := []mcpbridge.ServerStatus{{Name: "off", Transport: "http", State: mcpbridge.StateDisabled}}
	if diff := cmp.Diff(want, im.Servers()); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

// A configuration loaded from a file converts as is: the two types have the
// same fields.
func TestImportFromToolfile(t *testing.T) {
	in := toolfile.MCPServer{Name: "fs", Command: []string{"node", "fs.js"}, Headers: map[string]string{"X-Api-Key": "k"},
		Env: map[string]string{"A": "1"}, Tags: []string{"files"}, Enabled: true}
	got := mcpbridge.ServerConfig(in)
	want := mcpbridge.ServerConfig{Name: "fs", Command: []string{"node", "fs.js"}, Headers: map[string]string{"X-Api-Key": "k"},
		Env: map[string]string{"A": "1"}, Tags: []string{"files"}, Enabled: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("converted (-want +got):\n%s", diff)
	}
}

func TestImportSendsHeaders(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "auth"}, nil)
	r := impEchoArgs("tool", "")
	srv.AddTool(r.tool, r.handle)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var seen []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		seen = append(seen, req.Header.Get("Authorization")+"|"+req.Header.Get("X-Api-Key"))
		mu.Unlock()
		if req.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(hs.Close)
	t.Setenv("NOT_EXPANDED", "oops")
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "auth", URL: hs.URL, Enabled: true,
		Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k1${NOT_EXPANDED}"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := impOutcomeOf(impCall(t, impEngine(t, reg), "auth__tool", `{}`)); !got.OK {
		t.Errorf("call: %+v", got)
	}
	mu.Lock()
	if len(seen) == 0 {
		t.Error("the server saw no request")
	}
	defer mu.Unlock()
	for _, s := range seen {
		if s != "Bearer s3cret|k1${NOT_EXPANDED}" { // the config loader expands, not the importer
			t.Errorf("a request carried headers %q", s)
		}
	}
}

func TestImportRemove(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("tool", ""))
	other := impNewGoServer(t, impEchoArgs("tool", ""))
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	for name, url := range map[string]string{"a": g.url(), "b": other.url()} {
		if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: name, URL: url, Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := im.Remove("a"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b__tool"}, impNames(reg)); diff != "" {
		t.Errorf("tools after removing a (-want +got):\n%s", diff)
	}
	if err := im.Remove("a"); !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("second Remove: %v, want ErrNotFound", err)
	}
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "a", URL: g.url(), Enabled: true}); err != nil {
		t.Fatalf("Add after Remove: %v", err)
	}
	var names []string
	for _, st := range im.Servers() {
		names = append(names, st.Name)
	}
	if diff := cmp.Diff([]string{"b", "a"}, names); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

// TestImportNamingPanics: a Naming that panics gives the default name,
// and the panic is counted, instead of ending the process.
func TestImportNamingPanics(t *testing.T) {
	before := wield.CallbackPanics()[wield.CallbackMCPNaming]
	nop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	g := impNewGoServer(t, impRemote{&mcp.Tool{Name: "bare", InputSchema: impObject}, nop})
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Naming: func(string, string) string { panic("Naming bug") }})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "srv", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Tool("srv__bare"); !ok {
		t.Errorf("tools %d, want srv__bare among them", len(reg.List(wield.Query{})))
	}
	if n := wield.CallbackPanics()[wield.CallbackMCPNaming] - before; n < 1 {
		t.Errorf("mcp_naming panics counted: %d, want at least 1", n)
	}
}
