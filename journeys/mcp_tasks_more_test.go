//go:build unix

package journeys

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mtListen opens a subscriptions/listen stream on s's /mcp for the tasks
// ids, from a client that declares the Tasks extension, and returns its
// messages once the stream ends (the server ends it once every task
// followed has ended) and how long that took.
func mtListen(t *testing.T, s *server, ids ...string) ([]map[string]any, time.Duration) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "follow", "method": "subscriptions/listen", "params": map[string]any{
		"notifications": map[string]any{"taskIds": ids},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "journey", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{
				"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
			},
		},
	}})
	start := time.Now()
	code, raw := s.do("POST", "/mcp", string(body), "Accept: application/json, text/event-stream",
		"Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: subscriptions/listen")
	took := time.Since(start)
	if code != 200 {
		t.Fatalf("subscriptions/listen: %d %s", code, raw)
	}
	var msgs []map[string]any
	for line := range strings.Lines(string(raw)) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("listen stream message %q: %v", data, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, took
}

// mtStatuses are the task statuses the notifications/tasks of a stream
// carry, in order, as "id status".
func mtStatuses(msgs []map[string]any) []string {
	var out []string
	for _, m := range msgs {
		if m["method"] == "notifications/tasks" {
			p, _ := m["params"].(map[string]any)
			out = append(out, fmt.Sprint(p["taskId"], " ", p["status"]))
		}
	}
	return out
}

// TestJourneyMCPTaskListen: a 2026-07-28 client follows a task of `wield
// serve` on subscriptions/listen instead of polling: the stream
// acknowledges the task, says it is working, pushes notifications/tasks
// with the result the moment it completes (not a polling interval later),
// and ends. Two servers sharing PostgreSQL: a task running on one is
// followed on the other.
func TestJourneyMCPTaskListen(t *testing.T) {
	u := newUser(t)
	u.write("tools/nap.yaml", napTool)
	s := u.serve("--tools", "tools")
	task := mtStart(t, s, 2)
	msgs, took := mtListen(t, s, task.TaskID, "not-a-task")
	if len(msgs) != 4 || msgs[0]["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen stream = %v, want the acknowledgement, two states and the result", msgs)
	}
	if ack := fmt.Sprint(msgs[0]["params"]); !strings.Contains(ack, "taskIds:["+task.TaskID+"]") {
		t.Errorf("acknowledgement = %s, want the task (and not the unknown ID)", ack)
	}
	if got := mtStatuses(msgs); fmt.Sprint(got) != fmt.Sprint([]string{task.TaskID + " working", task.TaskID + " completed"}) {
		t.Errorf("notified statuses = %v", got)
	}
	if done := fmt.Sprint(msgs[2]["params"]); !strings.Contains(done, "slept:2") {
		t.Errorf("completed notification = %s, want the sleep's result", done)
	}
	if res, _ := msgs[3]["result"].(map[string]any); res == nil || res["resultType"] != "complete" || msgs[3]["id"] != "follow" {
		t.Errorf("stream end = %v, want the listen's result", msgs[3])
	}
	if took > 2500*time.Millisecond {
		t.Errorf("the stream ended %v after it opened, for a task of 2 s started before", took)
	}

	if testing.Short() {
		return
	}
	u.write("pg/wield.yaml", fmt.Sprintf("store: %q\n", postgresURL(t)))
	a := u.serve("--tools", "tools", "--config", u.path("pg/wield.yaml"))
	b := u.serve("--tools", "tools", "--config", u.path("pg/wield.yaml"))
	shared := mtStart(t, a, 2)
	msgs, took = mtListen(t, b, shared.TaskID)
	if got := mtStatuses(msgs); fmt.Sprint(got) != fmt.Sprint([]string{shared.TaskID + " working", shared.TaskID + " completed"}) || took > 5*time.Second {
		t.Errorf("the other server's stream: statuses %v after %v, want working then completed within its polling interval", got, took)
	}
}

// dozeTool is the built-in sleep, not marked task: it becomes one only past
// mcp.task_after.
const dozeTool = `name: doze
description: Sleep for a while
parameters:
  - name: duration
    type: number
entry: {type: builtin, handler: sleep}
`

// TestJourneyMCPTaskAfter: with `mcp: {task_after: 1s}` in wield.yaml, a
// 2026-07-28 client that declared the Tasks extension calls a tool not
// marked task through `wield serve`: a short call is answered plainly; a
// call of 3 s is answered with a task after about a second, and goes on as
// it: tasks/get reads it completed with the sleep's result, and the call's
// one record has the task's ID. `--task-after 0` overrides the file: the
// client waits for the plain result.
func TestJourneyMCPTaskAfter(t *testing.T) {
	u := newUser(t)
	u.write("tools/doze.yaml", dozeTool)
	u.write("wield.yaml", "mcp: {task_after: 1s}\n")
	s := u.serve("--tools", "tools", "--config", u.path("wield.yaml"))
	call := func(s *server, seconds float64) (mtTask, time.Duration) {
		start := time.Now()
		r := mtRPC(t, s, "tools/call", "doze", map[string]any{"name": "doze", "arguments": map[string]any{"duration": seconds}})
		return r, time.Since(start)
	}
	if r, _ := call(s, 0.1); r.ResultType != "complete" || r.TaskID != "" {
		t.Errorf("a call of 0.1 s = %+v, want the plain result", r)
	}
	task, took := call(s, 3)
	if task.ResultType != "task" || task.Status != "working" || took < time.Second || took > 2500*time.Millisecond {
		t.Fatalf("a call of 3 s = %+v after %v, want a working task after about 1 s", task, took)
	}
	var last mtTask
	if !eventually(10*time.Second, func() bool { last = mtGet(t, s, task.TaskID); return last.Status == "completed" }) {
		t.Fatalf("the task never completed: %+v", last)
	}
	if last.Result == nil || len(last.Result.Content) != 1 || !strings.Contains(last.Result.Content[0].Text, `"slept":3`) {
		t.Errorf("completed task = %+v, want the sleep's result", last)
	}
	if ok, _, _ := mtRecord(t, s, task.TaskID); !ok {
		t.Errorf("the call's record under the task's ID is not ok")
	}

	off := u.serve("--tools", "tools", "--config", u.path("wield.yaml"), "--task-after", "0")
	if r, took := call(off, 1.5); r.ResultType != "complete" || took < 1500*time.Millisecond {
		t.Errorf("with --task-after 0: %+v after %v, want the plain result once the call is done", r, took)
	}
}

// TestJourneyMCPTaskKilled: `wield serve` is killed outright (SIGKILL) in
// the middle of a task, so nothing records it. Restarted on the same store,
// the server reads the task working while its lease may still be renewed,
// then failed once the lease expires (15 s at most), with a status message
// saying its server stopped without recording it: a subscriptions/listen
// stream opened after the restart pushes that change and ends. Two servers
// sharing PostgreSQL: when one is killed, the other reads its task failed
// within the lease, while its own task, whose lease it renews, stays
// working.
func TestJourneyMCPTaskKilled(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	u := newUser(t)
	u.write("tools/nap.yaml", napTool)
	s := u.serve("--tools", "tools")
	task := mtStart(t, s, 120)
	s.stop(syscall.SIGKILL, 10*time.Second)
	killed := time.Now()

	s = u.serve("--tools", "tools")
	if got := mtGet(t, s, task.TaskID); got.Status != "working" && got.Status != "failed" {
		t.Fatalf("tasks/get right after the restart = %+v", got)
	}
	msgs, _ := mtListen(t, s, task.TaskID)
	statuses := mtStatuses(msgs)
	if len(statuses) == 0 || statuses[len(statuses)-1] != task.TaskID+" failed" {
		t.Fatalf("listen stream after the restart: %v, want the task ending failed", statuses)
	}
	if took := time.Since(killed); took > 20*time.Second {
		t.Errorf("the killed task read failed %v after the kill, want within its lease (15 s) and a polling interval", took)
	}
	got := mtGet(t, s, task.TaskID)
	if got.Status != "failed" || !strings.Contains(got.StatusMessage, "stopped without recording it") {
		t.Errorf("tasks/get of the killed task = %+v, want failed saying its server stopped", got)
	}

	// Two servers sharing PostgreSQL: the other one reads the task of the
	// killed one working, then failed, while its own task goes on.
	if testing.Short() {
		return
	}
	u.write("pg/wield.yaml", fmt.Sprintf("store: %q\n", postgresURL(t)))
	a := u.serve("--tools", "tools", "--config", u.path("pg/wield.yaml"))
	b := u.serve("--tools", "tools", "--config", u.path("pg/wield.yaml"))
	doomed, alive := mtStart(t, a, 120), mtStart(t, b, 120)
	a.stop(syscall.SIGKILL, 10*time.Second)
	killed = time.Now()
	if got := mtGet(t, b, doomed.TaskID); got.Status != "working" {
		t.Errorf("the other server, right after the kill: %+v, want working (the lease may still be renewed)", got)
	}
	var last mtTask
	if !eventually(25*time.Second, func() bool { last = mtGet(t, b, doomed.TaskID); return last.Status == "failed" }) {
		t.Fatalf("the other server never read the killed server's task failed: %+v", last)
	}
	if took := time.Since(killed); took > 17*time.Second || !strings.Contains(last.StatusMessage, "stopped without recording it") {
		t.Errorf("the other server read %+v %v after the kill", last, took)
	}
	if got := mtGet(t, b, alive.TaskID); got.Status != "working" {
		t.Errorf("the living server's own task = %+v, want working (its lease renewed)", got)
	}
}

// mtSession is a raw MCP 2025-11-25 session with s's /mcp.
type mtSession struct {
	t  *testing.T
	s  *server
	id string
	n  int
	// notes are the notifications the last answer's event stream
	// carried before it, as "method status".
	notes []string
}

// mtOpen initialises a 2025-11-25 session that declares tasks, and
// returns it with the server's capabilities.
func mtOpen(t *testing.T, s *server) (*mtSession, map[string]json.RawMessage) {
	t.Helper()
	c := &mtSession{t: t, s: s}
	res, _ := c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tasks": map[string]any{}},
		"clientInfo": map[string]any{"name": "journey", "version": "1"}})
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(res, &init) != nil || c.id == "" {
		t.Fatalf("initialize: %s", res)
	}
	c.rpc("notifications/initialized", map[string]any{})
	return c, init.Capabilities
}

// rpc sends one message of the session; for a request it returns the
// result, or the error's code and message.
func (c *mtSession) rpc(method string, params map[string]any) (json.RawMessage, string) {
	c.t.Helper()
	c.n++
	msg := map[string]any{"jsonrpc": "2.0", "id": c.n, "method": method, "params": params}
	note := strings.HasPrefix(method, "notifications/")
	if note {
		delete(msg, "id")
	}
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest("POST", c.s.url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if c.id != "" {
		req.Header.Set("Mcp-Session-Id", c.id)
	}
	resp, err := (&http.Client{Timeout: commandLimit}).Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if c.id == "" {
		c.id = resp.Header.Get("Mcp-Session-Id")
	}
	if note {
		return nil, ""
	}
	text := string(raw)
	c.notes = nil
	for line := range strings.Lines(string(raw)) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Status string `json:"status"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(data), &m) == nil && m.Method != "" {
			c.notes = append(c.notes, m.Method+" "+m.Params.Status)
		} else {
			text = data
		}
	}
	var ans struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &ans); err != nil {
		c.t.Fatalf("%s: %d %s", method, resp.StatusCode, raw)
	}
	if ans.Error != nil {
		return nil, fmt.Sprint(ans.Error.Code, " ", ans.Error.Message)
	}
	return ans.Result, ""
}

// mtCoreTask is a task of the 2025-11-25 form.
type mtCoreTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
}

// TestJourneyMCPTasks2025: a 2025-11-25 session client of `wield serve`
// (SQLite) uses the in-core tasks: initialize declares capabilities.tasks,
// tools/list gives nap's execution.taskSupport "required", tools/call with
// params.task answers a task at once, tasks/result waits for the end (its
// event stream carrying notifications/tasks/status) and gives the sleep's
// result, tasks/list gives the session's task. After a
// restart, a new session reads the task by its ID, completed, and the
// Tasks extension of a 2026-07-28 request reads the same call record.
// tasks/cancel stops a long task (cancelled in its answer; the record says
// canceled) and refuses an ended one.
func TestJourneyMCPTasks2025(t *testing.T) {
	u := newUser(t)
	u.write("tools/nap.yaml", napTool)
	s := u.serve("--tools", "tools")
	c, caps := mtOpen(t, s)
	if string(caps["tasks"]) != `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}` {
		t.Errorf("capabilities.tasks = %s", caps["tasks"])
	}
	res, _ := c.rpc("tools/list", map[string]any{})
	if !strings.Contains(string(res), `"execution":{"taskSupport":"required"}`) {
		t.Errorf("tools/list = %s, want nap's execution.taskSupport", res)
	}
	start := time.Now()
	res, msg := c.rpc("tools/call", map[string]any{"name": "nap", "arguments": map[string]any{"duration": 2}, "task": map[string]any{"ttl": 60000}})
	var created struct {
		Task mtCoreTask `json:"task"`
	}
	if msg != "" || json.Unmarshal(res, &created) != nil || created.Task.Status != "working" || time.Since(start) > time.Second {
		t.Fatalf("tools/call with params.task = %s %s after %v", res, msg, time.Since(start))
	}
	id := created.Task.TaskID
	res, msg = c.rpc("tasks/result", map[string]any{"taskId": id})
	if msg != "" || !strings.Contains(string(res), `slept\":2`) || !strings.Contains(string(res), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Errorf("tasks/result = %s %s, want the sleep's result tied to the task", res, msg)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("tasks/result answered %v after the call of a 2 s task", took)
	}
	if fmt.Sprint(c.notes) != "[notifications/tasks/status working notifications/tasks/status completed]" {
		t.Errorf("tasks/result's event stream carried %v before the result, want the status working, then completed", c.notes)
	}
	if res, _ := c.rpc("tasks/list", map[string]any{}); !strings.Contains(string(res), `"taskId":"`+id+`","status":"completed"`) {
		t.Errorf("tasks/list = %s", res)
	}
	if _, msg := c.rpc("tasks/cancel", map[string]any{"taskId": id}); !strings.HasPrefix(msg, "-32602 ") {
		t.Errorf("tasks/cancel of an ended task: %q, want -32602", msg)
	}

	s.stop(syscall.SIGTERM, 15*time.Second)
	s = u.serve("--tools", "tools")
	c, _ = mtOpen(t, s)
	var got mtCoreTask
	if res, msg := c.rpc("tasks/get", map[string]any{"taskId": id}); msg != "" || json.Unmarshal(res, &got) != nil || got.Status != "completed" {
		t.Errorf("tasks/get after the restart, in a new session = %s %s", res, msg)
	}
	if ext := mtGet(t, s, id); ext.Status != "completed" {
		t.Errorf("the extension's tasks/get of the same task = %+v", ext)
	}

	res, _ = c.rpc("tools/call", map[string]any{"name": "nap", "arguments": map[string]any{"duration": 60}, "task": map[string]any{}})
	_ = json.Unmarshal(res, &created)
	start = time.Now()
	res, msg = c.rpc("tasks/cancel", map[string]any{"taskId": created.Task.TaskID})
	if msg != "" || json.Unmarshal(res, &got) != nil || got.Status != "cancelled" || time.Since(start) > 5*time.Second {
		t.Errorf("tasks/cancel of a running task = %s %s after %v, want cancelled", res, msg, time.Since(start))
	}
	if ok, typ, _ := mtRecord(t, s, created.Task.TaskID); ok || typ != "canceled" {
		t.Errorf("record of the canceled task: ok %v, %s", ok, typ)
	}
}

// TestJourneyMCPTasksTS: the official TypeScript SDK's client (1.32.2,
// installed by scripts/npm-up), in a 2025-11-25 session with `wield
// serve`, sees capabilities.tasks and nap's execution.taskSupport, calls
// nap as a task with its callToolStream (task created, statuses, the
// result), lists it, and cancels a long one, which then reads cancelled
// and is recorded canceled.
func TestJourneyMCPTasksTS(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed: this journey needs Node 20 or later")
	}
	root, err := filepath.Abs(filepath.Join("..", ".cache", "npm"))
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("WIELD_NPM_DIR"); d != "" {
		root = d
	}
	sdk := filepath.Join(root, "node_modules", "@modelcontextprotocol", "sdk")
	if _, err := os.Stat(filepath.Join(sdk, "dist", "esm", "experimental", "tasks", "client.js")); err != nil {
		t.Fatalf("the TypeScript SDK with tasks is not installed at %s: run scripts/npm-up", sdk)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "tasks_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	u := newUser(t)
	u.write("tools/nap.yaml", napTool)
	s := u.serve("--tools", "tools")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := exec.CommandContext(ctx, "node", script, sdk, s.url+"/mcp").CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s\nserver stderr:\n%s", err, raw, s.stderr)
	}
	var got struct {
		Caps      json.RawMessage `json:"caps"`
		Execution json.RawMessage `json:"execution"`
		Stream    []struct {
			Type, Status, TaskID, Text string
		} `json:"stream"`
		Listed      []string `json:"listed"`
		Canceled    string   `json:"canceled"`
		After, Long string
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("the TypeScript client said %s", raw)
	}
	if string(got.Caps) != `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}` || string(got.Execution) != `{"taskSupport":"required"}` {
		t.Errorf("the client saw capabilities.tasks %s and nap's execution %s", got.Caps, got.Execution)
	}
	n := len(got.Stream)
	if n < 3 || got.Stream[0].Type != "taskCreated" || got.Stream[0].Status != "working" || got.Stream[n-2].Status != "completed" ||
		got.Stream[n-1].Type != "result" || !strings.Contains(got.Stream[n-1].Text, `"slept":1`) {
		t.Fatalf("callToolStream gave %+v, want the task created, its statuses to completed, and the result", got.Stream)
	}
	if len(got.Listed) != 1 || got.Listed[0] != got.Stream[0].TaskID {
		t.Errorf("listTasks = %v, want the session's task %s", got.Listed, got.Stream[0].TaskID)
	}
	if got.Canceled != "cancelled" || got.After != "cancelled" {
		t.Errorf("cancelTask = %q, then getTask %q; want cancelled", got.Canceled, got.After)
	}
	if ok, typ, _ := mtRecord(t, s, got.Long); ok || typ != "canceled" {
		t.Errorf("record of the task the client canceled: ok %v, %s", ok, typ)
	}
}
