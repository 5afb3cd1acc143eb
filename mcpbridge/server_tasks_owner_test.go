package mcpbridge_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// TestServerTasksBoundToRequester: a task started by a requester (an API
// key) is that requester's: another one that learnt its ID reads it as an
// unknown task, and cannot cancel it nor answer its questions, while it
// runs and once recorded (MCP 2025-11-25 and the Tasks extension: a
// receiver with an authorization context binds tasks to it and rejects
// access from another). A server without keys has no requester: a task ID
// is then the capability.
func TestServerTasksBoundToRequester(t *testing.T) {
	store := srvTaskStore(t)
	release := make(chan struct{})
	slow := srvSlowTask(release, wield.TaskRequired)
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow)
	as := func(requester string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if requester != "" {
				r = r.WithContext(wield.WithRequester(r.Context(), requester))
			}
			f.srv.Handler().ServeHTTP(w, r)
		})
	}
	a, b := as("key:a"), as("key:b")
	started := taskPost(t, a, "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{}}, true)
	id := started.Result.TaskID
	if started.Error != nil || id == "" {
		t.Fatalf("tools/call = %+v", started)
	}
	foreign := func(when string) {
		t.Helper()
		for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
			r := taskPost(t, b, m, id, map[string]any{"taskId": id, "inputResponses": map[string]any{}}, true)
			if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "unknown task") {
				t.Errorf("%s: %s of another requester's task = %+v, want -32602 unknown task", when, m, r)
			}
		}
		if r := taskPost(t, as(""), "tasks/get", id, map[string]any{"taskId": id}, true); r.Error == nil {
			t.Errorf("%s: tasks/get without a requester of a requester's task = %+v, want refused", when, r.Result)
		}
	}
	foreign("running")
	if r := taskPost(t, a, "tasks/get", id, map[string]any{"taskId": id}, true); r.Error != nil || r.Result.Status != "working" {
		t.Errorf("the owner's tasks/get = %+v, want working (not canceled by the other requester)", r)
	}
	close(release)
	if r := taskUntil(t, a, id, "completed"); r.Error != nil {
		t.Fatalf("the owner's tasks/get = %+v", r)
	}
	foreign("recorded")

	// Without keys: no requester, the ID is the capability.
	open := taskPost(t, as(""), "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{}}, true)
	if r := taskUntil(t, as(""), open.Result.TaskID, "completed"); r.Error != nil {
		t.Errorf("a task without a requester, read without one = %+v", r)
	}
}

// TestServerTaskReservedOwner: a task running on one server and not yet
// recorded is read on another server sharing the store by its reservation
// and lease; another requester, and a request of none, get there exactly
// the answer of an unknown task (tasks/get, tasks/update, tasks/cancel of
// the Tasks extension; tasks/get of a 2025-11-25 session), where before
// they read it working; its owner reads it working. A task of no requester
// is read by its ID alone, as on its own server.
func TestServerTaskReservedOwner(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	hold := wield.Func("hold", "Waits for its end.", func(ctx context.Context, _ srvNoArgs) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	hold.Task = wield.TaskRequired
	opts := &mcpbridge.ServerOptions{Calls: store}
	one := srvNew(t, opts, &engine.Options{Store: store}, hold).srv.Handler()
	other := srvNew(t, opts, &engine.Options{Store: store}, hold).srv.Handler()
	as := func(h http.Handler, requester string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if requester != "" {
				r = r.WithContext(wield.WithRequester(r.Context(), requester))
			}
			h.ServeHTTP(w, r)
		})
	}
	started := taskPost(t, as(one, "key:a"), "tools/call", "hold", map[string]any{"name": "hold", "arguments": map[string]any{}}, true)
	id := started.Result.TaskID
	if started.Result.ResultType != "task" || id == "" {
		t.Fatalf("tools/call = %+v", started)
	}
	defer taskPost(t, as(one, "key:a"), "tasks/cancel", id, map[string]any{"taskId": id}, true)
	unknown := wield.NewID() // never a task: its answers, with id for it
	answer := func(h http.Handler, method, task string) string {
		caps := map[string]any{"extensions": map[string]any{mcpbridge.TasksExtension: map[string]any{}}}
		w := srvEraSend(h, 7, method, task, map[string]any{"taskId": task, "inputResponses": map[string]any{}}, caps, "tasker")
		return w.Result().Status + "\n" + w.Header().Get("Content-Type") + "\n" + strings.ReplaceAll(w.Body.String(), task, "ID")
	}
	for _, who := range []string{"key:b", ""} {
		for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			got, want := answer(as(other, who), m, id), answer(as(other, who), m, unknown)
			if got != want || !strings.Contains(want, "unknown task") {
				t.Errorf("requester %q, %s on the other server of a task of key:a not recorded:\n%q\nwant the unknown task's\n%q", who, m, got, want)
			}
		}
		c := &coreSession{t: t, h: as(other, who)}
		c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tasks": map[string]any{}},
			"clientInfo": map[string]any{"name": "core", "version": "1"}})
		c.rpc("notifications/initialized", map[string]any{})
		res, e := c.rpc("tasks/get", map[string]any{"taskId": id})
		_, ue := c.rpc("tasks/get", map[string]any{"taskId": unknown})
		if e == nil || ue == nil || e.Code != ue.Code || strings.ReplaceAll(e.Message, id, "ID") != strings.ReplaceAll(ue.Message, unknown, "ID") {
			t.Errorf("requester %q, 2025-11-25 tasks/get on the other server: %s %+v, want the unknown task's %+v", who, res, e, ue)
		}
	}
	if r := taskPost(t, as(other, "key:a"), "tasks/get", id, map[string]any{"taskId": id}, true); r.Error != nil || r.Result.Status != "working" {
		t.Errorf("the owner's tasks/get on the other server = %+v, want working", r)
	}

	// A task of no requester: its ID is the capability, on any server.
	open := taskPost(t, one, "tools/call", "hold", map[string]any{"name": "hold", "arguments": map[string]any{}}, true)
	defer taskPost(t, one, "tasks/cancel", open.Result.TaskID, map[string]any{"taskId": open.Result.TaskID}, true)
	if r := taskPost(t, other, "tasks/get", open.Result.TaskID, map[string]any{"taskId": open.Result.TaskID}, true); r.Error != nil || r.Result.Status != "working" {
		t.Errorf("a task of no requester read on the other server = %+v, want working", r)
	}
}
