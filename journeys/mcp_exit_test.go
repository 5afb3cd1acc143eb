//go:build unix

package journeys

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyMCPExit: `wield serve` (and `wield mcp --http`) holding what MCP clients leave open
// exits promptly on SIGTERM. A tool call parked on its question
// (input_required, its client never retries) is no request in flight: it
// must not hold the exit at all, nor must the streams a client keeps open
// (a session's GET stream, a subscriptions/listen). With a task running past the grace
// period, a subscriptions/listen stream following it and a 2025-11-25
// tasks/result waiting for it, the exit comes once the grace period is
// over, plus the margin the cut calls have to be recorded, no later.
func TestJourneyMCPExit(t *testing.T) {
	example, err := os.ReadFile("../examples/conformance/tools/client.yaml")
	if err != nil {
		t.Fatal(err)
	}
	park := func(t *testing.T, s *server) {
		t.Helper()
		_, m := mcp2026AskPost(t, s, 1, "")
		if r, _ := m["result"].(map[string]any); r == nil || r["resultType"] != "input_required" {
			t.Fatalf("test_elicitation answered %v, want input_required", m)
		}
	}

	t.Run("parked call only", func(t *testing.T) {
		u := newUser(t)
		u.write("tools/client.yaml", string(example))
		s := u.serve("--tools", "tools", "--grace", "20s")
		park(t, s)
		took := lcStop(t, s, syscall.SIGTERM, 30*time.Second)
		t.Logf("exit %v after SIGTERM with one parked call", took)
		if took > 1500*time.Millisecond {
			t.Errorf("exit took %v after SIGTERM with only a parked call (nothing in flight), want under 1.5 s", took)
		}
		var page struct {
			Records []lcRecord `json:"records"`
		}
		u.must("calls", "--tool", "test_elicitation", "--json").json(t, &page)
		// Canceled, or failed in the tool whose question the closing
		// server left unanswered (which comes first is a race).
		if len(page.Records) != 1 || page.Records[0].Result.OK ||
			(page.Records[0].Result.ErrorType != "canceled" && !strings.Contains(page.Records[0].Result.Error, "the MCP server closed")) {
			t.Errorf("the parked call's records after the exit: %+v, want one, ended by the shutdown", page.Records)
		}
	})

	for _, cmd := range []string{"serve", "mcp --http"} {
		t.Run("idle streams of "+cmd, func(t *testing.T) {
			// A 2025-11-25 session's standing GET stream and a 2026-07-28
			// listen for list changes: no call runs, nothing to wait for.
			u := newUser(t)
			var s *server
			if cmd == "serve" {
				s = u.serve("--grace", "20s")
			} else {
				s = u.mcpHTTP("--grace", "20s")
			}
			c, _ := mtOpen(t, s)
			get, _ := http.NewRequest("GET", s.url+"/mcp", nil)
			get.Header.Set("Accept", "text/event-stream")
			get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			get.Header.Set("Mcp-Session-Id", c.id)
			listen, _ := http.NewRequest("POST", s.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
			for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
				listen.Header.Set(k, v)
			}
			for _, req := range []*http.Request{get, listen} {
				resp, err := (&http.Client{Timeout: commandLimit}).Do(req)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("%s %s: %v %v", req.Method, req.Header.Get("Mcp-Protocol-Version"), err, resp)
				}
				go func() { io.Copy(io.Discard, resp.Body); resp.Body.Close() }()
			}
			time.Sleep(300 * time.Millisecond)
			took := lcStop(t, s, syscall.SIGTERM, 30*time.Second)
			t.Logf("wield %s: exit %v after SIGTERM with a session's GET stream and a listen stream open", cmd, took)
			if took > 1500*time.Millisecond {
				t.Errorf("exit took %v after SIGTERM with only idle streams open, want under 1.5 s", took)
			}
		})
	}

	t.Run("all open", func(t *testing.T) {
		u := newUser(t)
		u.write("tools/client.yaml", string(example))
		u.write("tools/nap.yaml", napTool)
		const grace = 3 * time.Second
		s := u.serve("--tools", "tools", "--grace", grace.String())
		park(t, s)
		task := mtStart(t, s, 60)
		// A listen stream following the task, read as it comes.
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "follow", "method": "subscriptions/listen", "params": map[string]any{
			"notifications": map[string]any{"taskIds": []string{task.TaskID}},
			"_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion": "2026-07-28",
				"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "journey", "version": "1"},
				"io.modelcontextprotocol/clientCapabilities": map[string]any{
					"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
				},
			},
		}})
		req, _ := http.NewRequest("POST", s.url+"/mcp", bytes.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
			req.Header.Set(k, v)
		}
		resp, err := (&http.Client{Timeout: commandLimit}).Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("subscriptions/listen: %v %v", err, resp)
		}
		listened := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			listened <- string(b)
		}()
		// A 2025-11-25 session's tasks/result waiting for a task of its own.
		c, _ := mtOpen(t, s)
		res, msg := c.rpc("tools/call", map[string]any{"name": "nap", "arguments": map[string]any{"duration": 60}, "task": map[string]any{}})
		var created struct {
			Task mtCoreTask `json:"task"`
		}
		if msg != "" || json.Unmarshal(res, &created) != nil || created.Task.TaskID == "" {
			t.Fatalf("tools/call with params.task = %s %s", res, msg)
		}
		waited := make(chan struct{})
		go func() {
			defer close(waited)
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "tasks/result", "params": map[string]any{"taskId": created.Task.TaskID}})
			req, _ := http.NewRequest("POST", s.url+"/mcp", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			req.Header.Set("Mcp-Session-Id", c.id)
			if resp, err := (&http.Client{Timeout: commandLimit}).Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		time.Sleep(300 * time.Millisecond) // the waits are under way (nothing shows them)
		took := lcStop(t, s, syscall.SIGTERM, 30*time.Second)
		t.Logf("exit %v after SIGTERM (grace %v) with a parked call, a task of 60 s, its listen stream and a tasks/result", took, grace)
		if limit := grace + 2500*time.Millisecond; took > limit {
			t.Errorf("exit took %v after SIGTERM, want under %v (grace %v and the cut margin)", took, limit, grace)
		}
		select {
		case got := <-listened:
			if !strings.Contains(got, "notifications/subscriptions/acknowledged") {
				t.Errorf("the listen stream carried %q", got)
			}
		case <-time.After(5 * time.Second):
			t.Error("the listen stream was still open 5 s after the exit")
		}
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
			t.Error("tasks/result still waited 5 s after the exit")
		}
	})
}

// TestJourneyMCPTaskOwner: on `wield serve` with keys, a task started with
// one key is unknown to another (tasks/get, tasks/cancel: -32602), which
// therefore cannot stop it; its own key reads it and cancels it.
func TestJourneyMCPTaskOwner(t *testing.T) {
	u := newUser(t)
	u.write("tools/nap.yaml", napTool)
	a, _ := makeKey(t, u, "--name", "a", "--rights", "call")
	b, _ := makeKey(t, u, "--name", "b", "--rights", "call")
	s := u.serve("--tools", "tools")
	rpc := func(key, method, name string, params map[string]any) (status string, errMsg string) {
		t.Helper()
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "journey", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{
				"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
			},
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		_, raw := s.do("POST", "/mcp", string(body), "Accept: application/json, text/event-stream",
			"Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: "+method, "Mcp-Name: "+name, "Authorization: Bearer "+key)
		var msg struct {
			Result struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &msg); err != nil {
			t.Fatalf("%s: %s", method, raw)
		}
		if msg.Error != nil {
			return "", msg.Error.Message
		}
		if method == "tools/call" {
			return msg.Result.TaskID, ""
		}
		return msg.Result.Status, ""
	}
	id, e := rpc(a, "tools/call", "nap", map[string]any{"name": "nap", "arguments": map[string]any{"duration": 60}})
	if id == "" {
		t.Fatalf("tools/call nap with key a: %s", e)
	}
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if _, e := rpc(b, m, id, map[string]any{"taskId": id}); !strings.Contains(e, "unknown task") {
			t.Errorf("%s of key a's task with key b: %q, want an unknown task", m, e)
		}
	}
	if st, e := rpc(a, "tasks/get", id, map[string]any{"taskId": id}); st != "working" {
		t.Errorf("key a's tasks/get: %q %q, want working", st, e)
	}
	if _, e := rpc(a, "tasks/cancel", id, map[string]any{"taskId": id}); e != "" {
		t.Errorf("key a's tasks/cancel: %q", e)
	}
	ok := eventually(10*time.Second, func() bool { st, _ := rpc(a, "tasks/get", id, map[string]any{"taskId": id}); return st == "cancelled" })
	if !ok {
		t.Error("key a's task did not read cancelled after its tasks/cancel")
	}
}

// TestJourneyMCPExitRemoteTask: two `wield serve` share PostgreSQL; a task
// runs on the first. On the second, 2025-11-25 tasks/result requests wait
// for it, one answered in JSON and one in an event stream. SIGTERM to the
// second: it exits at once, not at the end of its grace period (it did:
// nothing there would end those waits); the JSON wait is answered 503 with
// Retry-After, saying to ask again, the event stream closes without a
// result, and the task goes on on the first server, where tasks/result
// asked again gives its result.
func TestJourneyMCPExitRemoteTask(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	if testing.Short() {
		t.Skip("uses PostgreSQL")
	}
	u := newUser(t)
	u.write("tools/nap.yaml", napTool)
	u.write("pg/wield.yaml", fmt.Sprintf("store: %q\n", postgresURL(t)))
	a := u.serve("--tools", "tools", "--config", u.path("pg/wield.yaml"))
	const grace = 20 * time.Second
	b := u.serve("--tools", "tools", "--config", u.path("pg/wield.yaml"), "--grace", grace.String())
	task := mtStart(t, a, 8)

	c, _ := mtOpen(t, b)
	type answer struct {
		code       int
		retryAfter string
		body       string
		err        error
	}
	wait := func(accept string) <-chan answer {
		out := make(chan answer, 1)
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tasks/result", "params": map[string]any{"taskId": task.TaskID}})
		req, _ := http.NewRequest("POST", b.url+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", c.id)
		go func() {
			resp, err := (&http.Client{Timeout: commandLimit}).Do(req)
			if err != nil {
				out <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			out <- answer{resp.StatusCode, resp.Header.Get("Retry-After"), string(raw), err}
		}()
		return out
	}
	plain := wait("application/json")
	stream := wait("application/json, text/event-stream")
	time.Sleep(500 * time.Millisecond) // the waits are under way (nothing shows them)
	select {
	case got := <-plain:
		t.Fatalf("tasks/result answered before the shutdown: %+v", got)
	default:
	}

	took := lcStop(t, b, syscall.SIGTERM, 30*time.Second)
	t.Logf("exit %v after SIGTERM (grace %v) with two tasks/result waiting for a task of the other server", took, grace)
	if took > 5*time.Second {
		t.Errorf("exit took %v after SIGTERM, want well within the grace of %v (under 5 s): the waits are for another server's task", took, grace)
	}
	select {
	case got := <-plain:
		if got.err != nil || got.code != http.StatusServiceUnavailable || got.retryAfter == "" ||
			!strings.Contains(got.body, "shutting down") || !strings.Contains(got.body, "ask tasks/result again") || !strings.Contains(got.body, task.TaskID) {
			t.Errorf("the JSON tasks/result at the shutdown: %+v; want 503 with Retry-After, naming the task and saying to ask again", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("the JSON tasks/result had no answer 5 s after the exit")
	}
	select {
	case got := <-stream:
		if got.code != 200 || !strings.Contains(got.body, "notifications/tasks/status") || strings.Contains(got.body, `"result"`) {
			t.Errorf("the streamed tasks/result at the shutdown: %+v; want its status, then the stream closed without a result", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("the streamed tasks/result was still open 5 s after the exit")
	}

	// Nothing lost: the task runs on, and the first server gives its
	// result to tasks/result asked again.
	if got := mtGet(t, a, task.TaskID); got.Status != "working" && got.Status != "completed" {
		t.Errorf("the task after the other server's exit: %+v, want it running on or completed", got)
	}
	ca, _ := mtOpen(t, a)
	res, msg := ca.rpc("tasks/result", map[string]any{"taskId": task.TaskID})
	if msg != "" || !strings.Contains(string(res), `\"slept\":8`) {
		t.Errorf("tasks/result asked again of the first server: %s %s, want the nap's result", res, msg)
	}
}

// TestJourneyMCPDeafServerSaid: a stdio server that does not answer and
// does not exit when its stdin is closed (`sleep 300`) holds `wield list`
// for its timeout and then for the 5 s MCP's stdio transport gives it to
// exit; the wait is said on stderr ("did not exit when its stdin was
// closed; sending SIGTERM", naming the server), as docs/mcp.md says, where
// it was logged at INFO, below the WARN wield's importer logs at, and the
// person saw five silent seconds. The server does not outlive wield.
func TestJourneyMCPDeafServerSaid(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "mcp_servers:\n  - {name: deaf, command: [sh, -c, 'echo $$ > deaf.pid; exec sleep 300'], timeout: 1s}\n")
	r := u.wield("list", "--config", "wield.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, "did not exit when its stdin was closed; sending SIGTERM") || !strings.Contains(r.stderr, "server=deaf") {
		t.Errorf("want exit 0 and the SIGTERM said, naming the server:\n%s", r)
	}
	if r.took > 15*time.Second {
		t.Errorf("took %v; want about 6 s (1 s timeout, 5 s grace)", r.took)
	}
	b, err := os.ReadFile(u.path("deaf.pid"))
	if err != nil {
		t.Fatalf("the server did not start: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid > 0 && syscall.Kill(pid, 0) == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the server %d outlived wield list", pid)
	}
}
