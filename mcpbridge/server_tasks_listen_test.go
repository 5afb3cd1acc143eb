package mcpbridge_test

import (
	"bufio"
	"bytes"
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

// listenMsg is one message of a subscriptions/listen stream.
type listenMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
		TaskID        string          `json:"taskId"`
		Status        string          `json:"status"`
		StatusMessage string          `json:"statusMessage"`
		Result        json.RawMessage `json:"result"`
	} `json:"params"`
	Result *struct {
		ResultType string `json:"resultType"`
	} `json:"result"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// listenOpen opens a subscriptions/listen stream for task IDs on a real
// HTTP server and returns its messages as they come, closed at the
// stream's end.
func listenOpen(t *testing.T, ctx context.Context, url string, ids []string, speaksTasks bool) (int, <-chan listenMsg) {
	t.Helper()
	caps := map[string]any{}
	if speaksTasks {
		caps["extensions"] = map[string]any{mcpbridge.TasksExtension: map[string]any{}}
	}
	body := srvEraBodyOf("sub-1", "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": ids}}, caps, "follower")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", bytes.NewReader(body))
	srvSetEraHeaders(req.Header, "subscriptions/listen", "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan listenMsg, 64)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data: ") && !strings.HasPrefix(line, "{") {
				continue
			}
			var m listenMsg
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m) == nil {
				out <- m
			}
		}
	}()
	return resp.StatusCode, out
}

// listenNext is the stream's next message, within five seconds.
func listenNext(t *testing.T, ch <-chan listenMsg) (listenMsg, bool) {
	t.Helper()
	select {
	case m, ok := <-ch:
		return m, ok
	case <-time.After(5 * time.Second):
		t.Fatal("no message on the listen stream within 5s")
		return listenMsg{}, false
	}
}

// TestServerTaskListen: a 2026-07-28 client that declared the Tasks
// extension follows tasks on subscriptions/listen: the acknowledgement
// names the tasks known (not an unknown ID, nor one twice), each task's
// state comes at once, a change comes as notifications/tasks with the
// task as tasks/get gives it, and the stream ends with its result once
// every task followed has ended. A client without the extension gets
// -32021; too many IDs are refused; a stream whose client is gone does not
// stall the tasks.
func TestServerTaskListen(t *testing.T) {
	ctx := context.Background()
	store := srvTaskStore(t)
	release := make(chan struct{})
	slow := srvSlowTask(release, wield.TaskRequired)
	quick := wield.Func("quick", "Answers at once.", func(context.Context, srvNoArgs) (string, error) { return "quick", nil })
	quick.Task = wield.TaskRequired
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow, quick)
	h := f.srv.Handler()
	ts := httptest.NewServer(h)
	defer ts.Close()

	start := func(name string) string {
		r := taskPost(t, h, "tools/call", name, map[string]any{"name": name, "arguments": map[string]any{}}, true)
		if r.Result.ResultType != "task" {
			t.Fatalf("tools/call %s = %+v", name, r)
		}
		return r.Result.TaskID
	}
	a, b := start("slow"), start("quick")
	taskUntil(t, h, b, "completed")

	// A follower that never reads: the tasks go on without it.
	lctx, stopIdle := context.WithCancel(ctx)
	defer stopIdle()
	if code, _ := listenOpen(t, lctx, ts.URL, []string{a}, true); code != 200 {
		t.Fatalf("idle listen: HTTP %d", code)
	}

	code, ch := listenOpen(t, ctx, ts.URL, []string{a, b, a, "no-such-task"}, true)
	if code != 200 {
		t.Fatalf("listen: HTTP %d", code)
	}
	ack, _ := listenNext(t, ch)
	if ack.Method != "notifications/subscriptions/acknowledged" || fmt.Sprint(ack.Params.Notifications.TaskIDs) != fmt.Sprint([]string{a, b}) ||
		string(ack.Params.Meta["io.modelcontextprotocol/subscriptionId"]) != `"sub-1"` {
		t.Fatalf("first message = %+v, want the acknowledgement of [%s %s] for sub-1", ack, a, b)
	}
	got := map[string]string{}
	for range 2 {
		m, _ := listenNext(t, ch)
		if m.Method != "notifications/tasks" {
			t.Fatalf("message = %+v, want notifications/tasks", m)
		}
		got[m.Params.TaskID] = m.Params.Status
	}
	if got[a] != "working" || got[b] != "completed" {
		t.Fatalf("states at subscription = %v, want %s working and %s completed", got, a, b)
	}
	close(release)
	m, _ := listenNext(t, ch)
	if m.Method != "notifications/tasks" || m.Params.TaskID != a || m.Params.Status != "completed" || !strings.Contains(string(m.Params.Result), "released") {
		t.Fatalf("after the release: %+v (result %s), want %s completed with its result", m, m.Params.Result, a)
	}
	end, _ := listenNext(t, ch)
	if string(end.ID) != `"sub-1"` || end.Result == nil || end.Result.ResultType != "complete" {
		t.Fatalf("last message = %+v, want the listen's result", end)
	}
	if _, open := listenNext(t, ch); open {
		t.Fatal("the stream goes on after its result")
	}

	// Without the extension: -32021.
	_, ch = listenOpen(t, ctx, ts.URL, []string{a}, false)
	if m, _ := listenNext(t, ch); m.Error == nil || m.Error.Code != mcpbridge.CodeMissingCapability {
		t.Fatalf("listen without the extension = %+v, want error %d", m, mcpbridge.CodeMissingCapability)
	}
	// More IDs than a stream follows.
	many := make([]string, 65)
	for i := range many {
		many[i] = fmt.Sprint("t", i)
	}
	if code, ch := listenOpen(t, ctx, ts.URL, many, true); code != http.StatusBadRequest {
		m, _ := listenNext(t, ch)
		t.Fatalf("listen for 65 tasks: HTTP %d %+v, want 400", code, m)
	}
}
