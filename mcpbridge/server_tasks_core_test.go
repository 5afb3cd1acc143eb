package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

// coreSession is a raw 2025-11-25 HTTP session.
type coreSession struct {
	t   *testing.T
	h   http.Handler
	id  string
	seq int
	// notes are the methods and statuses of the notifications the last
	// answer's event stream carried before it.
	notes []string
}

// coreRPC sends one request of the session and returns the answer's
// result and error, raw.
func (c *coreSession) rpc(method string, params any) (result json.RawMessage, errObj *struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}) {
	c.t.Helper()
	c.seq++
	msg := map[string]any{"jsonrpc": "2.0", "id": c.seq, "method": method, "params": params}
	note := strings.HasPrefix(method, "notifications/")
	if note {
		delete(msg, "id")
	}
	body, _ := json.Marshal(msg)
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(string(body)))
	r.Host = "127.0.0.1"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if c.id != "" {
		r.Header.Set("Mcp-Session-Id", c.id)
	}
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, r)
	if c.id == "" {
		c.id = w.Header().Get("Mcp-Session-Id")
	}
	if note {
		if w.Code != http.StatusAccepted {
			c.t.Fatalf("%s: HTTP %d %s", method, w.Code, w.Body)
		}
		return nil, nil
	}
	text := w.Body.String()
	c.notes = nil
	for line := range strings.Lines(w.Body.String()) {
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
		c.t.Fatalf("%s: answer %q: %v", method, w.Body.String(), err)
	}
	return ans.Result, ans.Error
}

type coreTask struct {
	TaskID        string  `json:"taskId"`
	Status        string  `json:"status"`
	StatusMessage string  `json:"statusMessage"`
	CreatedAt     string  `json:"createdAt"`
	LastUpdatedAt string  `json:"lastUpdatedAt"`
	TTL           *int64  `json:"ttl"`
	PollInterval  float64 `json:"pollInterval"`
}

// TestServerCoreTasks follows the in-core tasks of MCP 2025-11-25 in a raw
// session: initialize declares capabilities.tasks, tools/list gives
// execution.taskSupport of the tools marked task, a tools/call with
// params.task answers a CreateTaskResult whose task ID is the call's;
// tasks/get reads it working, tasks/result waits for its end (its event
// stream telling the status, notifications/tasks/status) and answers the
// tool's result tied to the task, tasks/list gives the session's tasks,
// tasks/cancel stops a running one (cancelled before the answer) and
// refuses an ended one with -32602; another session lists none of them;
// a task-required tool called without params.task is refused with -32601
// for a client that declared tasks, and runs plainly for one that did not; a tool not marked task refuses
// params.task with -32601. The same task reads through the extension's
// tasks/get of a 2026-07-28 request: one record, two wire forms.
func TestServerCoreTasks(t *testing.T) {
	ctx := context.Background()
	store := srvTaskStore(t)
	release := make(chan struct{})
	// Not srvSlowTask: the test makes release anew for its second task, so
	// the tool reads the variable, not the first channel.
	slow := wield.Func("slow", "Waits to be released.", func(ctx context.Context, _ srvNoArgs) (string, error) {
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	slow.Task = wield.TaskOptional
	must := wield.Func("must", "Always a task.", func(context.Context, srvNoArgs) (string, error) { return "fine", nil })
	must.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow, must)
	h := f.srv.Handler()
	c := &coreSession{t: t, h: h}
	res, e := c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tasks": map[string]any{}},
		"clientInfo": map[string]any{"name": "core", "version": "1"}})
	if e != nil || c.id == "" {
		t.Fatalf("initialize: %s %+v", res, e)
	}
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(res, &init) != nil || string(init.Capabilities["tasks"]) != `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}` || init.Capabilities["tools"] == nil {
		t.Fatalf("initialize result %s: want capabilities.tasks beside the others", res)
	}
	c.rpc("notifications/initialized", map[string]any{})

	res, _ = c.rpc("tools/list", map[string]any{})
	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		want := map[string]string{"slow": "optional", "must": "required"}[tl.Name]
		if (want != "") != (tl.Execution != nil) || (tl.Execution != nil && tl.Execution.TaskSupport != want) {
			t.Errorf("tools/list: %s has execution %+v", tl.Name, tl.Execution)
		}
	}

	res, e = c.rpc("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}, "task": map[string]any{"ttl": 60000}})
	var created struct {
		Task coreTask `json:"task"`
	}
	if e != nil || json.Unmarshal(res, &created) != nil || created.Task.Status != "working" || created.Task.TaskID == "" || created.Task.PollInterval <= 0 || created.Task.CreatedAt == "" {
		t.Fatalf("tools/call with params.task = %s %+v, want a CreateTaskResult", res, e)
	}
	id := created.Task.TaskID
	var got coreTask
	res, _ = c.rpc("tasks/get", map[string]any{"taskId": id})
	if json.Unmarshal(res, &got) != nil || got.Status != "working" || got.TaskID != id {
		t.Errorf("tasks/get = %s", res)
	}
	// tasks/result waits for the end.
	done := make(chan json.RawMessage, 1)
	c2 := &coreSession{t: t, h: h, id: c.id, seq: 100}
	go func() {
		r, _ := c2.rpc("tasks/result", map[string]any{"taskId": id})
		done <- r
	}()
	select {
	case r := <-done:
		t.Fatalf("tasks/result answered %s before the task ended", r)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	var result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	select {
	case r := <-done:
		if json.Unmarshal(r, &result) != nil || len(result.Content) != 1 || result.Content[0].Text != "released" || string(result.Meta["io.modelcontextprotocol/related-task"]) != `{"taskId":"`+id+`"}` {
			t.Errorf("tasks/result = %s, want the tool's result tied to the task", r)
		}
		if fmt.Sprint(c2.notes) != "[notifications/tasks/status working notifications/tasks/status completed]" {
			t.Errorf("tasks/result's stream carried %v before the answer, want the status working, then completed", c2.notes)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tasks/result did not answer once the task ended")
	}
	if rec, err := store.Call(ctx, id); err != nil || !rec.Result.OK || rec.Call.Caller.Variables["wield_mcp_task"] != true {
		t.Errorf("record of the task: %+v, %v", rec, err)
	}
	// One record, two forms: the extension reads it too.
	if ext := taskPost(t, h, "tasks/get", id, map[string]any{"taskId": id}, true); ext.Result.Status != "completed" {
		t.Errorf("the extension's tasks/get of a 2025-11-25 task = %+v", ext.Result)
	}
	if _, e := c.rpc("tasks/cancel", map[string]any{"taskId": id}); e == nil || e.Code != -32602 {
		t.Errorf("tasks/cancel of an ended task: %+v, want -32602", e)
	}

	// tasks/cancel of a running task: cancelled before the answer.
	release = make(chan struct{})
	res, _ = c.rpc("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}, "task": map[string]any{}})
	_ = json.Unmarshal(res, &created)
	second := created.Task.TaskID
	res, e = c.rpc("tasks/cancel", map[string]any{"taskId": second})
	if e != nil || json.Unmarshal(res, &got) != nil || got.Status != "cancelled" {
		t.Errorf("tasks/cancel = %s %+v, want the task cancelled", res, e)
	}

	res, _ = c.rpc("tasks/list", map[string]any{})
	var tl struct {
		Tasks      []coreTask `json:"tasks"`
		NextCursor string     `json:"nextCursor"`
	}
	if json.Unmarshal(res, &tl) != nil || len(tl.Tasks) != 2 || tl.Tasks[0].TaskID != second || tl.Tasks[1].TaskID != id || tl.NextCursor != "" {
		t.Errorf("tasks/list = %s, want the session's two tasks, newest first", res)
	}
	// Another session lists none of them.
	other := &coreSession{t: t, h: h}
	other.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "other", "version": "1"}})
	if res, e := other.rpc("tasks/list", map[string]any{}); e != nil || string(res) != `{"tasks":[]}` {
		t.Errorf("tasks/list of another session = %s %+v, want none", res, e)
	}
	// A task-required tool called plainly: -32601 from a client that
	// declared tasks, the plain call for one that did not.
	if _, e := c.rpc("tools/call", map[string]any{"name": "must", "arguments": map[string]any{}}); e == nil || e.Code != -32601 {
		t.Errorf("a task-required tool without params.task, from a client that knows tasks: %+v, want -32601", e)
	}
	if res, e := other.rpc("tools/call", map[string]any{"name": "must", "arguments": map[string]any{}}); e != nil || !strings.Contains(string(res), "fine") {
		t.Errorf("a task-required tool from a client that declared no tasks = %s %+v, want the plain result", res, e)
	}

	// A tool not marked task.
	if _, e := c.rpc("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{}}); e == nil || e.Code != -32601 {
		t.Errorf("params.task on a tool not marked task: %+v, want -32601", e)
	}
	if res, e := c.rpc("tasks/get", map[string]any{"taskId": "nope"}); e == nil || e.Code != -32602 {
		t.Errorf("tasks/get of an unknown task = %s %+v", res, e)
	}
}
