package mcpbridge_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// TestServerTaskLease: the server running a task renews its lease, so
// another server on the same store reads it working past one lease;
// a task reserved but never recorded whose lease expired (its server was
// killed) reads failed on any server, saying its server stopped, with an
// error and no internal detail.
func TestServerTaskLease(t *testing.T) {
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
	// A lease of 1.5 s, renewed every 0.5 s: a renewal may be a second late
	// (the race detector on a loaded machine) before the lease is lost.
	opts := &mcpbridge.ServerOptions{Calls: store, TaskLease: 1500 * time.Millisecond}
	a := srvNew(t, opts, &engine.Options{Store: store}, hold).srv.Handler()
	b := srvNew(t, opts, &engine.Options{Store: store}, hold).srv.Handler()

	started := taskPost(t, a, "tools/call", "hold", map[string]any{"name": "hold", "arguments": map[string]any{}}, true)
	id := started.Result.TaskID
	if started.Result.ResultType != "task" {
		t.Fatalf("tools/call = %+v", started)
	}
	owner, until, err := store.CallLease(ctx, id)
	if err != nil || owner == "" || until.Before(time.Now()) {
		t.Fatalf("the task's lease once answered: %q until %v, %v", owner, until, err)
	}
	time.Sleep(2 * time.Second) // past the first lease
	if got := taskPost(t, b, "tasks/get", id, map[string]any{"taskId": id}, true); got.Result.Status != "working" {
		t.Errorf("a task whose server renews its lease, read on another server past its first lease = %+v, want working", got.Result)
	}

	// A server killed: its task's ID reserved, leased, never recorded.
	if err := store.ReserveCallID(ctx, "orphan-1"); err != nil {
		t.Fatal(err)
	}
	// Its lease held for a minute, then (as its owner may) cut to a moment
	// ago: expired without waiting for it, so no read here races a clock.
	gone := "gone-host pid 1 (x)"
	now := time.Now()
	if lost, err := store.HoldCallLeases(ctx, gone, []string{"orphan-1"}, now, now.Add(time.Minute)); err != nil || len(lost) > 0 {
		t.Fatal(lost, err)
	}
	if got := taskPost(t, b, "tasks/get", "orphan-1", map[string]any{"taskId": "orphan-1"}, true); got.Result.Status != "working" {
		t.Errorf("an orphan within its lease = %+v, want working", got.Result)
	}
	now = time.Now()
	if lost, err := store.HoldCallLeases(ctx, gone, []string{"orphan-1"}, now, now.Add(-time.Millisecond)); err != nil || len(lost) > 0 {
		t.Fatal(lost, err)
	}
	got := taskPost(t, b, "tasks/get", "orphan-1", map[string]any{"taskId": "orphan-1"}, true)
	if got.Result.Status != "failed" || !strings.Contains(got.Result.StatusMessage, "gone-host pid 1 (x)") || !strings.Contains(got.Result.StatusMessage, "stopped without recording") {
		t.Errorf("an orphan past its lease = %+v, want failed, naming its server", got.Result)
	}
	if again := taskPost(t, a, "tasks/get", "orphan-1", map[string]any{"taskId": "orphan-1"}, true); again.Result.Status != "failed" {
		t.Errorf("the orphan read on the other server = %+v, want failed too", again.Result)
	}
	// The living task still renews.
	if got := taskPost(t, b, "tasks/get", id, map[string]any{"taskId": id}, true); got.Result.Status != "working" {
		t.Errorf("the living task = %+v", got.Result)
	}
	taskPost(t, a, "tasks/cancel", id, map[string]any{"taskId": id}, true)
}
