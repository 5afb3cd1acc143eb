package mcpbridge_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/sqlite"
)

// srvTaskStore opens a SQLite store of its own for a test of tasks, closed
// when the test ends: tasks are records, and these tests read them back.
func srvTaskStore(t *testing.T) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(ctx) })
	return store
}

// srvSlowTask is the tool "slow", with the given task support, which
// answers "released" once release is closed, or fails when its call is
// cancelled.
func srvSlowTask(release <-chan struct{}, task wield.TaskSupport) *wield.Tool {
	slow := wield.Func("slow", "Waits to be released.", func(ctx context.Context, _ srvNoArgs) (string, error) {
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	slow.Task = task
	return slow
}
