//go:build unix

package journeys

import (
	"encoding/json"
	"fmt"
	"strings"
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
