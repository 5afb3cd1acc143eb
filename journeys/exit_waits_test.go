//go:build unix

package journeys

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyExitWaits: `wield serve` with a grace period of 20 s, holding
// what waits on a person or on nothing: a REST call of a confirm tool
// waiting for its approval, a 2025-11-25 MCP tools/call of it waiting too,
// and an event stream (GET /v1/events, the console's stream). SIGTERM: the
// server exits at once, not when the grace period ends (it did, with the
// calls); both calls are answered canceled, saying the server shut down
// and the approval stays pending, and the event stream closes. After a
// restart both approvals are approved from the CLI: each call runs once
// and is recorded.
func TestJourneyExitWaits(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	const grace = 20 * time.Second
	s := u.serve("--tools", "tools", "--grace", grace.String())

	type answer struct {
		code int
		body string
		err  error
	}
	send := func(req *http.Request) <-chan answer {
		out := make(chan answer, 1)
		go func() {
			resp, err := (&http.Client{Timeout: commandLimit}).Do(req)
			if err != nil {
				out <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			out <- answer{resp.StatusCode, string(raw), err}
		}()
		return out
	}
	restReq, _ := http.NewRequest("POST", s.url+"/v1/tools/mark/call", strings.NewReader(`{"arguments":{"message":"rest"}}`))
	restReq.Header.Set("Content-Type", "application/json")
	rest := send(restReq)

	c, _ := mtOpen(t, s) // a client with no elicitation: the approval waits in the inbox
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": map[string]any{"name": "mark", "arguments": map[string]any{"message": "mcp"}}})
	mcpReq, _ := http.NewRequest("POST", s.url+"/mcp", bytes.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": c.id} {
		mcpReq.Header.Set(k, v)
	}
	viaMCP := send(mcpReq)

	evReq, _ := http.NewRequest("GET", s.url+"/v1/events", nil)
	evReq.Header.Set("Accept", "text/event-stream")
	stream := send(evReq)

	ids := pendingIDs(t, u, 2)
	took := lcStop(t, s, syscall.SIGTERM, 30*time.Second)
	t.Logf("exit %v after SIGTERM (grace %v) with two calls waiting for approval and an event stream", took, grace)
	if took > 5*time.Second {
		t.Errorf("exit took %v after SIGTERM, want well within the grace of %v (under 5 s): the calls wait for a person", took, grace)
	}
	receive := func(what string, ch <-chan answer) answer {
		t.Helper()
		select {
		case a := <-ch:
			return a
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no answer 5 s after the exit", what)
			return answer{}
		}
	}
	for _, w := range []struct {
		what string
		ch   <-chan answer
	}{{"the REST call", rest}, {"the MCP tools/call", viaMCP}} {
		a := receive(w.what, w.ch)
		t.Logf("%s at the shutdown: %d %s", w.what, a.code, a.body)
		if a.err != nil || !strings.Contains(a.body, "the server shut down while the call waited for approval") || !strings.Contains(a.body, "stays pending") {
			t.Errorf("%s waiting for approval, at the shutdown: %d %q %v; want canceled, saying the approval stays pending", w.what, a.code, a.body, a.err)
		}
	}
	if a := receive("the event stream", stream); a.code != 200 {
		t.Errorf("the event stream: %d %v", a.code, a.err)
	}
	if got := ranLines(t, u); got != "" {
		t.Fatalf("ran before approval: %q", got)
	}

	// Nothing lost: approved after the restart, each call runs once and
	// is recorded.
	s = u.serve("--tools", "tools")
	for _, id := range ids {
		u.must("approvals", "approve", id)
	}
	var recs []record
	if !eventually(10*time.Second, func() bool { recs = records(t, s, "mark"); return len(recs) == 2 }) {
		t.Fatalf("%d records of the calls approved after the restart, want 2:\n%s", len(recs), s.stderr)
	}
	for _, r := range recs {
		if !r.Result.OK {
			t.Errorf("a call approved after the restart: %+v", r.Result)
		}
	}
	if got := ranLines(t, u); got != "rest\nmcp\n" && got != "mcp\nrest\n" {
		t.Errorf("ran.txt = %q, want each call once", got)
	}
	lcStop(t, s, syscall.SIGTERM, 10*time.Second)
}

// TestJourneyExitTaskQuestion: `wield serve --grace 20s` with a 2026-07-28
// task waiting for its client's answer (input_required): SIGTERM closes
// the listener, so no tasks/update can come; the question fails at once,
// the task ends as its tool decides and is recorded, and the server exits
// at once (it waited for the grace period). After the restart the task
// reads ended, its record saying the server was shutting down.
func TestJourneyExitTaskQuestion(t *testing.T) {
	u := newUser(t)
	u.write("tools/ask.yaml", askManyTools)
	const grace = 20 * time.Second
	s := u.serve("--tools", "tools", "--grace", grace.String())
	const caps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	post := func(s *server, method, name, params string) map[string]any {
		t.Helper()
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s,%s}}`, method, params, meta)
		code, b := s.do("POST", "/mcp", body, "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: "+method, "Mcp-Name: "+name)
		raw := b
		for line := range strings.Lines(string(b)) {
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				raw = []byte(d)
			}
		}
		var m struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || m.Result == nil {
			t.Fatalf("%s answered %d %q", method, code, b)
		}
		return m.Result
	}
	id, _ := post(s, "tools/call", "confirm_later", `"name":"confirm_later","arguments":{}`)["taskId"].(string)
	if id == "" {
		t.Fatal("confirm_later: no task")
	}
	if !eventually(5*time.Second, func() bool { return post(s, "tasks/get", id, `"taskId":"`+id+`"`)["status"] == "input_required" }) {
		t.Fatal("the task never read input_required")
	}
	took := lcStop(t, s, syscall.SIGTERM, 30*time.Second)
	t.Logf("exit %v after SIGTERM (grace %v) with a task waiting for its client's answer", took, grace)
	if took > 5*time.Second {
		t.Errorf("exit took %v after SIGTERM, want well within the grace of %v (under 5 s): no answer can reach the task", took, grace)
	}
	s = u.serve("--tools", "tools")
	task := post(s, "tasks/get", id, `"taskId":"`+id+`"`)
	if task["status"] == "working" || task["status"] == "input_required" {
		t.Errorf("the task after the restart: %v, want it ended", task)
	}
	if ok, _, msg := mtRecord(t, s, id); ok || !strings.Contains(msg, "the server is shutting down") {
		t.Errorf("the task's record: ok %v, %q; want its question's failure, saying the server was shutting down", ok, msg)
	}
	lcStop(t, s, syscall.SIGTERM, 10*time.Second)
}

// TestJourneyExitLongMCPCall: a tools/call over MCP longer than the grace
// period (2 s), of either protocol era, through `wield serve` and `wield
// mcp --http`: SIGTERM lets it run the grace period, then cuts it; its
// client is answered that the grace period ended, and the process exits
// within the grace period and the cut margin.
func TestJourneyExitLongMCPCall(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	for _, cmd := range []string{"serve", "mcp --http"} {
		for _, era := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(cmd+" "+era, func(t *testing.T) {
				u := newUser(t)
				var s *server
				if cmd == "serve" {
					s = u.serve("--grace", "2s")
				} else {
					s = u.mcpHTTP("--grace", "2s")
				}
				params := map[string]any{"name": "sleep", "arguments": map[string]any{"duration": 25}}
				headers := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": era}
				if era == "2025-11-25" {
					c, _ := mtOpen(t, s)
					headers["Mcp-Session-Id"] = c.id
				} else {
					params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": era, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
					headers["Mcp-Method"], headers["Mcp-Name"] = "tools/call", "sleep"
				}
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
				req, _ := http.NewRequest("POST", s.url+"/mcp", bytes.NewReader(body))
				for k, v := range headers {
					req.Header.Set(k, v)
				}
				answered := make(chan string, 1)
				go func() {
					resp, err := (&http.Client{Timeout: commandLimit}).Do(req)
					if err != nil {
						answered <- err.Error()
						return
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					answered <- string(b)
				}()
				time.Sleep(500 * time.Millisecond) // the call is under way (nothing shows it)
				took := lcStop(t, s, syscall.SIGTERM, 30*time.Second)
				t.Logf("exit %v after SIGTERM (grace 2s) with a tools/call of 25 s", took)
				if took > 4500*time.Millisecond {
					t.Errorf("exit took %v, want within the grace of 2 s and the cut margin of 2 s", took)
				}
				select {
				case got := <-answered:
					if !strings.Contains(got, "the server shut down: its grace period of 2s ended") {
						t.Errorf("the cut call's answer: %s, want it saying the grace period ended", got)
					}
				case <-time.After(5 * time.Second):
					t.Error("the cut call had no answer 5 s after the exit")
				}
			})
		}
	}
}
