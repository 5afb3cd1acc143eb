package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// TestImportTaskWield checks that a wield importing a wield whose tool runs
// only as a task (2026-07-28, the tasks extension) calls it as a normal
// call, and that a call that times out cancels the task, whose record then
// says canceled.
func TestImportTaskWield(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "inner.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	stopped := make(chan error, 1)
	must := wield.Func("must", "Always a task.", func(ctx context.Context, in struct {
		Wait bool `json:"wait"`
	}) (string, error) {
		if !in.Wait {
			return "done <ok>", nil
		}
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return "", ctx.Err()
	})
	must.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, must)
	hs := httptest.NewServer(f.srv.Handler())
	defer hs.Close()

	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(ctx, mcpbridge.ServerConfig{Name: "inner", URL: hs.URL + "/mcp", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	want := impOutcome{OK: true, Output: `"done <ok>"`}
	for i := range 2 { // the first learns that the tool wants a task, the second knows
		if diff := cmp.Diff(want, impOutcomeOf(impCall(t, e, "inner__must", `{"wait":false}`))); diff != "" {
			t.Errorf("call %d (-want +got):\n%s", i, diff)
		}
	}

	// The outer call times out: the inner task is canceled.
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := e.Call(cctx, wield.Call{Tool: "inner__must", Arguments: json.RawMessage(`{"wait":true}`), Timeout: 300 * time.Millisecond})
	if err != nil || res.ErrorType != wield.ErrTimeout {
		t.Fatalf("call past its timeout = %+v, %v, want a timeout", res, err)
	}
	select {
	case cause := <-stopped:
		if !errors.Is(cause, wield.ErrCallerCanceled) {
			t.Errorf("the inner tool stopped with %v, want the client's cancellation", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the inner task was not canceled")
	}
	impEventually(t, "the inner record says canceled", func() bool {
		page, err := store.Calls(ctx, wield.CallQuery{Tool: "must", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			if r.Result != nil && r.Result.ErrorType == wield.ErrCanceled {
				return true
			}
		}
		return false
	})
}

// taskPeer is a hand-written MCP server of 2025-11-25 whose tool "long"
// runs only as a task; each test decides what its tasks do.
type taskPeer struct {
	t       *testing.T
	mu      sync.Mutex
	polls   []time.Time // of tasks/get
	cancels []string    // task IDs of tasks/cancel
	calls   atomic.Int64
	// task answers a tools/call with a task (its fields); get answers a
	// tasks/get (n counts them from 1); result answers tasks/result.
	task   func() map[string]any
	get    func(id string, n int) map[string]any
	result func(id string) (any, *jsonrpcError)
	// caps: the server declares tasks for tools/call.
	caps bool
	// era2026: the server speaks 2026-07-28 and the tasks extension; its
	// tasks' fields are the extension's.
	era2026 bool
	// flood: tasks/get answers with an event stream of so many progress
	// notifications before the answer.
	flood   int
	updates []json.RawMessage // inputResponses of tasks/update
	// outputSchema is the tool "long"'s, nil for none.
	outputSchema map[string]any
}

type jsonrpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (p *taskPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		if r.Method == http.MethodDelete {
			return
		}
		http.Error(w, "no stream", http.StatusMethodNotAllowed)
		return
	}
	var q struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name   string         `json:"name"`
			TaskID string         `json:"taskId"`
			Task   map[string]any `json:"task"`
			Meta   struct {
				Caps struct {
					Extensions map[string]any `json:"extensions"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
			InputResponses json.RawMessage `json:"inputResponses"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	if q.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	var rerr *jsonrpcError
	speaks := q.Params.Meta.Caps.Extensions[mcpbridge.TasksExtension] != nil
	switch q.Method {
	case "server/discover":
		if !p.era2026 {
			rerr = &jsonrpcError{Code: -32601, Message: "method not found"}
			break
		}
		result = map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
			"capabilities": map[string]any{"tools": map[string]any{}, "extensions": map[string]any{mcpbridge.TasksExtension: map[string]any{}}},
			"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "peer", "version": "1"}}}
	case "tasks/update":
		p.mu.Lock()
		p.updates = append(p.updates, q.Params.InputResponses)
		p.mu.Unlock()
		result = map[string]any{"resultType": "complete"}
	case "initialize":
		caps := map[string]any{"tools": map[string]any{}}
		if p.caps {
			caps["tasks"] = map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}, "cancel": map[string]any{}}
		}
		w.Header().Set("Mcp-Session-Id", "peer-session")
		result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": map[string]any{"name": "peer", "version": "1"}}
	case "ping":
		result = map[string]any{}
	case "tools/list":
		long := map[string]any{"name": "long", "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "required"},
			"annotations": map[string]any{"readOnlyHint": true}}
		if p.outputSchema != nil {
			long["outputSchema"] = p.outputSchema
		}
		result = map[string]any{"tools": []any{
			long,
			map[string]any{"name": "plain", "inputSchema": map[string]any{"type": "object"}, "annotations": map[string]any{"readOnlyHint": true}},
		}}
	case "tools/call":
		p.calls.Add(1)
		switch {
		case q.Params.Name == "plain":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "plain"}}}
		case p.era2026 && !speaks:
			rerr = &jsonrpcError{Code: mcpbridge.CodeMissingCapability, Message: "long runs only as a task", Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + mcpbridge.TasksExtension + `":{}}}}`)}
		case p.era2026:
			m := p.task()
			m["resultType"] = "task"
			result = m
		case q.Params.Task == nil:
			rerr = &jsonrpcError{Code: -32600, Message: "long runs only as a task"}
		default:
			result = map[string]any{"task": p.task()}
		}
	case "tasks/get":
		p.mu.Lock()
		p.polls = append(p.polls, time.Now())
		n := len(p.polls)
		p.mu.Unlock()
		m := p.get(q.Params.TaskID, n)
		if p.era2026 {
			m["resultType"] = "complete"
		}
		result = m
	case "tasks/result":
		result, rerr = p.result(q.Params.TaskID)
	case "tasks/cancel":
		p.mu.Lock()
		p.cancels = append(p.cancels, q.Params.TaskID)
		p.mu.Unlock()
		result = map[string]any{"taskId": q.Params.TaskID, "status": "cancelled", "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": nil}
	default:
		rerr = &jsonrpcError{Code: -32601, Message: "method not found"}
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": q.ID}
	if rerr != nil {
		msg["error"] = rerr
	} else {
		msg["result"] = result
	}
	if q.Method == "tasks/get" && p.flood > 0 {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range p.flood {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"nobody\",\"progress\":%d}}\n\n", i)
		}
		b, _ := json.Marshal(msg)
		fmt.Fprintf(w, "data: %s\n\n", b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(msg)
}

func (p *taskPeer) pollTimes() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.polls...)
}

func (p *taskPeer) canceled() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cancels...)
}

// extTaskOf is a task of the extension.
func extTaskOf(id, status string, poll any) map[string]any {
	m := map[string]any{"taskId": id, "status": status, "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": nil}
	if poll != nil {
		m["pollIntervalMs"] = poll
	}
	return m
}

func taskOf(id, status string, poll any) map[string]any {
	m := map[string]any{"taskId": id, "status": status, "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000}
	if poll != nil {
		m["pollInterval"] = poll
	}
	return m
}

func textResult(s string) (any, *jsonrpcError) {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}, nil
}

// taskPeerStart serves p and imports it as server "peer".
func taskPeerStart(t *testing.T, p *taskPeer, cfg mcpbridge.ServerConfig) *engine.Engine {
	t.Helper()
	hs := httptest.NewServer(p)
	t.Cleanup(hs.Close)
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	cfg.Name, cfg.URL, cfg.Enabled = "peer", hs.URL+"/mcp", true
	if err := im.Add(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return impEngine(t, reg)
}

// TestImportTaskCore checks the 2025-11-25 form against a hand-written
// server: a task that completes, one that fails with the tool's error,
// one whose server cancels it, and a required tool on a server that does
// not declare tasks.
func TestImportTaskCore(t *testing.T) {
	p := &taskPeer{t: t, caps: true,
		task: func() map[string]any { return taskOf("t-1", "working", 10) },
		get: func(id string, n int) map[string]any {
			if n < 3 {
				return taskOf(id, "working", 10)
			}
			return taskOf(id, "completed", 10)
		},
		result: func(string) (any, *jsonrpcError) { return textResult(`{"answer":42}`) },
	}
	e := taskPeerStart(t, p, mcpbridge.ServerConfig{})
	if diff := cmp.Diff(impOutcome{OK: true, Output: `{"answer":42}`}, impOutcomeOf(impCall(t, e, "peer__long", `{}`))); diff != "" {
		t.Errorf("completed task (-want +got):\n%s", diff)
	}
	if got := len(p.pollTimes()); got != 3 {
		t.Errorf("tasks/get sent %d times, want 3", got)
	}
	if got := impOutcomeOf(impCall(t, e, "peer__plain", `{}`)); !got.OK || got.Output != `"plain"` {
		t.Errorf("plain tool = %+v", got)
	}

	// failed: tasks/result gives the tool's error result.
	p.result = func(string) (any, *jsonrpcError) {
		return map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "no such city"}}}, nil
	}
	p.get = func(id string, _ int) map[string]any { return taskOf(id, "failed", 10) }
	if diff := cmp.Diff(impOutcome{ErrorType: wield.ErrExecution, Error: "no such city"}, impOutcomeOf(impCall(t, e, "peer__long", `{}`))); diff != "" {
		t.Errorf("failed task (-want +got):\n%s", diff)
	}
	// cancelled by the server.
	p.get = func(id string, _ int) map[string]any {
		m := taskOf(id, "cancelled", 10)
		m["statusMessage"] = "operator stopped it"
		return m
	}
	want := impOutcome{ErrorType: wield.ErrExecution, Error: `MCP server "peer" cancelled the task: operator stopped it (tool "long")`}
	if diff := cmp.Diff(want, impOutcomeOf(impCall(t, e, "peer__long", `{}`))); diff != "" {
		t.Errorf("task cancelled by the server (-want +got):\n%s", diff)
	}
	// input_required, and no one to ask: the call fails, the task is
	// canceled.
	p.get = func(id string, _ int) map[string]any { return taskOf(id, "input_required", 10) }
	got := impOutcomeOf(impCall(t, e, "peer__long", `{}`))
	if got.ErrorType != wield.ErrExecution || !strings.Contains(got.Error, "has no one to ask; the task was canceled") {
		t.Errorf("input_required = %+v", got)
	}
	if c := p.canceled(); len(c) != 1 || c[0] != "t-1" {
		t.Errorf("tasks/cancel = %q, want the task asking for input canceled", c)
	}

	// A required tool on a server that does not declare tasks: a clear
	// error, the server not asked.
	q := &taskPeer{t: t}
	e2 := taskPeerStart(t, q, mcpbridge.ServerConfig{})
	got = impOutcomeOf(impCall(t, e2, "peer__long", `{}`))
	if got.ErrorType != wield.ErrExecution || !strings.Contains(got.Error, "runs only as a task (execution.taskSupport: required), but does not declare tasks") || q.calls.Load() != 0 {
		t.Errorf("required tool without the capability = %+v (%d calls)", got, q.calls.Load())
	}
}

// TestImportTaskHostile checks that a server's tasks cannot hold wield:
// one that never ends is canceled by the call's timeout, garbage IDs and
// statuses fail the call, a pollInterval of 0 or 1e12 is bounded, and a
// result over MaxResponse is not read.
func TestImportTaskHostile(t *testing.T) {
	t.Parallel() // seconds of waiting on a peer's task, little CPU: overlaps the others
	t.Run("never ends", func(t *testing.T) {
		p := &taskPeer{t: t, caps: true,
			task:   func() map[string]any { return taskOf("forever", "working", 0) },
			get:    func(id string, _ int) map[string]any { return taskOf(id, "working", 0) },
			result: func(string) (any, *jsonrpcError) { return textResult("never") },
		}
		e := taskPeerStart(t, p, mcpbridge.ServerConfig{})
		start := time.Now()
		res, err := e.Call(context.Background(), wield.Call{Tool: "peer__long", Timeout: time.Second})
		took := time.Since(start)
		if err != nil || res.ErrorType != wield.ErrTimeout {
			t.Fatalf("call of a task that never ends = %+v, %v, want a timeout", res, err)
		}
		if took > 5*time.Second {
			t.Errorf("the call took %s past its 1 s timeout", took)
		}
		impEventually(t, "the task is canceled", func() bool { return len(p.canceled()) == 1 })
		// pollInterval 0: polled no more often than TaskPollMin.
		polls := p.pollTimes()
		t.Logf("pollInterval 0: %d polls in the call's 1 s, canceled %s after the timeout", len(polls), took-time.Second)
		if max := int(time.Second/mcpbridge.TaskPollMin) + 2; len(polls) > max {
			t.Errorf("%d polls in 1 s with pollInterval 0, want at most %d", len(polls), max)
		}
		for i := 1; i < len(polls); i++ {
			if d := polls[i].Sub(polls[i-1]); d < mcpbridge.TaskPollMin-5*time.Millisecond {
				t.Errorf("polls %d and %d %s apart, under TaskPollMin", i-1, i, d)
			}
		}
	})
	t.Run("lies about its interval", func(t *testing.T) {
		p := &taskPeer{t: t, caps: true,
			task: func() map[string]any { return taskOf("slow", "working", 1e12) },
			get: func(id string, n int) map[string]any {
				return taskOf(id, "completed", 1e12)
			},
			result: func(string) (any, *jsonrpcError) { return textResult("late") },
		}
		e := taskPeerStart(t, p, mcpbridge.ServerConfig{})
		start := time.Now()
		got := impOutcomeOf(impCall(t, e, "peer__long", `{}`))
		took := time.Since(start)
		t.Logf("pollInterval 1e12: the result after %s", took)
		if !got.OK || took > mcpbridge.TaskPollMax+2*time.Second {
			t.Errorf("pollInterval 1e12: %+v after %s, want the result within TaskPollMax", got, took)
		}
	})
	garbage := []struct {
		name string
		task map[string]any
		get  func(id string, n int) map[string]any
		want string
	}{
		{"empty ID", taskOf("", "working", 10), nil, "a task without an ID"},
		{"huge ID", taskOf(strings.Repeat("x", 10000), "working", 10), nil, "a task ID of 10000 bytes"},
		{"control ID", taskOf("a\x1b[2Jb", "working", 10), nil, "a task ID with control characters"},
		{"unknown status", taskOf("g", "dancing", 10), nil, `a task status "dancing" that MCP does not define`},
		// Shown to 32 bytes: "w", then "é"s of 2 bytes, the 16th across the
		// cut, which the message once split ("\xc3").
		{"long status", taskOf("g", "w"+strings.Repeat("é", 40), 10), nil, `a task status "w` + strings.Repeat("é", 15) + `…" that MCP does not define`},
		{"another ID", taskOf("g", "working", 10), func(string, int) map[string]any { return taskOf("h", "completed", 10) }, "a task of another ID"},
		{"status turns bad", taskOf("g", "working", 10), func(id string, _ int) map[string]any { return taskOf(id, "", 10) }, `a task status "" that MCP does not define`},
	}
	for _, c := range garbage {
		t.Run(c.name, func(t *testing.T) {
			get := c.get
			if get == nil {
				get = func(id string, _ int) map[string]any { return taskOf(id, "completed", 10) }
			}
			p := &taskPeer{t: t, caps: true, task: func() map[string]any { return c.task }, get: get,
				result: func(string) (any, *jsonrpcError) { return textResult("x") }}
			e := taskPeerStart(t, p, mcpbridge.ServerConfig{})
			got := impOutcomeOf(impCall(t, e, "peer__long", `{}`))
			if got.ErrorType != wield.ErrExecution || !strings.Contains(got.Error, c.want) || !strings.Contains(got.Error, "misbehaving") {
				t.Errorf("got %+v, want an execution error saying %q", got, c.want)
			}
			if strings.ContainsRune(got.Error, 0x1b) {
				t.Errorf("the error echoes a control character: %q", got.Error)
			}
		})
	}
	t.Run("huge result", func(t *testing.T) {
		big := strings.Repeat("y", 1<<20)
		p := &taskPeer{t: t, caps: true,
			task:   func() map[string]any { return taskOf("big", "working", 10) },
			get:    func(id string, _ int) map[string]any { return taskOf(id, "completed", 10) },
			result: func(string) (any, *jsonrpcError) { return textResult(big) },
		}
		e := taskPeerStart(t, p, mcpbridge.ServerConfig{MaxResponse: 64 << 10})
		got := impOutcomeOf(impCall(t, e, "peer__long", `{}`))
		if got.OK || got.ErrorType != wield.ErrExecution || !strings.Contains(got.Error, "over the 65536-byte limit") {
			t.Errorf("result over MaxResponse = %+v", impOutcome{OK: got.OK, ErrorType: got.ErrorType, Error: got.Error})
		}
	})
}

// TestImportTaskExtension checks the 2026-07-28 form against a
// hand-written server: the call refused with -32021 is made again as a
// task, whose result tasks/get carries; a failed task's error, a task that
// asks for input (answered through Elicit with tasks/update, or failing
// the call and canceled without it), and a flood of notifications on the
// tasks/get stream.
func TestImportTaskExtension(t *testing.T) {
	result := map[string]any{"content": []any{map[string]any{"type": "text", "text": "extended"}}}
	p := &taskPeer{t: t, era2026: true,
		task: func() map[string]any { return extTaskOf("x-1", "working", 10) },
		get: func(id string, n int) map[string]any {
			if n%2 == 1 {
				return extTaskOf(id, "working", 10)
			}
			m := extTaskOf(id, "completed", 10)
			m["result"] = result
			return m
		},
	}
	e := taskPeerStart(t, p, mcpbridge.ServerConfig{})
	for i := range 2 {
		if got := impOutcomeOf(impCall(t, e, "peer__long", `{}`)); !cmp.Equal(impOutcome{OK: true, Output: `"extended"`}, got) {
			t.Errorf("call %d = %+v", i, got)
		}
	}
	if got := p.calls.Load(); got != 3 {
		t.Errorf("tools/call sent %d times, want 3 (refused, then two tasks)", got)
	}
	if got := impOutcomeOf(impCall(t, e, "peer__plain", `{}`)); !got.OK {
		t.Errorf("plain tool of the 2026 server = %+v", got)
	}

	// failed: the error the task carries.
	p.get = func(id string, _ int) map[string]any {
		m := extTaskOf(id, "failed", 10)
		m["error"] = map[string]any{"code": -32603, "message": "backend exploded"}
		return m
	}
	want := impOutcome{ErrorType: wield.ErrExecution, Error: `MCP server "peer" failed the task: backend exploded (tool "long")`}
	if diff := cmp.Diff(want, impOutcomeOf(impCall(t, e, "peer__long", `{}`))); diff != "" {
		t.Errorf("failed task (-want +got):\n%s", diff)
	}

	// input_required without anyone to ask: the call fails, the task is
	// canceled.
	// ask asks for a city until peer has had an answer.
	ask := func(peer *taskPeer) func(string, int) map[string]any {
		return func(id string, _ int) map[string]any {
			peer.mu.Lock()
			answered := len(peer.updates) > 0
			peer.mu.Unlock()
			if !answered {
				m := extTaskOf(id, "input_required", 10)
				m["inputRequests"] = map[string]any{"city": map[string]any{"method": "elicitation/create", "params": map[string]any{
					"mode": "form", "message": "Which city?",
					"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "default": "Lyon"}}},
				}}}
				return m
			}
			m := extTaskOf(id, "completed", 10)
			m["result"] = result
			return m
		}
	}
	p.get = ask(p)
	got := impOutcomeOf(impCall(t, e, "peer__long", `{}`))
	if got.ErrorType != wield.ErrExecution || !strings.Contains(got.Error, "has no one to ask") {
		t.Errorf("input_required without Elicit = %+v", got)
	}
	if c := p.canceled(); len(c) != 1 || c[0] != "x-1" {
		t.Errorf("tasks/cancel = %q, want the task canceled", c)
	}

	// With Elicit: answered by tasks/update, and the task completes.
	q := &taskPeer{t: t, era2026: true, task: p.task}
	q.get = ask(q)
	hs := httptest.NewServer(q)
	defer hs.Close()
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Elicit: mcpbridge.ElicitDefaults})
	if err := im.Add(context.Background(), mcpbridge.ServerConfig{Name: "peer", URL: hs.URL + "/mcp", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e2 := impEngine(t, reg)
	if got := impOutcomeOf(impCall(t, e2, "peer__long", `{}`)); !got.OK {
		t.Errorf("input_required answered through Elicit = %+v", got)
	}
	q.mu.Lock()
	updates := q.updates
	q.mu.Unlock()
	if len(updates) != 1 || string(updates[0]) != `{"city":{"action":"accept","content":{"city":"Lyon"}}}` {
		t.Errorf("tasks/update inputResponses = %s", updates)
	}

	// A flood of notifications on the tasks/get stream: read past, bounded.
	p.flood = 20000
	p.get = func(id string, _ int) map[string]any {
		m := extTaskOf(id, "completed", 10)
		m["result"] = result
		return m
	}
	start := time.Now()
	got = impOutcomeOf(impCall(t, e, "peer__long", `{}`))
	t.Logf("a tasks/get behind 20000 notifications: %s", time.Since(start))
	if !got.OK || time.Since(start) > 10*time.Second {
		t.Errorf("tasks/get behind 20000 notifications = %+v after %s", got, time.Since(start))
	}
}

// TestRelayTaskStatus: the status messages of an imported task reach the
// MCP client that called it as progress notices under its own token.
func TestRelayTaskStatus(t *testing.T) {
	got, copts := srvCollector()
	stage := func(id, msg string) map[string]any {
		m := taskOf(id, "working", 200)
		m["statusMessage"] = msg
		return m
	}
	p := &taskPeer{t: t, caps: true,
		task: func() map[string]any { return stage("s-1", "Gathering sources") },
		get: func(id string, n int) map[string]any {
			switch n {
			case 1:
				return stage(id, "Gathering sources")
			case 2:
				return stage(id, "Writing the report")
			}
			return taskOf(id, "completed", 200)
		},
		result: func(string) (any, *jsonrpcError) { return textResult("report") },
	}
	hs := httptest.NewServer(p)
	defer hs.Close()
	cs := relayChain(t, hs.URL+"/mcp", copts)
	ctx, cancel := context.WithTimeout(t.Context(), srvWait)
	defer cancel()
	params := &mcp.CallToolParams{Name: "up__long", Arguments: map[string]any{}}
	params.SetProgressToken("mine")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if v := srvViewOf(res); strings.Join(v.Text, "") != "report" || v.IsError {
		t.Errorf("result %+v", v)
	}
	want := []string{"mine 1/0 Gathering sources", "mine 2/0 Writing the report"}
	if diff := cmp.Diff(want, srvTake(t, got.progress, 2)); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

// TestImportTaskAsksBounded: a hostile server's task asking thousands of
// questions in one input_required round does not have the importer put
// them all to its person (ElicitFunc): past the questions one task may ask
// (taskMaxInputRounds*8, the rounds' bound times eight) the call fails
// and the task is canceled.
func TestImportTaskAsksBounded(t *testing.T) {
	const many = 5000
	q := &taskPeer{t: t, era2026: true, task: func() map[string]any { return extTaskOf("x-1", "working", 10) }}
	q.get = func(id string, _ int) map[string]any {
		m := extTaskOf(id, "input_required", 10)
		reqs := map[string]any{}
		for i := range many {
			reqs[fmt.Sprintf("q%d", i)] = map[string]any{"method": "elicitation/create", "params": map[string]any{
				"mode": "form", "message": "Which city?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "default": "Lyon"}}},
			}}
		}
		m["inputRequests"] = reqs
		return m
	}
	hs := httptest.NewServer(q)
	defer hs.Close()
	var asked atomic.Int32
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Elicit: func(ctx context.Context, server string, r *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return mcpbridge.ElicitDefaults(ctx, server, r)
	}})
	if err := im.Add(context.Background(), mcpbridge.ServerConfig{Name: "peer", URL: hs.URL + "/mcp", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	got := impOutcomeOf(impCall(t, e, "peer__long", `{}`))
	if got.OK || got.ErrorType != wield.ErrExecution || !strings.Contains(got.Error, "asked for more than 128 inputs during one task") {
		t.Errorf("a task asking %d questions at once = %+v, want the call failed, saying so", many, got)
	}
	if n := asked.Load(); n > 128 {
		t.Errorf("the importer's person was asked %d questions, want at most 128", n)
	}
	impEventually(t, "the task is canceled", func() bool { return len(q.canceled()) == 1 })
}

// TestImportTaskStructuredContent: the result of a tool run as a task is
// checked against the tool's outputSchema as a call's is (one conversion
// of both): a structuredContent that contradicts it is an execution_error,
// one that fits is the output. Before, a task's result was taken as it was.
func TestImportTaskStructuredContent(t *testing.T) {
	structured := func(v any) func(string) (any, *jsonrpcError) {
		return func(string) (any, *jsonrpcError) {
			return map[string]any{"content": []any{}, "structuredContent": v}, nil
		}
	}
	p := &taskPeer{t: t, caps: true,
		outputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number"}}, "required": []any{"n"}},
		task:         func() map[string]any { return taskOf("t-1", "working", 10) },
		get:          func(id string, _ int) map[string]any { return taskOf(id, "completed", 10) },
		result:       structured(map[string]any{"n": "not a number"}),
	}
	e := taskPeerStart(t, p, mcpbridge.ServerConfig{})
	got := impOutcomeOf(impCall(t, e, "peer__long", `{}`))
	if got.ErrorType != wield.ErrExecution || !strings.Contains(got.Error, `answered the call of "long" with structuredContent that does not match the tool's outputSchema`) {
		t.Errorf("a task's result that contradicts the outputSchema = %+v", got)
	}
	p.result = structured(map[string]any{"n": 42})
	if diff := cmp.Diff(impOutcome{OK: true, Output: `{"n":42}`}, impOutcomeOf(impCall(t, e, "peer__long", `{}`))); diff != "" {
		t.Errorf("a task's result that fits (-want +got):\n%s", diff)
	}
}
