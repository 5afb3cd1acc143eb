package mcpbridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/mcpbridge"
)

// srvWait bounds every wait of these tests.
const srvWait = 10 * time.Second

type srvEchoIn struct {
	Message string `json:"message" description:"What to echo"`
}

type srvEchoOut struct {
	Echo string `json:"echo"`
}

// srvTools are the tools the tests serve.
func srvTools() []*wield.Tool {
	echo := wield.Func("echo", "Echo a message", func(_ context.Context, in srvEchoIn) (srvEchoOut, error) {
		return srvEchoOut{Echo: in.Message}, nil
	})
	shout := wield.Func("shout", "Echo a message in capitals", func(_ context.Context, in srvEchoIn) (string, error) {
		return strings.ToUpper(in.Message), nil
	})
	fail := wield.Func("fail", "Always fails", func(_ context.Context, in srvEchoIn) (string, error) {
		return "", errors.New("the disk is full: " + in.Message)
	})
	wipe := wield.Func("wipe", "Delete everything", func(_ context.Context, in srvEchoIn) (string, error) {
		return "wiped " + in.Message, nil
	})
	wipe.Annotations.Destructive = true
	return []*wield.Tool{echo, shout, fail, wipe}
}

type srvFixture struct {
	reg *wield.Registry
	eng *engine.Engine
	srv *mcpbridge.Server
}

// srvNew serves srvTools (and extra) with the given options.
func srvNew(t testing.TB, opts *mcpbridge.ServerOptions, eopts *engine.Options, extra ...*wield.Tool) *srvFixture {
	t.Helper()
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(append(srvTools(), extra...)...)
	if err := reg.DefineToolset(wield.Toolset{Name: "loud", Tools: []string{"shout"}}); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(reg, eopts)
	t.Cleanup(func() { eng.Close(context.Background()) })
	srv := mcpbridge.NewServer(eng, reg, opts)
	t.Cleanup(srv.Close)
	return &srvFixture{reg: reg, eng: eng, srv: srv}
}

// srvTransport names a way to reach a server.
type srvTransport string

const (
	// srvStateful and srvStdio speak the handshake era (2025-11-25), with
	// a session; srvStateless, srvEra2026 and srvStdio2026 the stateless
	// era (2026-07-28), to a stateless server, to a server of sessions and
	// over stdio.
	srvStateful  srvTransport = "http"
	srvStateless srvTransport = "http-stateless"
	srvStdio     srvTransport = "stdio"
	srvEra2026   srvTransport = "http-2026"
	srvStdio2026 srvTransport = "stdio-2026"
)

// srvConnect connects a client to the server over the transport; path is
// the HTTP endpoint ("/mcp", "/mcp/loud").
func srvConnect(t *testing.T, f *srvFixture, tr srvTransport, path string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	var transport mcp.Transport
	switch tr {
	case srvStateful, srvStateless, srvEra2026:
		ts := httptest.NewServer(f.srv.Handler())
		t.Cleanup(ts.Close)
		transport = &mcp.StreamableClientTransport{Endpoint: ts.URL + path, MaxRetries: -1}
	case srvStdio, srvStdio2026:
		cr, sw := io.Pipe() // server to client
		sr, cw := io.Pipe() // client to server
		sctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- f.srv.ServeStdio(sctx, sr, sw) }()
		t.Cleanup(func() {
			stop()
			cw.Close()
			sw.Close()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("ServeStdio: %v", err)
				}
			case <-time.After(srvWait):
				t.Error("ServeStdio did not return")
			}
		})
		transport = &mcp.IOTransport{Reader: cr, Writer: cw}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "tester", Version: "1"}, copts)
	var sopts *mcp.ClientSessionOptions
	if tr == srvStateful || tr == srvStdio {
		// The go-sdk client prefers 2026-07-28, which has no sessions.
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := c.Connect(ctx, transport, sopts)
	if err != nil {
		t.Fatalf("connect over %s: %v", tr, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func srvCall(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// srvView is what the tests compare of a tools/call result.
type srvView struct {
	Text       []string
	Structured string
	IsError    bool
}

func srvViewOf(r *mcp.CallToolResult) srvView {
	var v srvView
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			v.Text = append(v.Text, tc.Text)
		}
	}
	if r.StructuredContent != nil {
		b, _ := json.Marshal(r.StructuredContent)
		v.Structured = string(b)
	}
	v.IsError = r.IsError
	return v
}

func srvNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func TestServerListAndCall(t *testing.T) {
	for _, tr := range []srvTransport{srvStateful, srvStateless, srvStdio} {
		t.Run(string(tr), func(t *testing.T) {
			f := srvNew(t, &mcpbridge.ServerOptions{Stateless: tr == srvStateless}, nil)
			cs := srvConnect(t, f, tr, "/mcp", nil)
			if diff := cmp.Diff([]string{"echo", "fail", "shout", "wipe"}, srvNames(t, cs)); diff != "" {
				t.Errorf("tools/list (-want +got):\n%s", diff)
			}
			tests := []struct {
				name string
				tool string
				args any
				want srvView
			}{
				{"object output", "echo", map[string]any{"message": "hi"}, srvView{Text: []string{`{"echo":"hi"}`}, Structured: `{"echo":"hi"}`}},
				{"string output", "shout", map[string]any{"message": "hi"}, srvView{Text: []string{"HI"}}},
				{"coerced argument", "shout", map[string]any{"message": 5}, srvView{Text: []string{"5"}}},
				{"wrong type", "shout", map[string]any{"message": []string{"a"}}, srvView{Text: []string{"Error: invalid arguments for tool 'shout': message: expected string, got array [\"a\"]"}, IsError: true}},
				{"missing argument", "echo", map[string]any{}, srvView{Text: []string{"Error: invalid arguments for tool 'echo': message: missing required property (expected string)"}, IsError: true}},
				{"tool failure", "fail", map[string]any{"message": "x"}, srvView{Text: []string{"Error: the disk is full: x"}, IsError: true}},
				{"confirm without approver", "wipe", map[string]any{"message": "x"}, srvView{Text: []string{"Error: Tool 'wipe' needs a person's approval and no approver is configured"}, IsError: true}},
			}
			for _, tt := range tests {
				got := srvViewOf(srvCall(t, cs, tt.tool, tt.args))
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: result (-want +got):\n%s", tt.name, diff)
				}
			}
		})
	}
}

func TestServerResultCarriesCallID(t *testing.T) {
	f := srvNew(t, nil, nil)
	cs := srvConnect(t, f, srvStdio, "", nil)
	res := srvCall(t, cs, "echo", map[string]any{"message": "hi"})
	id, _ := res.Meta[mcpbridge.MetaCallID].(string)
	if len(id) != wield.IDLen {
		t.Errorf("_meta[%s] = %v, want a call ID of wield.IDLen characters", mcpbridge.MetaCallID, res.Meta[mcpbridge.MetaCallID])
	}
}

func TestServerUnknownTool(t *testing.T) {
	f := srvNew(t, nil, nil)
	cs := srvConnect(t, f, srvStateful, "/mcp", nil)
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "nope"`) {
		t.Errorf("call of an unknown tool: err = %v, want a protocol error naming it", err)
	}
}

// srvFailingStore fails every save, which the engine reports as a Go error.
type srvFailingStore struct{}

func (srvFailingStore) Save(context.Context, *wield.Record) error {
	return errors.New("pq: connection refused to 10.0.0.7:5432 (secret internal detail)")
}

func TestServerEngineErrorIsInternal(t *testing.T) {
	for _, tr := range []srvTransport{srvStateful, srvStdio} {
		t.Run(string(tr), func(t *testing.T) {
			f := srvNew(t, nil, &engine.Options{Store: srvFailingStore{}})
			cs := srvConnect(t, f, tr, "/mcp", nil)
			ctx, cancel := context.WithTimeout(context.Background(), srvWait)
			defer cancel()
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
			if err == nil {
				t.Fatal("call succeeded, want a JSON-RPC internal error")
			}
			if !strings.Contains(err.Error(), "internal error") || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "10.0.0.7") {
				t.Errorf("err = %q, want \"internal error\" without the store's text", err)
			}
		})
	}
}

func TestServerToolsetEndpoint(t *testing.T) {
	for _, tr := range []srvTransport{srvStateful, srvStateless} {
		t.Run(string(tr), func(t *testing.T) {
			f := srvNew(t, &mcpbridge.ServerOptions{Stateless: tr == srvStateless}, nil)
			cs := srvConnect(t, f, tr, "/mcp/loud", nil)
			if diff := cmp.Diff([]string{"shout"}, srvNames(t, cs)); diff != "" {
				t.Errorf("tools/list of /mcp/loud (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(srvView{Text: []string{"HEY"}}, srvViewOf(srvCall(t, cs, "shout", map[string]any{"message": "hey"}))); diff != "" {
				t.Errorf("call (-want +got):\n%s", diff)
			}
			ctx, cancel := context.WithTimeout(context.Background(), srvWait)
			defer cancel()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}); err == nil {
				t.Error("call of a tool outside the toolset succeeded")
			}
		})
	}
}

func TestServerToolsetOption(t *testing.T) {
	f := srvNew(t, &mcpbridge.ServerOptions{Toolset: "loud"}, nil)
	cs := srvConnect(t, f, srvStdio, "", nil)
	if diff := cmp.Diff([]string{"shout"}, srvNames(t, cs)); diff != "" {
		t.Errorf("tools/list over stdio with Toolset (-want +got):\n%s", diff)
	}
	ts := httptest.NewServer(f.srv.Handler())
	defer ts.Close()
	for _, path := range []string{"/mcp/loud", "/mcp/other"} {
		resp, err := ts.Client().Post(ts.URL+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("POST %s with Toolset set: status %d, want 404", path, resp.StatusCode)
		}
	}
}

func TestServerUnknownToolset(t *testing.T) {
	f := srvNew(t, nil, nil)
	ts := httptest.NewServer(f.srv.Handler())
	defer ts.Close()
	resp, err := ts.Client().Post(ts.URL+"/mcp/nope", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("POST /mcp/nope: status %d, want 404", resp.StatusCode)
	}
}

func TestServerFollowsRegistry(t *testing.T) {
	for _, tr := range []srvTransport{srvStateful, srvStdio} {
		t.Run(string(tr), func(t *testing.T) {
			f := srvNew(t, nil, nil)
			changed := make(chan struct{}, 16)
			cs := srvConnect(t, f, tr, "/mcp", &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			})
			srvNames(t, cs) // the session is up and listed once
			f.reg.MustRegister(wield.Func("late", "Registered after start", func(_ context.Context, in srvEchoIn) (string, error) {
				return "late " + in.Message, nil
			}))
			select {
			case <-changed:
			case <-time.After(srvWait):
				t.Fatal("no notifications/tools/list_changed after a registration")
			}
			if diff := cmp.Diff([]string{"echo", "fail", "late", "shout", "wipe"}, srvNames(t, cs)); diff != "" {
				t.Errorf("tools/list after a registration (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(srvView{Text: []string{"late x"}}, srvViewOf(srvCall(t, cs, "late", map[string]any{"message": "x"}))); diff != "" {
				t.Errorf("call of the new tool (-want +got):\n%s", diff)
			}
			f.reg.Remove("fail")
			select {
			case <-changed:
			case <-time.After(srvWait):
				t.Fatal("no notifications/tools/list_changed after a removal")
			}
			if diff := cmp.Diff([]string{"echo", "late", "shout", "wipe"}, srvNames(t, cs)); diff != "" {
				t.Errorf("tools/list after a removal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServerFollowsRegistryWithoutBus(t *testing.T) {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(srvTools()...)
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	srv := mcpbridge.NewServer(eng, reg, nil)
	defer srv.Close()
	cs := srvConnect(t, &srvFixture{reg: reg, eng: eng, srv: srv}, srvStdio, "", nil)
	srvNames(t, cs)
	reg.Remove("echo")
	if diff := cmp.Diff([]string{"fail", "shout", "wipe"}, srvNames(t, cs)); diff != "" {
		t.Errorf("tools/list after a removal, no bus (-want +got):\n%s", diff)
	}
}

func TestServerListsWhatLLMExports(t *testing.T) {
	f := srvNew(t, nil, nil)
	cs := srvConnect(t, f, srvStdio, "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for _, tl := range res.Tools {
		b, _ := json.Marshal(tl)
		var m map[string]any
		json.Unmarshal(b, &m)
		got = append(got, m)
	}
	var want []map[string]any
	// The wire form of each entry, as llm.MCPTools describes it.
	for _, name := range []string{"echo", "fail", "shout", "wipe"} {
		tl, _ := f.reg.Tool(name)
		b, _ := json.Marshal(srvLLMTool(t, tl))
		var m map[string]any
		json.Unmarshal(b, &m)
		// Plus what MCP's hints cannot say (TestServerExportsMeaning).
		meta := map[string]any{"wield/permission": string(tl.EffectivePermission())}
		if len(tl.Tags) > 0 {
			meta["wield/tags"] = impJSON(t, tl.Tags)
		}
		m["_meta"] = meta
		want = append(want, m)
	}
	slices.SortFunc(got, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools/list entries (-want +got):\n%s", diff)
	}
}

func srvLLMTool(t *testing.T, tl *wield.Tool) llm.MCPTool {
	t.Helper()
	out, problems := llm.MCPTools([]*wield.Tool{tl})
	if len(problems) > 0 || len(out) != 1 {
		t.Fatalf("llm.MCPTools(%s): %v", tl.Name, problems)
	}
	return out[0]
}

// srvRecords keeps the records the engine saves.
type srvRecords struct {
	mu   sync.Mutex
	recs []*wield.Record
}

func (s *srvRecords) Save(_ context.Context, r *wield.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r)
	return nil
}

func TestServerCaller(t *testing.T) {
	tests := []struct {
		name   string
		caller wield.Caller
		tr     srvTransport
		want   func(session string) wield.Caller
	}{
		{"derived", wield.Caller{}, srvStateful, func(s string) wield.Caller {
			return wield.Caller{ID: "mcp:tester", Type: wield.CallerDirect, ConversationID: s}
		}},
		{"configured", wield.Caller{ID: "agent-7", Type: wield.CallerConversationAgent, UserID: "u1", ConversationID: "c9"}, srvStateful, func(string) wield.Caller {
			return wield.Caller{ID: "agent-7", Type: wield.CallerConversationAgent, UserID: "u1", ConversationID: "c9"}
		}},
		// The go-sdk client speaks 2026-07-28 to a stateless server, and
		// names itself in every request; there is no session.
		{"stateless", wield.Caller{}, srvStateless, func(string) wield.Caller {
			return wield.Caller{ID: "mcp:tester", Type: wield.CallerDirect}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &srvRecords{}
			f := srvNew(t, &mcpbridge.ServerOptions{Caller: tt.caller, Stateless: tt.tr == srvStateless}, &engine.Options{Store: store})
			cs := srvConnect(t, f, tt.tr, "/mcp", nil)
			srvCall(t, cs, "echo", map[string]any{"message": "hi"})
			store.mu.Lock()
			defer store.mu.Unlock()
			if len(store.recs) != 1 {
				t.Fatalf("%d records, want 1", len(store.recs))
			}
			if diff := cmp.Diff(tt.want(cs.ID()), store.recs[0].Call.Caller); diff != "" {
				t.Errorf("caller (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServerLeavesOutWhatMCPCannotList(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	nullable := wield.Raw("nullable", "Takes an object or null", &jsonschema.Schema{Types: []string{"object", "null"}},
		wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`"ok"`), nil }))
	array := wield.Raw("array", "Takes an array", &jsonschema.Schema{Type: "array"},
		wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`"ok"`), nil }))
	log := slog.New(slog.NewTextHandler(srvLockedWriter{&logs, &mu}, nil))
	f := srvNew(t, &mcpbridge.ServerOptions{Logger: log}, nil, nullable, array)
	cs := srvConnect(t, f, srvStdio, "", nil)
	if diff := cmp.Diff([]string{"echo", "fail", "shout", "wipe"}, srvNames(t, cs)); diff != "" {
		t.Errorf("tools/list (-want +got):\n%s", diff)
	}
	srvNames(t, cs) // listed again: each problem is reported once
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(line, "tool left out") {
			_, tool, _ := strings.Cut(line, "tool=")
			tool, _, _ = strings.Cut(tool, " ")
			got = append(got, tool)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"array", "nullable"}, got); diff != "" {
		t.Errorf("tools reported left out (-want +got):\n%s\nlog:\n%s", diff, logs.String())
	}
}

type srvLockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l srvLockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
