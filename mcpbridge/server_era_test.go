package mcpbridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/memstore"
)

// TestServerStatelessEra checks that a go-sdk client speaking 2026-07-28
// (server/discover, no session) lists and calls the tools of a server of
// sessions, on /mcp and on a toolset's endpoint, through the engine; and
// that a client of the handshake still gets a session on the same server.
func TestServerStatelessEra(t *testing.T) {
	tests := []struct {
		path  string
		names []string
		tool  string
		want  srvView
	}{
		{"/mcp", []string{"echo", "fail", "shout", "wipe"}, "echo", srvView{Text: []string{`{"echo":"hi"}`}, Structured: `{"echo":"hi"}`}},
		{"/mcp/loud", []string{"shout"}, "shout", srvView{Text: []string{"HI"}}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			store := &srvRecords{}
			f := srvNew(t, nil, &engine.Options{Store: store})
			cs := srvConnect(t, f, srvEra2026, tt.path, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
				t.Fatalf("negotiated %q, want 2026-07-28", got)
			}
			if si := cs.InitializeResult().ServerInfo; si == nil || si.Name != "wield" {
				t.Errorf("server info %+v, want wield's", si)
			}
			if diff := cmp.Diff(tt.names, srvNames(t, cs)); diff != "" {
				t.Errorf("tools/list (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, srvViewOf(srvCall(t, cs, tt.tool, map[string]any{"message": "hi"}))); diff != "" {
				t.Errorf("tools/call (-want +got):\n%s", diff)
			}
			if cs.ID() != "" || f.srv.Sessions() != 0 {
				t.Errorf("session %q, %d open: the stateless era opens none", cs.ID(), f.srv.Sessions())
			}
			store.mu.Lock()
			if len(store.recs) != 1 {
				t.Fatalf("%d records, want 1", len(store.recs))
			}
			if diff := cmp.Diff(wield.Caller{ID: "mcp:tester", Type: wield.CallerDirect}, store.recs[0].Call.Caller); diff != "" {
				t.Errorf("caller (-want +got):\n%s", diff)
			}
			store.mu.Unlock()

			old := srvConnect(t, f, srvStateful, tt.path, nil)
			if got := old.InitializeResult().ProtocolVersion; got != "2025-11-25" || old.ID() == "" {
				t.Errorf("handshake client: protocol %q, session %q; want 2025-11-25 and a session", got, old.ID())
			}
			if diff := cmp.Diff(tt.want, srvViewOf(srvCall(t, old, tt.tool, map[string]any{"message": "hi"}))); diff != "" {
				t.Errorf("tools/call of the handshake client (-want +got):\n%s", diff)
			}
			if n := f.srv.Sessions(); n != 1 {
				t.Errorf("%d sessions open, want the handshake client's", n)
			}
		})
	}
}

// TestServerStatelessEraStdio checks that the stateless era is served over
// stdio too: the go-sdk serves it on any transport but streamable HTTP's
// stateful handler.
func TestServerStatelessEraStdio(t *testing.T) {
	store := &srvRecords{}
	f := srvNew(t, nil, &engine.Options{Store: store})
	cs := srvConnect(t, f, srvStdio2026, "", nil)
	if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", got)
	}
	if diff := cmp.Diff([]string{"echo", "fail", "shout", "wipe"}, srvNames(t, cs)); diff != "" {
		t.Errorf("tools/list (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(srvView{Text: []string{"HI"}}, srvViewOf(srvCall(t, cs, "shout", map[string]any{"message": "hi"}))); diff != "" {
		t.Errorf("tools/call (-want +got):\n%s", diff)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.recs) != 1 || store.recs[0].Call.Caller.ID != "mcp:tester" {
		t.Errorf("records %+v, want one call by mcp:tester", store.recs)
	}
}

// TestServerStatelessEraUnknownTool checks that a tool of another toolset is
// as unknown to the stateless era as to the handshake.
func TestServerStatelessEraUnknownTool(t *testing.T) {
	f := srvNew(t, nil, nil)
	cs := srvConnect(t, f, srvEra2026, "/mcp/loud", nil)
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err == nil {
		t.Fatalf("echo on /mcp/loud: %+v, want an error", srvViewOf(res))
	}
}

// TestServerStatelessEraSteersAskingClients checks that a client able to
// elicit is steered to the handshake, where a confirm tool asks it, unless
// the server offers only the stateless era.
func TestServerStatelessEraSteersAskingClients(t *testing.T) {
	tests := []struct {
		name     string
		versions []string
		want     string
	}{
		{"both eras offered", nil, "2025-11-25"},
		{"only 2026-07-28 offered", []string{"2026-07-28"}, "2026-07-28"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := srvNew(t, &mcpbridge.ServerOptions{ProtocolVersions: tt.versions}, nil)
			var mu sync.Mutex
			var asked []string
			cs := srvConnect(t, f, srvEra2026, "/mcp", srvAnswer("accept", map[string]any{"approve": true}, &asked, &mu))
			if got := cs.InitializeResult().ProtocolVersion; got != tt.want {
				t.Errorf("negotiated %q, want %q", got, tt.want)
			}
			if diff := cmp.Diff(srvView{Text: []string{`{"echo":"hi"}`}, Structured: `{"echo":"hi"}`}, srvViewOf(srvCall(t, cs, "echo", map[string]any{"message": "hi"}))); diff != "" {
				t.Errorf("tools/call (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerStatelessEraNotOffered checks that a server whose
// ProtocolVersions leave out 2026-07-28 makes the go-sdk client fall back
// to the handshake.
func TestServerStatelessEraNotOffered(t *testing.T) {
	f := srvNew(t, &mcpbridge.ServerOptions{ProtocolVersions: []string{"2025-11-25", "2025-06-18"}}, nil)
	cs := srvConnect(t, f, srvEra2026, "/mcp", nil)
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" || cs.ID() == "" {
		t.Errorf("protocol %q, session %q; want 2025-11-25 and a session", got, cs.ID())
	}
}

// TestServerStatelessEraConfirm checks that a confirm tool called in the
// stateless era, which forbids asking the client mid-call, neither runs
// unapproved nor waits unbounded: it waits in the approval inbox like any
// caller that cannot be asked, tells a client following its progress so,
// and its approval's expiry denies it.
func TestServerStatelessEraConfirm(t *testing.T) {
	const notice = "waiting for approval"
	tests := []struct {
		name   string
		decide *bool // the inbox's decision; nil: none, the approval expires
		want   srvView
	}{
		{"approved", new(true), srvView{Text: []string{"wiped disk"}}},
		{"denied", new(false), srvView{Text: []string{"Error: The user denied the call of tool 'wipe': by the inbox"}, IsError: true}},
		{"never decided", nil, srvView{Text: []string{"Error: Approval for tool 'wipe' was not given: expired"}, IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			inboxed := 0
			var inbox *memstore.Approvals
			inbox = memstore.NewApprovals(func(req *wield.ApprovalRequest) {
				mu.Lock()
				inboxed++
				mu.Unlock()
				if tt.decide != nil {
					if err := inbox.Decide(req.ID, req.Digest, wield.Decision{Approved: *tt.decide, Reason: "by the inbox"}); err != nil {
						t.Error(err)
					}
				}
			})
			timeout := time.Duration(0)
			if tt.decide == nil {
				timeout = 200 * time.Millisecond
			}
			f := srvNew(t, nil, &engine.Options{Approver: mcpbridge.NewApprover(inbox), ApprovalTimeout: timeout})
			var progress []string
			copts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				progress = append(progress, r.Params.Message)
				mu.Unlock()
			}}
			cs := srvConnect(t, f, srvEra2026, "/mcp", copts)
			if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
				t.Fatalf("negotiated %q, want 2026-07-28", got)
			}
			ctx, cancel := context.WithTimeout(context.Background(), srvWait)
			defer cancel()
			p := &mcp.CallToolParams{Name: "wipe", Arguments: map[string]any{"message": "disk"}}
			p.SetProgressToken("t1")
			res, err := cs.CallTool(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, srvViewOf(res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			// The client handles notifications on its own time.
			srvEventually(t, "a progress notice saying what the call waits for", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return slices.ContainsFunc(progress, func(m string) bool { return strings.HasPrefix(m, notice) })
			})
			mu.Lock()
			defer mu.Unlock()
			if inboxed != 1 {
				t.Errorf("requests in the inbox: %d, want 1", inboxed)
			}
		})
	}
}

// srvEraHeaders are the headers 2026-07-28 requires of a request: the
// version, the method and, when name is not "", Mcp-Name.
func srvEraHeaders(method, name string) []string {
	hdr := []string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method}
	if name != "" {
		hdr = append(hdr, "Mcp-Name", name)
	}
	return hdr
}

// srvSetEraHeaders sets on h what a client of 2026-07-28 sends with a
// request: the content types and srvEraHeaders.
func srvSetEraHeaders(h http.Header, method, name string) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	hdr := srvEraHeaders(method, name)
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
}

// srvEraBodyOf is a request of the 2026-07-28 era: params carrying the
// era's _meta, the version, the client's capabilities caps and, when
// client is not "", its clientInfo under that name. It is the one builder
// of such requests for the tests that write them as values, not text.
func srvEraBodyOf(id any, method string, params, caps map[string]any, client string) []byte {
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	if client != "" {
		meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": client, "version": "1"}
	}
	params["_meta"] = meta
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return body
}

// srvEraSend posts srvEraBodyOf's request to h, with the era's headers
// (name in Mcp-Name).
func srvEraSend(h http.Handler, id any, method, name string, params, caps map[string]any, client string) *httptest.ResponseRecorder {
	return srvPost(h, string(srvEraBodyOf(id, method, params, caps, client)), srvEraHeaders(method, name)...)
}

// srvEraPost sends a request of the 2026-07-28 era to h, with the headers
// the revision requires (Mcp-Name from the body's name), and reads the
// answer as the wire carried it.
func srvEraPost(t *testing.T, h http.Handler, body string) srvReply {
	t.Helper()
	var probe struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal([]byte(body), &probe)
	w := srvPost(h, body, srvEraHeaders(probe.Method, probe.Params.Name)...)
	raw := w.Body.Bytes()
	ct := w.Header().Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") {
		var data []byte
		for line := range strings.SplitSeq(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && len(d) > 0 && d[0] == '{' {
				data = []byte(d)
			}
		}
		raw = data
	}
	r := srvReply{status: w.Code, contentType: ct}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			t.Fatalf("reply to %s: %v: %q", body, err, raw)
		}
	}
	return r
}

// TestServerEraFastPathAnswersAsSDK sends the same requests of the
// 2026-07-28 era to a server with its fast path and to one without, on
// /mcp and on a toolset's endpoint, and compares the answers.
func TestServerEraFastPathAnswersAsSDK(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	requests := []struct {
		body string
		fast bool // the fast path answers it
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, true},
		{`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},` + meta + `}}`, true},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shout","arguments":{"message":"<hi>"},` + meta + `}}`, true},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shout","arguments":{"message":["a"]},` + meta + `}}`, true},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fail","arguments":{"message":"x"},` + meta + `}}`, true},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"shout",` + meta + `}}`, true},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},` + meta + `}}`, false},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"shout","arguments":{"message":"p"},"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, false},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"shout","arguments":{"message":"p"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, false},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"shout","arguments":{"message":"p"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":7,"io.modelcontextprotocol/clientCapabilities":{}}}}`, false},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"cursor":"bogus",` + meta + `}}`, false},
		{`{"jsonrpc":"2.0","id":12,"method":"server/discover","params":{` + meta + `}}`, false},
	}
	for _, path := range []string{"/mcp", "/mcp/loud"} {
		t.Run(path, func(t *testing.T) {
			handlers := map[bool]http.Handler{}
			for _, disabled := range []bool{false, true} {
				f := srvNew(t, &mcpbridge.ServerOptions{DisableFastPath: disabled}, nil)
				handlers[disabled] = f.srv.Handler()
			}
			for _, rq := range requests {
				body := rq.body
				fast, sdk := srvEraPostTo(t, handlers[false], path, body), srvEraPostTo(t, handlers[true], path, body)
				if sdk.body == nil {
					t.Errorf("%s: no answer from the SDK path (status %d)", body, sdk.status)
				}
				if diff := cmp.Diff(srvNormal(sdk.body), srvNormal(fast.body)); diff != "" {
					t.Errorf("%s: answer (-sdk +fast):\n%s", body, diff)
				}
				if sdk.status != fast.status {
					t.Errorf("%s: status %d with the fast path, %d without", body, fast.status, sdk.status)
				}
				if got := fast.contentType == "application/json" && fast.status == http.StatusOK; got != rq.fast && !(path == "/mcp/loud" && !got) {
					t.Errorf("%s: answered by the fast path: %v, want %v", body, got, rq.fast)
				}
			}
		})
	}
}

// srvEraPostTo is srvEraPost to path.
func srvEraPostTo(t *testing.T, h http.Handler, path, body string) srvReply {
	t.Helper()
	return srvEraPost(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = path
		h.ServeHTTP(w, r)
	}), body)
}

// TestServerStatelessEraListenBounded checks that a subscriptions/listen
// stream, which stays open as long as its client wants, takes a place
// among the client's sessions: past MaxSessionsPerClient the next is
// refused (429), and one that ended gives its place back.
func TestServerStatelessEraListenBounded(t *testing.T) {
	f := srvNew(t, &mcpbridge.ServerOptions{MaxSessionsPerClient: 1}, nil)
	h := f.srv.Handler()
	// listen opens a stream until ctx ends, or until refused, and returns
	// the status; started is closed once the server answers.
	listen := func(ctx context.Context, started chan struct{}) int {
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		r.Host = "127.0.0.1"
		r.RemoteAddr = "127.0.0.1:1234"
		srvSetEraHeaders(r.Header, "subscriptions/listen", "")
		w := &srvStartedWriter{ResponseRecorder: httptest.NewRecorder(), started: started}
		h.ServeHTTP(w, r)
		w.start()
		return w.Code
	}
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	first, started := make(chan int, 1), make(chan struct{})
	go func() { first <- listen(ctx, started) }()
	<-started
	if code := listen(ctx, make(chan struct{})); code != http.StatusTooManyRequests {
		t.Errorf("a second stream while the first is open: %d, want 429", code)
	}
	// Calls take no place.
	srvCall(t, srvConnect(t, f, srvEra2026, "/mcp", nil), "echo", map[string]any{"message": "hi"})
	cancel() // the client ends the first stream
	if code := <-first; code != http.StatusOK {
		t.Errorf("the first stream: %d, want 200", code)
	}
	// A stream after the first ended has its place, until Close ends it.
	started2, second := make(chan struct{}), make(chan int, 1)
	go func() { second <- listen(context.Background(), started2) }()
	<-started2
	f.srv.Close()
	select {
	case code := <-second:
		if code != http.StatusOK {
			t.Errorf("a stream after the first ended: %d, want 200", code)
		}
	case <-time.After(srvWait):
		t.Fatal("Close did not end the stream")
	}
}

// srvStartedWriter is a recorder that tells when the server began to
// answer.
type srvStartedWriter struct {
	*httptest.ResponseRecorder
	once    sync.Once
	started chan struct{}
}

func (w *srvStartedWriter) start() { w.once.Do(func() { close(w.started) }) }

func (w *srvStartedWriter) WriteHeader(code int) { w.ResponseRecorder.WriteHeader(code); w.start() }

func (w *srvStartedWriter) Flush() { w.ResponseRecorder.Flush(); w.start() }
