package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// TestServerEndWaits: EndWaits (a server shutting down) ends the 2025-11-25
// tasks/result waits for a task that runs on another server sharing the
// store: one answered in JSON gets HTTP 503 with Retry-After, naming the
// task and saying to ask again; one in an event stream closes after the
// task's status, without a result. A tasks/result waiting for a task
// running here goes on, and is answered the result when the task ends.
func TestServerEndWaits(t *testing.T) {
	ctx := context.Background()
	store := srvTaskStore(t)
	release := make(chan struct{})
	slow := srvSlowTask(release, wield.TaskOptional)
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow)
	h := f.srv.Handler()
	c := &coreSession{t: t, h: h}
	if res, e := c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tasks": map[string]any{}},
		"clientInfo": map[string]any{"name": "core", "version": "1"}}); e != nil || c.id == "" {
		t.Fatalf("initialize: %s %+v", res, e)
	}
	c.rpc("notifications/initialized", map[string]any{})
	res, e := c.rpc("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}, "task": map[string]any{}})
	var created struct {
		Task coreTask `json:"task"`
	}
	if e != nil || json.Unmarshal(res, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call with params.task: %s %+v", res, e)
	}
	local := created.Task.TaskID
	// A task of another server: its call ID reserved in the shared store.
	elsewhere := wield.NewID()
	if err := store.ReserveCallID(ctx, elsewhere); err != nil {
		t.Fatal(err)
	}
	post := func(task, accept string) <-chan *httptest.ResponseRecorder {
		out := make(chan *httptest.ResponseRecorder, 1)
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tasks/result", "params": map[string]any{"taskId": task}})
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(string(body)))
		r.Host = "127.0.0.1"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", accept)
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		r.Header.Set("Mcp-Session-Id", c.id)
		go func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			out <- w
		}()
		return out
	}
	receive := func(what string, ch <-chan *httptest.ResponseRecorder) *httptest.ResponseRecorder {
		t.Helper()
		select {
		case w := <-ch:
			return w
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no answer within 10 s", what)
			return nil
		}
	}
	remoteJSON := post(elsewhere, "application/json")
	remoteStream := post(elsewhere, "application/json, text/event-stream")
	localJSON := post(local, "application/json")

	f.srv.EndWaits()
	w := receive("tasks/result in JSON of a task elsewhere", remoteJSON)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" ||
		!strings.Contains(w.Body.String(), elsewhere) || !strings.Contains(w.Body.String(), "ask tasks/result again") {
		t.Errorf("tasks/result in JSON of a task elsewhere after EndWaits: %d %v %s; want 503 with Retry-After, saying to ask again", w.Code, w.Header(), w.Body)
	}
	w = receive("tasks/result streamed of a task elsewhere", remoteStream)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "notifications/tasks/status") || strings.Contains(w.Body.String(), `"result"`) || strings.Contains(w.Body.String(), `"error"`) {
		t.Errorf("tasks/result streamed of a task elsewhere after EndWaits: %d %s; want the status, then the end of the stream", w.Code, w.Body)
	}
	select {
	case w := <-localJSON:
		t.Fatalf("tasks/result of a task running here ended with EndWaits: %d %s", w.Code, w.Body)
	default:
	}
	close(release)
	w = receive("tasks/result of a task running here", localJSON)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "released") {
		t.Errorf("tasks/result of a task running here, after EndWaits: %d %s; want the task's result", w.Code, w.Body)
	}
}

// TestServerEndWaitsTaskQuestion: a task waiting for its client's answer
// (input_required) when the server starts to shut down can get none (its
// listener is closed): EndWaits fails the question at once with
// ErrNoAnswer, saying why, and the task ends as its tool decides,
// recorded, without waiting for the grace period.
func TestServerEndWaitsTaskQuestion(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	asked := make(chan error, 1)
	ask := wield.Func("ask", "Asks a name", func(ctx context.Context, _ srvNoArgs) (string, error) {
		_, err := mcpbridge.Ask(ctx, mcpbridge.Question{Key: "a", Elicit: &mcpbridge.ElicitQuestion{Message: "Name?"}})
		asked <- err
		if err != nil {
			return "", err
		}
		return "answered", nil
	})
	ask.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, ask)
	h := f.srv.Handler()
	_, created := taskAskPost(t, h, "tools/call", "ask", map[string]any{"name": "ask", "arguments": map[string]any{}})
	res, _ := created["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if id == "" {
		t.Fatalf("tools/call: %v, want a task", created)
	}
	var task map[string]any
	for range 500 {
		_, m := taskAskPost(t, h, "tasks/get", id, map[string]any{"taskId": id})
		if task, _ = m["result"].(map[string]any); task["status"] == "input_required" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if task["status"] != "input_required" {
		t.Fatalf("tasks/get: %v, want input_required", task)
	}
	f.srv.EndWaits()
	select {
	case err := <-asked:
		if !errors.Is(err, mcpbridge.ErrNoAnswer) || !strings.Contains(err.Error(), "the server is shutting down") {
			t.Errorf("the tool's question at EndWaits: %v, want ErrNoAnswer saying the server is shutting down", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the task's question still waited 10 s after EndWaits")
	}
	grace, end := context.WithTimeout(ctx, 10*time.Second)
	defer end()
	f.srv.DrainTasks(grace)
	if grace.Err() != nil {
		t.Error("DrainTasks waited its whole context: the task did not end with its question")
	}
	if rec, err := store.Call(ctx, id); err != nil || !strings.Contains(rec.Result.Error, "the server is shutting down") {
		t.Errorf("the task's record: %+v %v, want the tool's failure, saying the server is shutting down", rec, err)
	}
}
