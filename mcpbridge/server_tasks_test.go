package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// taskReply is a JSON-RPC answer of the tasks path.
type taskReply struct {
	status int
	Result struct {
		ResultType string `json:"resultType"`
		Meta       struct {
			CallID string `json:"wield/call_id"`
		} `json:"_meta"`
		TaskID        string `json:"taskId"`
		Status        string `json:"status"`
		StatusMessage string `json:"statusMessage"`
		TTLMs         *int64 `json:"ttlMs"`
		Poll          int    `json:"pollIntervalMs"`
		CreatedAt     string `json:"createdAt"`
		Content       []struct {
			Text string `json:"text"`
		} `json:"content"`
		Inner *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	} `json:"result"`
	Error *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// taskPost sends one request of the stateless era; name goes in Mcp-Name.
func taskPost(t *testing.T, h http.Handler, method, name string, params map[string]any, speaksTasks bool) taskReply {
	t.Helper()
	caps := map[string]any{}
	if speaksTasks {
		caps["extensions"] = map[string]any{mcpbridge.TasksExtension: map[string]any{}}
	}
	w := srvEraSend(h, 7, method, name, params, caps, "tasker")
	var r taskReply
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
		t.Fatalf("%s: answer %q is not one JSON-RPC message: %v", method, w.Body.String(), err)
	}
	r.status = w.Code
	return r
}

// taskUntil polls tasks/get until the task's status is want, for at most
// ten seconds.
func taskUntil(t *testing.T, h http.Handler, id, want string) taskReply {
	t.Helper()
	var r taskReply
	for range 1000 {
		r = taskPost(t, h, "tasks/get", id, map[string]any{"taskId": id}, true)
		if r.Error != nil || r.Result.Status == want {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("task %s: status %q after 10s, want %q", id, r.Result.Status, want)
	return r
}

// TestServerTasks follows tasks of the Tasks extension through their life
// on a SQLite store: a call of a task tool answers a task at once, whose
// ID is the call's and is reserved before the answer; tasks/get reads it
// working, then completed with the recorded result; tasks/cancel stops the
// tool and the record says canceled; a client without the extension gets
// the plain call or -32021; a second server on the same store (a restart)
// reads the tasks from their records, and a call running elsewhere from
// its reservation.
func TestServerTasks(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wield.db")
	store, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	release := make(chan struct{})
	stopped := make(chan error, 1)
	slow := wield.Func("slow", "Waits to be released.", func(ctx context.Context, _ srvNoArgs) (string, error) {
		select {
		case <-release:
			return "done <ok>", nil
		case <-ctx.Done():
			stopped <- context.Cause(ctx)
			return "", ctx.Err()
		}
	})
	slow.Task = wield.TaskOptional
	must := wield.Func("must", "Always a task.", func(context.Context, srvNoArgs) (string, error) { return "fine", nil })
	must.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow, must)
	h := f.srv.Handler()
	call := func(name string, speaks bool) taskReply {
		return taskPost(t, h, "tools/call", name, map[string]any{"name": name, "arguments": map[string]any{}}, speaks)
	}

	started := call("slow", true)
	if started.Error != nil || started.Result.ResultType != "task" || started.Result.Status != "working" || started.Result.TaskID == "" || started.Result.TTLMs != nil || started.Result.Poll <= 0 {
		t.Fatalf("tools/call of a task tool = %+v, want a working task", started)
	}
	id := started.Result.TaskID
	if _, err := store.CallIDReservedAt(ctx, id); err != nil {
		t.Errorf("the task was answered before its call ID was reserved: %v", err)
	}
	if got := taskPost(t, h, "tasks/get", id, map[string]any{"taskId": id}, true); got.Result.Status != "working" || got.Result.ResultType != "complete" {
		t.Errorf("tasks/get of a running task = %+v", got.Result)
	}
	close(release)
	done := taskUntil(t, h, id, "completed")
	if done.Result.Inner == nil || done.Result.Inner.IsError || len(done.Result.Inner.Content) != 1 || done.Result.Inner.Content[0].Text != "done <ok>" {
		t.Fatalf("completed task = %+v, want the tool's output", done.Result)
	}
	if rec, err := store.Call(ctx, id); err != nil || !rec.Result.OK || rec.Call.Caller.ID != "mcp:tasker" || rec.Call.Caller.Variables["wield_mcp_task"] != true {
		t.Errorf("record of the task's call = %+v, %v", rec, err)
	}

	// Without the extension: the plain call, or -32021.
	if plain := call("slow", false); plain.Result.ResultType != "complete" || len(plain.Result.Content) != 1 || plain.Result.Content[0].Text != "done <ok>" {
		t.Errorf("task-optional tool for a client without tasks = %+v, want the plain result", plain)
	}
	if refused := call("must", false); refused.Error == nil || refused.Error.Code != mcpbridge.CodeMissingCapability || string(refused.Error.Data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
		t.Errorf("task-required tool for a client without tasks = %+v, want -32021 naming the extension", refused)
	}
	// A plain tool stays a plain call for a client that speaks tasks.
	plain := call("echo", true)
	if plain.Result.ResultType != "complete" || plain.Result.TaskID != "" || plain.Result.Meta.CallID == "" {
		t.Errorf("a tool not marked task = %+v, want a plain result", plain)
	}
	// A call that was no task is not read as one, by whoever learnt its ID.
	if r := taskPost(t, h, "tasks/get", plain.Result.Meta.CallID, map[string]any{"taskId": plain.Result.Meta.CallID}, true); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("tasks/get of a plain call's ID = %+v, want unknown task", r)
	}

	// tasks/cancel stops the tool; the record says canceled.
	release2 := make(chan struct{})
	release = release2
	second := call("slow", true)
	cid := second.Result.TaskID
	if ack := taskPost(t, h, "tasks/cancel", cid, map[string]any{"taskId": cid}, true); ack.Error != nil || ack.Result.ResultType != "complete" {
		t.Fatalf("tasks/cancel = %+v", ack)
	}
	select {
	case cause := <-stopped:
		if cause == nil {
			t.Error("the tool's context ended without a cause")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tasks/cancel did not stop the tool")
	}
	got := taskPost(t, h, "tasks/get", cid, map[string]any{"taskId": cid}, true)
	if got.Result.Status != "cancelled" || got.Result.StatusMessage == "" {
		t.Errorf("tasks/get of a canceled task = %+v, want cancelled with why", got.Result)
	}
	if rec, err := store.Call(ctx, cid); err != nil || rec.Result.ErrorType != wield.ErrCanceled {
		t.Errorf("record of the canceled task = %+v, %v; want canceled", rec, err)
	}

	// Bad requests.
	if r := taskPost(t, h, "tasks/get", "nope", map[string]any{"taskId": "nope"}, true); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("tasks/get of an unknown task = %+v, want -32602", r)
	}
	huge := strings.Repeat("x", 1<<16)
	if r := taskPost(t, h, "tasks/get", huge, map[string]any{"taskId": huge}, true); r.status != http.StatusBadRequest || r.Error == nil || len(r.Error.Message) > 200 {
		t.Errorf("tasks/get of a 64 KiB task ID = %d %+v, want 400 with a short message", r.status, r.Error)
	}
	if r := taskPost(t, h, "tasks/get", "other", map[string]any{"taskId": id}, true); r.status != http.StatusBadRequest || r.Error == nil {
		t.Errorf("tasks/get whose Mcp-Name is another task = %d %+v, want 400", r.status, r)
	}
	if r := taskPost(t, h, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{"k": map[string]any{}}}, true); r.Error != nil || r.Result.ResultType != "complete" {
		t.Errorf("tasks/update = %+v, want an empty acknowledgement", r)
	}

	// Another server on the same store (a restart): tasks from their
	// records, and a call running elsewhere from its reservation.
	g := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow, must)
	h2 := g.srv.Handler()
	if r := taskPost(t, h2, "tasks/get", id, map[string]any{"taskId": id}, true); r.Result.Status != "completed" || r.Result.Inner == nil || r.Result.Inner.Content[0].Text != "done <ok>" {
		t.Errorf("tasks/get on another server = %+v, want the recorded result", r.Result)
	}
	if r := taskPost(t, h2, "tasks/get", cid, map[string]any{"taskId": cid}, true); r.Result.Status != "cancelled" {
		t.Errorf("tasks/get of the canceled task on another server = %+v", r.Result)
	}
	elsewhere := wield.NewID()
	if err := store.ReserveCallID(ctx, elsewhere); err != nil {
		t.Fatal(err)
	}
	if r := taskPost(t, h2, "tasks/get", elsewhere, map[string]any{"taskId": elsewhere}, true); r.Result.Status != "working" {
		t.Errorf("tasks/get of a call reserved elsewhere = %+v, want working", r.Result)
	}
}

// TestServerTasksDrain checks that DrainTasks lets a running task finish
// within its context, then cancels those left with the context's cause,
// which the record carries.
func TestServerTasksDrain(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	slow := wield.Func("slow", "Waits for its end.", func(ctx context.Context, _ srvNoArgs) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	slow.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow)
	h := f.srv.Handler()
	r := taskPost(t, h, "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{}}, true)
	if r.Result.TaskID == "" {
		t.Fatalf("no task: %+v", r)
	}
	grace, end := context.WithCancelCause(ctx)
	end(&wield.Error{Type: wield.ErrCanceled, Message: "the server shut down: its grace period ended"})
	f.srv.DrainTasks(grace)
	rec, err := store.Call(ctx, r.Result.TaskID)
	if err != nil || rec.Result.ErrorType != wield.ErrCanceled || rec.Result.Error != "the call was canceled before the tool finished: the server shut down: its grace period ended" {
		t.Fatalf("record after the drain = %+v, %v", rec.Result, err)
	}
	if again := taskPost(t, h, "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{}}, true); again.Error == nil {
		t.Errorf("a task started after DrainTasks = %+v, want refused", again)
	}
}

// TestServerTasksApproval checks that a task whose confirm tool waits for a
// person says which approval in tasks/get, and runs once it is approved.
func TestServerTasksApproval(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	decide := make(chan bool)
	asked := make(chan string, 1)
	approver := wield.ApproverFunc(func(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
		asked <- req.ID
		select {
		case ok := <-decide:
			return wield.Decision{Approved: ok, By: "tester"}, nil
		case <-ctx.Done():
			return wield.Decision{}, ctx.Err()
		}
	})
	risky := wield.Func("risky", "Needs a yes.", func(context.Context, srvNoArgs) (string, error) { return "ran", nil })
	risky.Task, risky.Permission = wield.TaskOptional, wield.PermissionConfirm
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store, Approver: approver}, risky)
	h := f.srv.Handler()
	r := taskPost(t, h, "tools/call", "risky", map[string]any{"name": "risky", "arguments": map[string]any{}}, true)
	id := r.Result.TaskID
	var approval string
	select {
	case approval = <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the task never asked for approval")
	}
	var got taskReply
	for range 1000 {
		got = taskPost(t, h, "tasks/get", id, map[string]any{"taskId": id}, true)
		if got.Result.StatusMessage != "" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got.Result.Status != "working" || !strings.Contains(got.Result.StatusMessage, "waiting for a person's approval "+approval) {
		t.Fatalf("tasks/get of a task waiting for approval = %+v, want working, naming approval %s", got.Result, approval)
	}
	decide <- true
	if done := taskUntil(t, h, id, "completed"); done.Result.Inner == nil || done.Result.Inner.Content[0].Text != "ran" || done.Result.StatusMessage != "" {
		t.Errorf("approved task = %+v", done.Result)
	}
}

// TestServerTaskUnrunnable: a task whose tool the server cannot run at all
// (no executor loaded, as a tool file's external entry) ends failed with a
// JSON-RPC error and no result, SEP-2663's protocol-level failure, while a
// tool that ran and failed ends completed with isError.
func TestServerTaskUnrunnable(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	unrunnable := &wield.Tool{Name: "unrunnable", Description: "Has no executor here.", InputSchema: &jsonschema.Schema{Type: "object"}, Task: wield.TaskRequired}
	failing := wield.Func("failing", "Always fails.", func(context.Context, srvNoArgs) (string, error) {
		return "", fmt.Errorf("the job failed <as always>")
	})
	failing.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, unrunnable, failing)
	h := f.srv.Handler()
	type detailed struct {
		Result struct {
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"result"`
	}
	read := func(name string) detailed {
		t.Helper()
		started := taskPost(t, h, "tools/call", name, map[string]any{"name": name, "arguments": map[string]any{}}, true)
		if started.Error != nil || started.Result.ResultType != "task" {
			t.Fatalf("tools/call of %s = %+v, want a task", name, started)
		}
		id := started.Result.TaskID
		for range 1000 {
			w := srvEraSend(h, 8, "tasks/get", id, map[string]any{"taskId": id},
				map[string]any{"extensions": map[string]any{mcpbridge.TasksExtension: map[string]any{}}}, "")
			var d detailed
			if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil {
				t.Fatalf("tasks/get: %q: %v", w.Body.String(), err)
			}
			if d.Result.Status != "working" {
				return d
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("task of %s still working after 10s", name)
		return detailed{}
	}
	if d := read("unrunnable"); d.Result.Status != "failed" || d.Result.Error == nil || d.Result.Error.Code != -32603 ||
		d.Result.Error.Message != "Tool 'unrunnable' has no executor loaded" || d.Result.Result != nil {
		t.Errorf("task of a tool without an executor = %+v, want failed with a JSON-RPC error and no result", d.Result)
	}
	if d := read("failing"); d.Result.Status != "completed" || d.Result.Error != nil || !strings.Contains(string(d.Result.Result), `"isError":true`) {
		t.Errorf("task of a tool that failed = %+v %s, want completed with isError", d.Result, d.Result.Result)
	}
}
