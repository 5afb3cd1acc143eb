//go:build unix

package journeys

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// progressEvents reads /v1/events for the execution_progress events of one
// tool's call, up to its execution_completed, as "progress/total message".
func progressEvents(ctx context.Context, t *testing.T, s *server) func(tool string) (events []string, callIDs map[string]bool) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/events?type=execution_progress,execution_completed", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/events: %v %v", err, resp)
	}
	lines := make(chan string, 256)
	go func() {
		defer resp.Body.Close()
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				lines <- data
			}
		}
	}()
	return func(tool string) ([]string, map[string]bool) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		var got []string
		ids := map[string]bool{}
		for {
			select {
			case data, ok := <-lines:
				if !ok {
					t.Fatalf("the stream ended; read %q", got)
				}
				var e struct {
					Type, Tool, Message string
					CallID              string `json:"call_id"`
					Progress            *struct{ Progress, Total float64 }
				}
				if err := json.Unmarshal([]byte(data), &e); err != nil {
					t.Fatalf("event %s: %v", data, err)
				}
				if e.Tool != tool {
					continue
				}
				ids[e.CallID] = true
				if e.Type == "execution_completed" {
					return got, ids
				}
				got = append(got, strings.TrimSpace(fmt.Sprintf("%v/%v %s", e.Progress.Progress, e.Progress.Total, e.Message)))
			case <-timeout:
				t.Fatalf("no execution_completed of %s within 30 s; read %q", tool, got)
			}
		}
	}
}

// TestJourneyProgressEvents: a REST caller watching /v1/events sees how far
// a running call has got: the built-in sleep's seconds, and the progress
// notifications of an imported MCP server's long operation (the official
// server-everything over stdio), which wield asks the server for although
// the caller is no MCP client; each event names the call the REST answer
// names.
func TestJourneyProgressEvents(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	entry := everythingEntry(t)
	u := newUser(t)
	u.write("wield.yaml", `mcp_servers:
  - name: ev
    command: [node, `+entry+`, stdio]
    timeout: 60s
`)
	s := u.serve("--config", "wield.yaml")
	const long = "ev__trigger-long-running-operation"
	if !s.listed(long, 60*time.Second) {
		t.Fatalf("%s never appeared in /v1/tools:\n%s", long, s.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	next := progressEvents(ctx, t, s)

	callID := func(body []byte) string {
		var r struct {
			OK     bool   `json:"ok"`
			CallID string `json:"call_id"`
		}
		if err := json.Unmarshal(body, &r); err != nil || !r.OK || r.CallID == "" {
			t.Fatalf("call answered %s (%v)", body, err)
		}
		return r.CallID
	}

	code, body := s.do("POST", "/v1/tools/sleep/call", `{"arguments":{"duration":2.5}}`)
	if code != 200 {
		t.Fatalf("sleep: %d %s", code, body)
	}
	id := callID(body)
	got, ids := next("sleep")
	// A report each second and the last: 1/2.5, 2/2.5, 2.5/2.5 (a loaded
	// machine may let the end overtake the second tick).
	if len(got) < 2 || got[0] != "1/2.5" || got[len(got)-1] != "2.5/2.5" || len(ids) != 1 || !ids[id] {
		t.Errorf("sleep's progress events %q of calls %v, want 1/2.5 … 2.5/2.5 of %s", got, ids, id)
	}

	code, body = s.do("POST", "/v1/tools/"+long+"/call", `{"arguments":{"duration":3,"steps":3}}`)
	if code != 200 {
		t.Fatalf("%s: %d %s", long, code, body)
	}
	id = callID(body)
	got, ids = next(long)
	// The server sends its last notice in the instant before its result,
	// which the go-sdk can hand over first: then that notice is dropped,
	// as for an MCP client (docs/mcp.md); the ones spaced by a step arrive.
	if len(got) < 2 || len(got) > 3 || !strings.HasPrefix(got[0], "1/3") || !strings.HasPrefix(got[1], "2/3") || len(ids) != 1 || !ids[id] {
		t.Errorf("the imported operation's progress events %q of calls %v, want its steps of %s", got, ids, id)
	}
}

// TestJourneyCallProgressLine: `wield call` on a terminal shows, past the
// first second, how long the call has run and the newest progress its tool
// reported, and clears the line before the result.
func TestJourneyCallProgressLine(t *testing.T) {
	u := newUser(t)
	out, code := u.onTerminal("", "call", "sleep", "duration=2.5")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "sleep running… 1s (1 of 2.5)") && !strings.Contains(out, "sleep running… 2s (2 of 2.5)") {
		t.Errorf("no progress line with the tool's report on the terminal:\n%q", out)
	}
	if !strings.Contains(out, `"slept": 2.5`) {
		t.Errorf("no result after the line:\n%q", out)
	}
}

// TestJourneyCallServerProgressLine: `wield call --server` on a terminal
// shows the same line as a local call, the figures read from the server's
// /v1/events (the call's execution_progress events, found by the call ID
// the command chose), with a key scoped to a toolset holding the tool.
func TestJourneyCallServerProgressLine(t *testing.T) {
	u := newUser(t)
	u.write("tools/naps.toolset.yaml", "name: naps\ndescription: waiting\ntools: [sleep]\n")
	key, _ := makeKey(t, u, "--name", "napper", "--toolset", "naps", "--rights", "call", "--tools", "tools")
	s := u.serve("--tools", "tools")
	out, code := u.onTerminal("", "call", "sleep", "duration=2.5", "--server", s.url, "--key", key)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "sleep running… 1s (1 of 2.5)") && !strings.Contains(out, "sleep running… 2s (2 of 2.5)") {
		t.Errorf("no progress line with the tool's report on the terminal:\n%q", out)
	}
	if !strings.Contains(out, `"slept": 2.5`) || !strings.Contains(out, `"call_id": "cli-`) {
		t.Errorf("no result, under the call ID the command chose, after the line:\n%q", out)
	}
}
