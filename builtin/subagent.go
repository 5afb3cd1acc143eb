package builtin

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/wieldhq/wield"
)

// CallSubagentInput is the input of call_subagent.
type CallSubagentInput struct {
	AgentName   string `json:"agent_name" description:"Name of the agent to hand the task to" minLength:"1" maxLength:"128"`
	Instruction string `json:"instruction,omitempty" description:"What the agent should do, with everything it needs to know" maxLength:"100000"`
}

// SubagentRoute is call_subagent's answer: a routing directive. The agent
// loop that sees it (Route == true) hands the conversation to AgentName
// with Instruction; call_subagent itself runs nothing.
type SubagentRoute struct {
	Route       bool   `json:"route"`
	AgentName   string `json:"agent_name"`
	Instruction string `json:"instruction,omitempty"`
}

// CallSubagent returns seed 000's call_subagent, the routing tool: it checks
// agent_name against the agents that exist (agents is asked on every call,
// so reloaded agent files are seen) and answers with a [SubagentRoute].
// An unknown agent is a validation_error that lists the known ones, so the
// model can correct itself.
func CallSubagent(agents func() []string) *wield.Tool {
	t := wield.Func("call_subagent", "Hand a task to another agent that specialises in it. The agent takes over with your instruction.",
		func(_ context.Context, in CallSubagentInput) (SubagentRoute, error) {
			known := agents()
			if !slices.Contains(known, in.AgentName) {
				if len(known) == 0 {
					return SubagentRoute{}, wield.Errorf(wield.ErrValidation, "agent %q does not exist, and no agents are configured", in.AgentName)
				}
				sorted := slices.Sorted(slices.Values(known))
				return SubagentRoute{}, wield.Errorf(wield.ErrValidation, "agent %q does not exist; choose one of: %s", in.AgentName, strings.Join(sorted, ", "))
			}
			return SubagentRoute{Route: true, AgentName: in.AgentName, Instruction: in.Instruction}, nil
		})
	t.Category = wield.CategorySystem
	t.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}
	t.Tags = []string{"agent", "routing", "builtin"}
	t.Timeout = 5 * time.Second
	t.Inline = true // a lookup: it cannot hang
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}
