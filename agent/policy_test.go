package agent_test

import (
	"context"
	"slices"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
)

// denyAgent is a policy that denies one agent one tool.
type denyAgent struct{ agent, tool string }

func (d denyAgent) Decide(_ context.Context, req wield.PolicyRequest) wield.PolicyDecision {
	if req.Caller.ID == d.agent && req.Tool.Name == d.tool {
		return wield.PolicyDecision{Policies: []string{"deny"}}
	}
	return wield.PolicyDecision{Allow: true}
}

// TestLoopOffersWhatPolicyAllows: the loop does not offer the model a tool
// of its toolkit that the engine's policy denies the agent, as no list
// shows it.
func TestLoopOffersWhatPolicyAllows(t *testing.T) {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.Defaults()...)
	e := engine.New(reg, &engine.Options{Policy: denyAgent{"clerk", "calculator"}})
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{func(map[string]any) string { return openAIReply("done") }}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", MaxRetries: -1})
	a := &agent.Agent{Name: "clerk", Model: m, Toolkit: toolkit(t, reg, "clerk", "calculator", "echo")}
	if _, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-p", []llm.Message{{Role: llm.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(f.request(0)); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("offered %v, want [echo] (calculator is denied the agent)", got)
	}
}
