//go:build unix

package journeys

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneySearchFindsRunProgramForCaller: through wield serve, bob
// (denied secret_note by a policy) finds run_program with search_tools
// described with his own functions, as the lists describe it: without
// secret_note, which alice's has.
func TestJourneySearchFindsRunProgramForCaller(t *testing.T) {
	u := newUser(t)
	u.write("tools/notes.yaml", seamTools())
	alice, _ := makeKey(t, u, "--name", "alice", "--rights", "call")
	bob, bobID := makeKey(t, u, "--name", "bob", "--rights", "call")
	u.write("tools/policies.cedar", `@id("everyone")
permit(principal, action == Action::"call", resource);

@id("bob-no-secrets")
forbid(principal == Key::"`+bobID+`", action, resource == Tool::"secret_note");
`)
	s := u.serve("--tools", "tools", "--programs")
	found := func(key string) string {
		t.Helper()
		res := seamCall(t, s, key, "search_tools", map[string]any{"query": "run a short Starlark program that calls tools as functions", "limit": 1})
		var out struct {
			Tools []struct{ Name, Description string }
		}
		if !res.OK || json.Unmarshal(res.Output, &out) != nil || len(out.Tools) != 1 || out.Tools[0].Name != "run_program" {
			t.Fatalf("search_tools: %+v, want run_program", res)
		}
		return out.Tools[0].Description
	}
	if d := found(alice); !strings.Contains(d, "secret_note(") {
		t.Errorf("alice's run_program lacks secret_note:\n%s", d)
	}
	if d := found(bob); strings.Contains(d, "secret_note") || !strings.Contains(d, "\nnote(") {
		t.Errorf("bob's run_program, found by search_tools, names secret_note or lacks note:\n%s", d)
	}
	if code, took := s.stop(syscall.SIGTERM, 20*time.Second); code != 0 {
		t.Fatalf("serve exit %d after %v:\n%s", code, took, s.stderr)
	}
}
