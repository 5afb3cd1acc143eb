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

// TestServerTasksRefusals: a request of the Tasks extension whose Mcp-Name
// header is not its body's taskId is refused as the revision refuses
// headers that disagree with the body (HTTP 400, -32020 HeaderMismatch),
// one without a taskId as invalid params (-32602), and one from a client
// that did not declare the extension in it, as a call of a task-required
// tool from such a client, with -32021 naming the extension (HTTP 400, as
// the revision answers that error); the right request reads the task. The
// tools/call that creates the task answers the task alone, though its
// tool returned at once: the result is tasks/get's.
func TestServerTasksRefusals(t *testing.T) {
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
	if started.Error != nil || started.Result.TaskID == "" || started.Result.ResultType != "task" {
		t.Fatalf("tools/call of a task tool = %+v, want a task", started)
	}
	if started.Result.Inner != nil {
		t.Errorf("the task of a tool that returns at once was answered with its result %+v: a CreateTaskResult is the task alone (SEP-2663)", started.Result.Inner)
	}
	id := started.Result.TaskID
	const needsTasks = `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

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
		got = taskPost(t, h, method, id, map[string]any{"taskId": id}, false)
		if got.status != http.StatusBadRequest || got.Error == nil || got.Error.Code != mcpbridge.CodeMissingCapability ||
			string(got.Error.Data) != needsTasks || !strings.Contains(got.Error.Message, method) {
			t.Errorf("%s from a client without the extension = HTTP %d, %+v; want 400 and -32021 naming it", method, got.status, got.Error)
		}
	}
	refused := taskPost(t, h, "tools/call", "job", map[string]any{"name": "job", "arguments": map[string]any{}}, false)
	if refused.status != http.StatusBadRequest || refused.Error == nil || refused.Error.Code != mcpbridge.CodeMissingCapability ||
		string(refused.Error.Data) != needsTasks {
		t.Errorf("a task-required tool for a client without the extension = HTTP %d, %+v; want 400 and -32021", refused.status, refused.Error)
	}
	if got := taskUntil(t, h, id, "completed"); got.Error != nil || got.Result.Inner == nil || got.Result.Inner.Content[0].Text != "done" {
		t.Errorf("tasks/get with the task's ID in Mcp-Name = %+v, want the result", got)
	}
}
