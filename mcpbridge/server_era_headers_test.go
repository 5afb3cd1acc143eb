package mcpbridge_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// TestServerTasksHeaderMismatch: a request of the Tasks extension whose
// Mcp-Name header is not its body's taskId is refused as the revision
// refuses headers that disagree with the body (HTTP 400, -32020
// HeaderMismatch), and one without a taskId as invalid params (-32602);
// the right header reads the task.
func TestServerTasksHeaderMismatch(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	job := wield.Func("job", "Always a task.", func(context.Context, srvNoArgs) (string, error) { return "done", nil })
	job.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, job)
	h := f.srv.Handler()
	started := taskPost(t, h, "tools/call", "job", map[string]any{"name": "job", "arguments": map[string]any{}}, true)
	if started.Error != nil || started.Result.TaskID == "" {
		t.Fatalf("tools/call of a task tool = %+v, want a task", started)
	}
	id := started.Result.TaskID

	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		got := taskPost(t, h, method, "not-"+id, map[string]any{"taskId": id}, true)
		if got.status != http.StatusBadRequest || got.Error == nil || got.Error.Code != mcp.CodeHeaderMismatch ||
			!strings.Contains(got.Error.Message, "Mcp-Name") {
			t.Errorf("%s with another task's ID in Mcp-Name = HTTP %d, %+v; want 400 and -32020 naming the header", method, got.status, got.Error)
		}
		got = taskPost(t, h, method, "", map[string]any{}, true)
		if got.status != http.StatusBadRequest || got.Error == nil || got.Error.Code != -32602 ||
			!strings.Contains(got.Error.Message, "taskId is required") {
			t.Errorf("%s without a taskId = HTTP %d, %+v; want 400 and -32602", method, got.status, got.Error)
		}
	}
	if got := taskUntil(t, h, id, "completed"); got.Error != nil {
		t.Errorf("tasks/get with the task's ID in Mcp-Name = %+v", got.Error)
	}
}
