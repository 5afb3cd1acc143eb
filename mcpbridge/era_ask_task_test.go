package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
	"github.com/wieldhq/wield/toolfile"
)

// taskAskPost sends a request of a client that speaks tasks and can
// elicit, and returns the decoded answer.
func taskAskPost(t *testing.T, h http.Handler, method, name string, params map[string]any) (int, map[string]any) {
	t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcpbridge.TasksExtension: map[string]any{}}}
	w := srvEraSend(h, 3, method, name, params, caps, "")
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s: %q is not JSON: %v", method, w.Body.String(), err)
	}
	return w.Code, m
}

// TestServerTaskAsks checks a task whose tool asks two questions at once:
// the task is input_required with both on tasks/get (the CreateTaskResult
// carries none); a tasks/update answering one (with an unknown key, which
// is ignored) is acknowledged and leaves the other asked; a wrong answer
// is refused (400, -32602 naming the key) and leaves it asked; the last
// answer resumes the tool, and the task completes with its result.
func TestServerTaskAsks(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"}}
	pair := wield.Func("pair", "Asks two names at once", func(ctx context.Context, _ srvNoArgs) (string, error) {
		ans, err := mcpbridge.Ask(ctx,
			mcpbridge.Question{Key: "a", Elicit: &mcpbridge.ElicitQuestion{Message: "First?", Schema: schema}},
			mcpbridge.Question{Elicit: &mcpbridge.ElicitQuestion{Message: "Second?", Schema: schema}})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%v & %v", ans[0].Content["name"], ans[1].Content["name"]), nil
	})
	pair.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, pair)
	h := f.srv.Handler()

	_, created := taskAskPost(t, h, "tools/call", "pair", map[string]any{"name": "pair", "arguments": map[string]any{}})
	res, _ := created["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if id == "" || res["resultType"] != "task" || res["inputRequests"] != nil {
		t.Fatalf("tools/call: %v, want a task without inputRequests", created)
	}
	get := func() map[string]any {
		_, m := taskAskPost(t, h, "tasks/get", id, map[string]any{"taskId": id})
		r, _ := m["result"].(map[string]any)
		return r
	}
	var task map[string]any
	for range 500 {
		if task = get(); task["status"] != "working" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	irs, _ := task["inputRequests"].(map[string]any)
	if task["status"] != "input_required" || len(irs) != 2 || irs["a"] == nil || irs["wield_elicit_1"] == nil {
		t.Fatalf("tasks/get: %v, want input_required asking a and wield_elicit_1", task)
	}

	update := func(responses string) (int, map[string]any) {
		var rs map[string]any
		if err := json.Unmarshal([]byte(responses), &rs); err != nil {
			t.Fatal(err)
		}
		return taskAskPost(t, h, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": rs})
	}
	if code, m := update(`{"a":{"action":"accept","content":{"name":"Ann"}},"zzz":{"x":1}}`); code != http.StatusOK || m["result"].(map[string]any)["resultType"] != "complete" {
		t.Errorf("partial tasks/update: %d %v, want the empty ack", code, m)
	}
	irs, _ = get()["inputRequests"].(map[string]any)
	if len(irs) != 1 || irs["wield_elicit_1"] == nil {
		t.Errorf("after one answer: %v, want wield_elicit_1 alone still asked", irs)
	}
	code, m := update(`{"wield_elicit_1":{"action":"accept","content":{"name":5}}}`)
	e, _ := m["error"].(map[string]any)
	if msg, _ := e["message"].(string); code != http.StatusBadRequest || !strings.Contains(msg, "inputResponses.wield_elicit_1: the content does not match the schema asked") {
		t.Errorf("wrong answer: %d %v, want 400 naming the key", code, m)
	}
	if task = get(); task["status"] != "input_required" {
		t.Errorf("after a wrong answer: %v, want still input_required", task)
	}
	update(`{"wield_elicit_1":{"action":"accept","content":{"name":"Bo"}}}`)
	for range 500 {
		if task = get(); task["status"] == "completed" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var text string
	if r, ok := task["result"].(map[string]any); ok {
		if c, ok := r["content"].([]any); ok && len(c) == 1 {
			text, _ = c[0].(map[string]any)["text"].(string)
		}
	}
	if task["status"] != "completed" || text != "Ann & Bo" {
		t.Errorf("the task: %v, want completed with %q", task, "Ann & Bo")
	}
}

// TestServerTaskStaticNeeds checks that a task tool whose steps need a
// capability the client did not declare is refused with -32021 before a
// task is made, and is a task when the client declared it.
func TestServerTaskStaticNeeds(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"mcp_client": mcpbridge.ClientKind()}}
	set, err := l.Load(ctx, filepath.Join(t.TempDir(), "tools.yaml"), []byte(`
- name: muse
  description: Samples, as a task
  task: required
  entry:
    type: mcp_client
    steps:
      - sample: {prompt: Hi, as: reply}
    text: "{{.reply.text}}"
`))
	if err != nil {
		t.Fatal(err)
	}
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, set.Tools...)
	code, m := taskAskPost(t, f.srv.Handler(), "tools/call", "muse", map[string]any{"name": "muse", "arguments": map[string]any{}})
	e, _ := m["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if req, _ := data["requiredCapabilities"].(map[string]any); code != http.StatusBadRequest || e["code"] != float64(mcpbridge.CodeMissingCapability) || req["sampling"] == nil {
		t.Errorf("a task tool that samples, for a client without sampling: %d %v, want 400 and -32021 requiring sampling", code, m)
	}
	if page, err := store.Calls(ctx, wield.CallQuery{Tool: "muse"}); err != nil || len(page.Records) != 0 {
		t.Errorf("records: %v %v, want none", page, err)
	}
}

// TestServerTaskBeforeTask checks a task tool whose first step asks
// before_task: the tools/call answers input_required (no task, no state,
// no record); a wrong answer is refused (400, -32602 naming the key); the
// retry with the answer makes the task, whose tool is not asked again and
// completes with the answer. A before_task step that is not the first is
// an error of the file.
func TestServerTaskBeforeTask(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"mcp_client": mcpbridge.ClientKind()}}
	set, err := l.Load(ctx, filepath.Join(t.TempDir(), "tools.yaml"), []byte(`
- name: named
  description: Asks a name first, then works as a task
  task: required
  parameters:
    - {name: greeting, type: string}
  entry:
    type: mcp_client
    steps:
      - elicit: {message: "{{.greeting}}, who?", schema: {type: object, properties: {name: {type: string}}, required: [name]}, as: who}
        before_task: true
    text: "{{.greeting}}, {{.who.content.name}}"
`))
	if err != nil {
		t.Fatal(err)
	}
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, set.Tools...)
	h := f.srv.Handler()
	call := func(responses map[string]any) (int, map[string]any) {
		p := map[string]any{"name": "named", "arguments": map[string]any{"greeting": "Hi"}}
		if responses != nil {
			p["inputResponses"] = responses
		}
		return taskAskPost(t, h, "tools/call", "named", p)
	}
	_, m := call(nil)
	res, _ := m["result"].(map[string]any)
	irs, _ := res["inputRequests"].(map[string]any)
	q, _ := irs["who"].(map[string]any)
	params, _ := q["params"].(map[string]any)
	if res["resultType"] != "input_required" || params["message"] != "Hi, who?" || res["taskId"] != nil || res["requestState"] != nil {
		t.Fatalf("first tools/call: %v, want input_required asking who (no task, no state)", m)
	}
	if page, err := store.Calls(ctx, wield.CallQuery{Tool: "named"}); err != nil || len(page.Records) != 0 {
		t.Errorf("records after the question: %v %v, want none", page, err)
	}
	code, m := call(map[string]any{"who": map[string]any{"action": "accept", "content": map[string]any{"name": 1}}})
	if e, _ := m["error"].(map[string]any); code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(e["message"]), "inputResponses.who") {
		t.Errorf("wrong answer: %d %v, want 400 naming inputResponses.who", code, m)
	}
	_, m = call(map[string]any{"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}}})
	res, _ = m["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("retry with the answer: %v, want a task", m)
	}
	var task map[string]any
	for range 500 {
		_, m := taskAskPost(t, h, "tasks/get", id, map[string]any{"taskId": id})
		if task, _ = m["result"].(map[string]any); task["status"] != "working" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var text string
	if r, ok := task["result"].(map[string]any); ok {
		if c, ok := r["content"].([]any); ok && len(c) == 1 {
			text, _ = c[0].(map[string]any)["text"].(string)
		}
	}
	if task["status"] != "completed" || text != "Hi, Ann" {
		t.Errorf("the task: %v, want completed saying %q (not asked again)", task, "Hi, Ann")
	}

	_, err = l.Load(ctx, filepath.Join(t.TempDir(), "tools.yaml"), []byte(`
- name: late
  description: d
  entry:
    type: mcp_client
    steps:
      - log: {message: x}
      - roots: {as: r}
        before_task: true
    text: x
`))
	if err == nil || !strings.Contains(err.Error(), "step 2: before_task belongs to the first step only") {
		t.Errorf("before_task on step 2: %v, want an error saying it belongs to the first step", err)
	}
}

// TestServerTaskAskGoroutines counts goroutines: tasks whose tools ask and
// are never answered hold theirs until the question's wait (the
// requestState TTL) ends, and none is left once the tasks have ended. The
// count is taken after a first round, which made the engine's idle
// workers.
func TestServerTaskAskGoroutines(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}
	ask := wield.Func("ask", "Asks a name", func(ctx context.Context, _ srvNoArgs) (string, error) {
		_, _, err := mcpbridge.Elicit(ctx, "Name?", schema)
		return "", err
	})
	ask.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store, MaxSessionsPerClient: 64, InputRequired: &mcpbridge.InputRequiredOptions{
		Key: []byte(strings.Repeat("k", mcpbridge.MinStateKey)), Approvals: store, TTL: 300 * time.Millisecond}},
		&engine.Options{Store: store}, ask)
	h := f.srv.Handler()
	still := func() int {
		n := runtime.NumGoroutine()
		for deadline := time.Now().Add(srvWait); time.Now().Before(deadline); {
			time.Sleep(200 * time.Millisecond)
			m := runtime.NumGoroutine()
			if m == n {
				break
			}
			n = m
		}
		return n
	}
	const tasks = 10
	before := 0
	for round := range 2 {
		var ids []string
		for range tasks {
			_, m := taskAskPost(t, h, "tools/call", "ask", map[string]any{"name": "ask", "arguments": map[string]any{}})
			res, _ := m["result"].(map[string]any)
			id, _ := res["taskId"].(string)
			if id == "" {
				t.Fatalf("tools/call: %v", m)
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			status := ""
			for deadline := time.Now().Add(srvWait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				_, m := taskAskPost(t, h, "tasks/get", id, map[string]any{"taskId": id})
				r, _ := m["result"].(map[string]any)
				if status, _ = r["status"].(string); status == "completed" || status == "failed" || status == "cancelled" {
					break
				}
			}
			if status != "completed" && status != "failed" {
				t.Fatalf("task %s: %q once its question's wait ended, want it ended", id, status)
			}
		}
		if round == 0 {
			before = still()
			continue
		}
		if n := still(); n > before {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines once %d asking tasks ended, %d before:\n%s", n, tasks, before, buf[:runtime.Stack(buf, true)])
		}
	}
}
