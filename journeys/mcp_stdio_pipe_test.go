//go:build unix

package journeys

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestJourneyMCPStdioPipe: `wield mcp < requests.jsonl`, a client that
// writes its requests and closes its input at once, gets an answer to each
// (a call still running at the end of the input included), then the
// command exits 0; a confirm tool's call, which no person will decide for a
// client gone, is answered at once that it was not run.
func TestJourneyMCPStdioPipe(t *testing.T) {
	u := newUser(t)
	u.write("tools/restart.yaml", `name: restart_service
description: Restart a service
permission: confirm
parameters:
  - {name: service, type: string}
entry: {type: command, command: ["echo", "restarted {service}"]}
`)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"duration":0.5}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"calculator","arguments":{"expression":"6*7"}}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"restart_service","arguments":{"service":"web"}}}
`
	r := u.wieldIn(in, "mcp", "--tools", "tools")
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	if r.took > 4*time.Second {
		t.Errorf("wield mcp took %v to answer five requests and exit", r.took)
	}
	results := map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil {
			results[string(m.ID)] = m.Result
		}
	}
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		if results[id] == nil {
			t.Errorf("no result for request %s:\n%s", id, r)
		}
	}
	if !strings.Contains(string(results["4"]), `"result":42`) {
		t.Errorf("calculator 6*7 answered %s", results["4"])
	}
	if res := string(results["5"]); !strings.Contains(res, `"isError":true`) || !strings.Contains(res, "approval") {
		t.Errorf("the confirm tool's call answered %s, want an error saying no approval is awaited", res)
	}
}
