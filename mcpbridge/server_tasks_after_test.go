package mcpbridge_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// TestServerTaskAfter: with TaskAfter, a call of a tool not marked task,
// from a 2026-07-28 client that declared the Tasks extension, that ends in
// time is answered plainly; one still running then is answered with a task
// whose ID is the call's, and goes on as that task to its one record. A
// client without the extension, or one asking for progress, waits for the
// plain result; without TaskAfter nothing becomes a task.
func TestServerTaskAfter(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	type nap struct {
		MS int `json:"ms"`
	}
	var runs atomic.Int32
	sleepy := wield.Func("sleepy", "Sleeps ms milliseconds.", func(ctx context.Context, a nap) (string, error) {
		runs.Add(1)
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
			return "rested", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store, TaskAfter: 200 * time.Millisecond}, &engine.Options{Store: store}, sleepy)
	h := f.srv.Handler()
	call := func(ms int, speaks bool) (taskReply, time.Duration) {
		start := time.Now()
		r := taskPost(t, h, "tools/call", "sleepy", map[string]any{"name": "sleepy", "arguments": map[string]any{"ms": ms}}, speaks)
		return r, time.Since(start)
	}

	quick, _ := call(10, true)
	if quick.Error != nil || quick.Result.ResultType != "complete" || len(quick.Result.Content) != 1 || quick.Result.Content[0].Text != "rested" || quick.Result.Meta.CallID == "" {
		t.Fatalf("a call ending before TaskAfter = %+v, want the plain result", quick)
	}

	if _, err := store.CallIDReservedAt(ctx, quick.Result.Meta.CallID); err == nil {
		t.Errorf("a call answered plainly before TaskAfter had its ID reserved (a store write it does not need)")
	}

	long, took := call(1500, true)
	if long.Error != nil || long.Result.ResultType != "task" || long.Result.Status != "working" || long.Result.TaskID == "" {
		t.Fatalf("a call past TaskAfter = %+v, want a working task", long)
	}
	if took < 200*time.Millisecond || took > 1200*time.Millisecond {
		t.Errorf("the task came %v after the call, want about TaskAfter (200ms)", took)
	}
	if _, err := store.CallIDReservedAt(ctx, long.Result.TaskID); err != nil {
		t.Errorf("a call become a task is answered before its ID is reserved (other servers would not know it): %v", err)
	}
	done := taskUntil(t, h, long.Result.TaskID, "completed")
	if done.Result.Inner == nil || len(done.Result.Inner.Content) != 1 || done.Result.Inner.Content[0].Text != "rested" {
		t.Fatalf("completed task = %+v", done.Result)
	}
	rec, err := store.Call(ctx, long.Result.TaskID)
	if err != nil || !rec.Result.OK || rec.Call.Tool != "sleepy" {
		t.Fatalf("the task's record: %+v, %v; want the call itself, under the task's ID", rec, err)
	}
	if runs.Load() != 2 {
		t.Errorf("the tool ran %d times for two calls", runs.Load())
	}

	// A client without the extension waits for the plain result.
	plain, took := call(400, false)
	if plain.Result.ResultType != "complete" || len(plain.Result.Content) != 1 || took < 400*time.Millisecond {
		t.Errorf("a client without tasks = %+v after %v, want the plain result after the call", plain, took)
	}

	// A call that asks for progress on its response stream stays plain.
	meta := `"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	start := time.Now()
	w := srvPost(h, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleepy","arguments":{"ms":400},`+meta+`}}`,
		srvEraHeaders("tools/call", "sleepy")...)
	if body := w.Body.String(); !strings.Contains(body, `"resultType":"complete"`) || !strings.Contains(body, "rested") || time.Since(start) < 400*time.Millisecond {
		t.Errorf("a call with a progress token = %s after %v, want the plain result", body, time.Since(start))
	}

	// Without TaskAfter, no task.
	g := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, sleepy)
	r := taskPost(t, g.srv.Handler(), "tools/call", "sleepy", map[string]any{"name": "sleepy", "arguments": map[string]any{"ms": 400}}, true)
	if r.Result.ResultType != "complete" {
		t.Errorf("without TaskAfter = %+v, want the plain result", r)
	}
}

// TestServerTaskTraced: when the server traces, a call become a task has
// its tools/call span, which ends when the task ends (not when its request
// is answered), with the call's outcome.
func TestServerTaskTraced(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	type nap struct {
		MS int `json:"ms"`
	}
	sleepy := wield.Func("sleepy", "Sleeps ms milliseconds.", func(ctx context.Context, a nap) (string, error) {
		time.Sleep(time.Duration(a.MS) * time.Millisecond)
		return "rested", nil
	})
	ended := make(chan string, 4)
	trace := func(ctx context.Context, r mcpbridge.TraceRequest) (context.Context, func(string)) {
		return ctx, func(errorType string) { ended <- r.Tool + ":" + errorType }
	}
	h := srvNew(t, &mcpbridge.ServerOptions{Calls: store, TaskAfter: 100 * time.Millisecond, Trace: trace}, &engine.Options{Store: store}, sleepy).srv.Handler()
	r := taskPost(t, h, "tools/call", "sleepy", map[string]any{"name": "sleepy", "arguments": map[string]any{"ms": 600}}, true)
	if r.Result.ResultType != "task" {
		t.Fatalf("tools/call = %+v, want a task", r)
	}
	select {
	case e := <-ended:
		t.Fatalf("the span ended (%s) when the task was answered, before the call", e)
	default:
	}
	select {
	case e := <-ended:
		if e != "sleepy:" {
			t.Errorf("span ended as %q, want sleepy's, ok", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the task's span never ended")
	}
}
