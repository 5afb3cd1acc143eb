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
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	release := make(chan struct{})
	slow := wield.Func("slow", "Waits to be released.", func(ctx context.Context, _ srvNoArgs) (string, error) {
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	slow.Task = wield.TaskRequired
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
