//go:build unix

package journeys

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// napTool is the built-in sleep under another name, whose calls are always
// MCP tasks (the `task:` key of tool files).
const napTool = `name: nap
description: Sleep for a while, as a task
task: required
parameters:
  - name: duration
    type: number
entry: {type: builtin, handler: sleep}
`

// mtTask is a task, or a tools/call result, as a client reads it.
type mtTask struct {
	ResultType    string `json:"resultType"`
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	Result        *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

// mtRPC sends one request of MCP 2026-07-28 to s's /mcp, from a client
// that declares the Tasks extension, and returns its result, or fails
// the journey on a JSON-RPC error.
func mtRPC(t *testing.T, s *server, method, name string, params map[string]any) mtTask {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "journey", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
		},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	code, raw := s.do("POST", "/mcp", string(body), "Accept: application/json, text/event-stream",
		"Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: "+method, "Mcp-Name: "+name)
	text := string(raw)
	if i := strings.Index(text, "data: "); i >= 0 { // an event stream of one message
		text, _, _ = strings.Cut(text[i+len("data: "):], "\n")
	}
	var msg struct {
		Result mtTask          `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if code != 200 || json.Unmarshal([]byte(text), &msg) != nil || msg.Error != nil {
		t.Fatalf("%s %s: %d %s\nserver stderr:\n%s", method, name, code, raw, s.stderr)
	}
	return msg.Result
}

// mtStart calls nap for seconds and returns its task.
func mtStart(t *testing.T, s *server, seconds int) mtTask {
	t.Helper()
	task := mtRPC(t, s, "tools/call", "nap", map[string]any{"name": "nap", "arguments": map[string]any{"duration": seconds}})
	if task.ResultType != "task" || task.Status != "working" || task.TaskID == "" {
		t.Fatalf("tools/call nap = %+v (%+v), want a working task", task, task.Result)
	}
	return task
}

func mtGet(t *testing.T, s *server, id string) mtTask {
	t.Helper()
	return mtRPC(t, s, "tasks/get", id, map[string]any{"taskId": id})
}

// mtRecord is the call's record as GET /v1/calls/{id} gives it.
func mtRecord(t *testing.T, s *server, id string) (ok bool, errorType, message string) {
	t.Helper()
	code, body := s.do("GET", "/v1/calls/"+id, "")
	var rec struct {
		Result struct {
			OK        bool   `json:"ok"`
			ErrorType string `json:"error_type"`
			Error     string `json:"error"`
		} `json:"result"`
	}
	if code != 200 || json.Unmarshal(body, &rec) != nil {
		t.Fatalf("GET /v1/calls/%s: %d %s", id, code, body)
	}
	return rec.Result.OK, rec.Result.ErrorType, rec.Result.Error
}

// TestJourneyMCPTasks: a tool file marks a tool `task: required`; a
// 2026-07-28 client's call of it through `wield serve` (SQLite) answers a
// task at once. SIGTERM lets the task finish within the grace period, and
// after the restart tasks/get gives its result; a task still running when
// the grace period ends is recorded canceled and read so after the
// restart; tasks/cancel stops the tool at once and the record says
// canceled. Two servers sharing PostgreSQL: a task started on one is read
// on the other, working, then completed with its result; tasks/cancel sent
// to the other stops the tool on the first.
func TestJourneyMCPTasks(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	u := newUser(t)
	u.write("tools/nap.yaml", napTool)

	s := u.serve("--tools", "tools", "--grace", "10s")
	first := mtStart(t, s, 2)
	code, took := s.stop(syscall.SIGTERM, 15*time.Second)
	if code != 0 || took < time.Second || took > 9*time.Second {
		t.Errorf("SIGTERM with a task of 2 s: exit %d after %v, want 0 once the task is done", code, took)
	}
	s = u.serve("--tools", "tools", "--grace", "1s")
	got := mtGet(t, s, first.TaskID)
	if got.Status != "completed" || got.Result == nil || got.Result.IsError || len(got.Result.Content) != 1 || !strings.Contains(got.Result.Content[0].Text, `"slept":2`) {
		t.Errorf("tasks/get after the restart = %+v, want completed with the sleep's result", got)
	}
	if ok, _, _ := mtRecord(t, s, first.TaskID); !ok {
		t.Errorf("the task's call record is not ok")
	}

	// Cut by the end of the grace period: recorded canceled, read so.
	cut := mtStart(t, s, 60)
	if code, took := s.stop(syscall.SIGTERM, 15*time.Second); code != 0 || took > 8*time.Second {
		t.Errorf("SIGTERM with --grace 1s and a task of 60 s: exit %d after %v", code, took)
	}
	s = u.serve("--tools", "tools")
	got = mtGet(t, s, cut.TaskID)
	if got.Status != "cancelled" || !strings.Contains(got.StatusMessage, "grace period") {
		t.Errorf("tasks/get of the task cut at shutdown = %+v, want cancelled, saying the grace period ended", got)
	}

	// tasks/cancel stops the tool; the record says canceled.
	long := mtStart(t, s, 60)
	start := time.Now()
	if ack := mtRPC(t, s, "tasks/cancel", long.TaskID, map[string]any{"taskId": long.TaskID}); ack.ResultType != "complete" {
		t.Errorf("tasks/cancel = %+v", ack)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("tasks/cancel took %v", took)
	}
	if got := mtGet(t, s, long.TaskID); got.Status != "cancelled" || !strings.Contains(got.StatusMessage, "tasks/cancel") {
		t.Errorf("tasks/get after tasks/cancel = %+v", got)
	}
	if ok, typ, msg := mtRecord(t, s, long.TaskID); ok || typ != "canceled" {
		t.Errorf("record after tasks/cancel: ok %v, %s %q; want canceled", ok, typ, msg)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("SIGTERM with no task running: exit %d after %v", code, took)
	}

	// Two servers on one PostgreSQL store.
	if testing.Short() {
		return
	}
	u.write("pg/wield.yaml", fmt.Sprintf("store: %q\n", postgresURL(t)))
	a := u.serve("--tools", "tools", "--config", u.path("pg/wield.yaml"))
	b := u.serve("--tools", "tools", "--config", u.path("pg/wield.yaml"))
	shared := mtStart(t, a, 2)
	if got := mtGet(t, b, shared.TaskID); got.Status != "working" {
		t.Errorf("tasks/get on the other server while the task runs = %+v, want working", got)
	}
	var last mtTask
	if !eventually(15*time.Second, func() bool { last = mtGet(t, b, shared.TaskID); return last.Status == "completed" }) {
		t.Fatalf("the other server never read the task completed: %+v", last)
	}
	if last.Result == nil || !strings.Contains(last.Result.Content[0].Text, `"slept":2`) {
		t.Errorf("the other server's completed task = %+v, want the sleep's result", last)
	}

	// tasks/cancel sent to the other server: the owner hears it (the
	// store's LISTEN/NOTIFY) and stops the tool.
	remote := mtStart(t, a, 60)
	start = time.Now()
	mtRPC(t, b, "tasks/cancel", remote.TaskID, map[string]any{"taskId": remote.TaskID})
	if !eventually(10*time.Second, func() bool { last = mtGet(t, b, remote.TaskID); return last.Status == "cancelled" }) {
		t.Fatalf("a task canceled through the other server still reads %+v", last)
	}
	if !strings.Contains(last.StatusMessage, "on another server") || time.Since(start) > 10*time.Second {
		t.Errorf("cancelled through the other server: %+v after %v", last, time.Since(start))
	}
	if ok, typ, _ := mtRecord(t, a, remote.TaskID); ok || typ != "canceled" {
		t.Errorf("record of the task canceled through the other server: ok %v, %s", ok, typ)
	}
}
