//go:build unix

package journeys

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// fanOutAgents are a lead and a worker, each of which may only hand work
// on with call_subagent.
const fanOutAgents = `kind: agent
name: lead
description: Hands every task on
tools: [call_subagent]
---
kind: agent
name: worker
description: Hands every task on too
tools: [call_subagent]
`

// TestJourneyChatTurnBudget: a model whose every reply hands the task to
// twenty workers, whose replies do the same, gets at most --max-turns
// requests for the line (by default --max-steps × 3), not a loop of
// --max-steps turns per call at each depth; the sub-agents' call_subagent
// fail saying the budget is spent, and the line gets no answer (exit 1).
func TestJourneyChatTurnBudget(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "tool_dirs: [agents]\n")
	u.write("agents/fan.yaml", fanOutAgents)
	var calls [][2]string
	for range 20 {
		calls = append(calls, [2]string{"call_subagent", `{"agent_name":"worker","instruction":"Hand this on to twenty workers."}`})
	}
	for _, tc := range []struct {
		name   string
		flags  []string
		budget int
	}{
		{"--max-turns 6", []string{"--max-turns", "6"}, 6},
		{"--max-steps 3, the default budget", []string{"--max-steps", "3"}, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Past 40 requests the model fails, so a chat without a
			// budget ends soon, and the count below tells.
			var n atomic.Int32
			model, _ := newFakeModel(t, "", func(chatRequest) any {
				if n.Add(1) > 40 {
					return map[string]any{"error": map[string]any{"message": "the journey's cap of requests is passed", "type": "invalid_request_error"}}
				}
				return completion("", calls...)
			})
			args := append([]string{"chat", "--config", "wield.yaml", "--agent", "lead", "--model", model.srv.URL + "/v1/m"}, tc.flags...)
			r := u.wieldIn("Fan out.\n", args...)
			if got := len(model.requests()); got > tc.budget {
				t.Fatalf("the model was asked %d times for one line, past the budget of %d:\n%s", got, tc.budget, r)
			} else if got != tc.budget {
				t.Errorf("the model was asked %d times, want the whole budget, %d", got, tc.budget)
			}
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "no answer to line 1") ||
				!strings.Contains(r.stderr, "the run's budget of model turns is spent before an answer") {
				t.Errorf("want exit 1, the line named, the budget said spent:\n%s", r)
			}
			spent := "← call_subagent permission_denied: the run's budget of " + strconv.Itoa(tc.budget) + " model turns is spent; answer with what you have"
			if !strings.Contains(r.stderr, "worker "+spent) || !strings.Contains(r.stderr, "\n"+spent) {
				t.Errorf("stderr does not show the workers' and the lead's call_subagent failing for the budget:\n%s", r)
			}
		})
	}
	if r := u.wieldIn("", "chat", "--model", "http://127.0.0.1:1/v1/m", "--max-turns", "-1"); r.code != 2 || !strings.Contains(r.stderr, "--max-turns -1: give at least 1, or 0 for --max-steps × 3") {
		t.Errorf("--max-turns -1: want a usage error:\n%s", r)
	}
}
