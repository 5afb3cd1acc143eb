package mcpbridge_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/internal/hostilemcp"
	"github.com/wieldhq/wield/mcpbridge"
)

// relayChain serves, over MCP, the tools imported from the server at url:
// client → wield's MCP server → engine → importer → imported server. It
// returns the client's session.
func relayChain(t *testing.T, url string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, _ := relayChainBus(t, url, copts)
	return cs
}

// relayChainBus is relayChain, with the bus of the engine's events.
func relayChainBus(t *testing.T, url string, copts *mcp.ClientOptions) (*mcp.ClientSession, *wield.Bus) {
	t.Helper()
	bus := wield.NewBus(0)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Permission: wield.PermissionAuto})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "up", URL: url, Enabled: true, Timeout: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	eng := impEngine(t, reg)
	srv := mcpbridge.NewServer(eng, reg, &mcpbridge.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(srv.Close)
	return srvConnect(t, &srvFixture{reg: reg, eng: eng, srv: srv}, srvStateful, "/mcp", copts), bus
}

// TestRelayProgressAndLogs: the imported server's progress notices reach
// the MCP client in order under the client's token, and its log messages
// at the client's level only (below it, none). The imported server sends
// each notice once the client has the one before, so none is coalesced. A
// call whose client asks for no progress still asks the imported server
// for it, and its progress becomes the call's execution_progress events
// (the client gets none).
func TestRelayProgressAndLogs(t *testing.T) {
	got, copts := srvCollector()
	seen := make(chan struct{}, 8)
	progress := copts.ProgressNotificationHandler
	copts.ProgressNotificationHandler = func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress(ctx, r)
		seen <- struct{}{}
	}
	published := make(chan struct{}, 8) // execution_progress events of the call without a token
	var tokens []any                    // the tokens the imported server was given
	var mu sync.Mutex
	work := impRemote{
		tool: &mcp.Tool{Name: "work", InputSchema: impObject, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		handle: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			mu.Lock()
			tokens = append(tokens, tok)
			first := len(tokens) == 1 // the call whose client asked for progress
			mu.Unlock()
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "below", Data: "quiet"})
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Logger: "disk", Data: map[string]any{"free": 0}})
			for i, word := range []string{"one", "two", "three"} {
				if tok == nil {
					break
				}
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: 3, Message: word}); err != nil {
					return nil, err
				}
				if !first {
					// Past the call's result, a notice is dropped: wait
					// until the first and the last are on the bus (the
					// second comes within the engine's interval).
					if word != "two" {
						select {
						case <-published:
						case <-ctx.Done():
							return nil, ctx.Err()
						}
					}
					continue
				}
				select {
				case <-seen:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		},
	}
	cs, bus := relayChainBus(t, impNewGoServer(t, work).url(), copts)
	ctx, cancel := context.WithTimeout(t.Context(), srvWait)
	defer cancel()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: "up__work", Arguments: map[string]any{}}
	p.SetProgressToken("mine")
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if v := srvViewOf(res); strings.Join(v.Text, "") != "done" || v.IsError {
		t.Errorf("result %+v", v)
	}
	want := []string{"mine 1/3 one", "mine 2/3 two", "mine 3/3 three"}
	if diff := cmp.Diff(want, srvTake(t, got.progress, 3)); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`error disk {"free":0}`}, srvTake(t, got.logs, 1)); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
	select {
	case l := <-got.logs:
		t.Errorf("a log message below the client's level was relayed: %s", l)
	default:
	}
	mu.Lock()
	if len(tokens) != 1 || tokens[0] == nil || tokens[0] == "mine" {
		t.Errorf("the imported server was given the token %v, want one of wield's own", tokens)
	}
	mu.Unlock()

	// A call that asks for no progress: the imported server is asked, its
	// progress goes to the events, not to the client.
	sub := bus.Subscribe(func(e *wield.Event) bool {
		return e.Type == wield.EventExecutionProgress || e.Type == wield.EventExecutionCompleted
	})
	defer sub.Close()
	stop := bus.Listen(func(e *wield.Event) bool { return e.Type == wield.EventExecutionProgress }, func(wield.Event) {
		published <- struct{}{}
	})
	defer stop()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__work", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var events []string
	var id string // the call's, from its first progress event
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("events: %v (so far %q)", err, events)
		}
		if e.Type == wield.EventExecutionCompleted {
			if e.CallID == id {
				break
			}
			continue // the first call's, published after its answer
		}
		id = e.CallID
		events = append(events, fmt.Sprintf("%s %v/%v %s", e.Tool, e.Progress.Progress, e.Progress.Total, e.Message))
	}
	// "two" comes within wield.ProgressInterval of "one": not published
	// unless the machine is that slow.
	if len(events) < 2 || len(events) > 3 || events[0] != "up__work 1/3 one" || events[len(events)-1] != "up__work 3/3 three" {
		t.Errorf("progress events of the call without a token: %q, want 1/3 one and 3/3 three", events)
	}
	select {
	case p := <-got.progress:
		t.Errorf("the client that asked for no progress got %s", p)
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tokens) != 2 || tokens[1] == nil || tokens[1] == "mine" {
		t.Errorf("tokens given to the imported server: %v, want one of wield's own for the second call", tokens)
	}
}

// TestRelayCancel: the MCP client's notifications/cancelled ends the
// imported call: the imported server's handler sees its context end.
func TestRelayCancel(t *testing.T) {
	cancelled := make(chan string, 1)
	g := impHostile(t, hostilemcp.Options{HangCall: true, Cancelled: cancelled})
	cs := relayChain(t, g.url(), nil)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{}})
		errc <- err
	}()
	// The imported server holds the call until it is cancelled; give the
	// call time to get there, then cancel it as a client does.
	time.AfterFunc(300*time.Millisecond, cancel)
	select {
	case name := <-cancelled:
		if name != "echo" {
			t.Errorf("the imported server saw %q cancelled, want echo", name)
		}
	case <-time.After(srvWait):
		t.Fatal("the imported server never saw the call cancelled")
	}
	if err := <-errc; err == nil {
		t.Error("the cancelled call returned no error")
	}
}

// TestRelayFlood: an imported server that floods a call with progress and
// log messages (25,000 of each, or a tenth under the race detector: see
// flood; half the progress under tokens nobody asked for) gets a bounded number of them relayed: at most one progress
// notice per interval, at most RelayLogs log messages and one note of the
// dropped ones per interval; the call answers.
func TestRelayFlood(t *testing.T) {
	var mu sync.Mutex
	var progress, logs int
	var foreign []string
	copts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress++
			if r.Params.ProgressToken != "mine" {
				foreign = append(foreign, fmt.Sprint(r.Params.ProgressToken))
			}
		},
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs++
			mu.Unlock()
		},
	}
	n := flood(25_000)
	g := impHostile(t, hostilemcp.Options{FloodLog: n, FloodProgress: n})
	cs := relayChain(t, g.url(), copts)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{}}
	p.SetProgressToken("mine")
	start := time.Now()
	res, err := cs.CallTool(ctx, p)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if v := srvViewOf(res); !strings.Contains(strings.Join(v.Text, ""), "hostile answered echo") {
		t.Errorf("result %+v", v)
	}
	// Notifications come before the result on its stream; a few more may
	// still be on their way, so the count is read after a ping.
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	intervals := int(took/mcpbridge.RelayInterval) + 2
	if progress == 0 || progress > intervals {
		t.Errorf("%d progress notices relayed in %s, want 1 to %d", progress, took, intervals)
	}
	if logs == 0 || logs > intervals*(mcpbridge.RelayLogs+1) {
		t.Errorf("%d log messages relayed in %s, want 1 to %d", logs, took, intervals*(mcpbridge.RelayLogs+1))
	}
	if len(foreign) > 0 {
		t.Errorf("progress under other tokens reached the client: %q", foreign[:min(len(foreign), 5)])
	}
	t.Logf("the imported server sent %d progress and %d log messages in %s; %d and %d were relayed", n, n, took, progress, logs)
}

// BenchmarkRelayCall is one MCP call, over streamable HTTP on loopback, of
// a tool imported from an in-process Go-SDK server that sends three
// progress notices when given a token: "relayed" sends a progress token
// (the notices are relayed, coalesced), "reference" sends other _meta, so
// that both take the same go-sdk path and differ only by the relay.
func BenchmarkRelayCall(b *testing.B) {
	up := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	up.AddTool(&mcp.Tool{Name: "work", InputSchema: impObject, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := range 3 {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: 3})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	g := &impGoServer{t: b, srv: up}
	g.start("127.0.0.1:0")
	defer g.stop()
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0), Logger: slog.New(slog.DiscardHandler)})
	im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{Permission: wield.PermissionAuto, Logger: slog.New(slog.DiscardHandler)})
	defer im.Close()
	if err := im.Add(context.Background(), mcpbridge.ServerConfig{Name: "up", URL: g.url(), Enabled: true}); err != nil {
		b.Fatal(err)
	}
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	srv := mcpbridge.NewServer(eng, reg, &mcpbridge.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	var notices atomic.Int64
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { notices.Add(1) },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for _, mode := range []string{"reference", "relayed"} {
		b.Run(mode, func(b *testing.B) {
			notices.Store(0)
			b.ReportAllocs()
			for b.Loop() {
				p := &mcp.CallToolParams{Name: "up__work", Arguments: map[string]any{}}
				if mode == "relayed" {
					p.SetProgressToken("bench")
				} else {
					p.Meta = mcp.Meta{"bench": true}
				}
				if _, err := cs.CallTool(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(notices.Load())/float64(b.N), "notices/op")
		})
	}
}
