package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
)

// TestLoopNotifiesOnce: a chat passes its whole history to each Run;
// OnMessage sees each message once (not the history again), and OnCall sees
// each call once before it runs and once with its result, in the native and
// the prompt strategy alike (where the reply's ToolCalls stay empty).
func TestLoopNotifiesOnce(t *testing.T) {
	xmlCall := func(expr string) string {
		return "<tool_call>\n  <name>calculator</name>\n  <params>\n    <expression><![CDATA[" + expr + "]]></expression>\n  </params>\n</tool_call>"
	}
	for _, prompt := range []bool{false, true} {
		t.Run(fmt.Sprintf("prompt=%v", prompt), func(t *testing.T) {
			reg, e := newWorld(t)
			f := &fakeModel{t: t, path: "/v1/chat/completions"}
			call := func(id, expr string) func(map[string]any) string {
				return func(map[string]any) string {
					if prompt {
						return openAIReply(xmlCall(expr))
					}
					return openAIReply("", [3]string{id, "calculator", `{"expression":"` + expr + `"}`})
				}
			}
			f.script = []func(map[string]any) string{
				call("call_a", "6*7"),
				func(map[string]any) string { return openAIReply("42.") },
				call("call_b", "2+2"),
				func(map[string]any) string { return openAIReply("4.") },
			}
			m, err := openai.NewClient(openai.ClientOptions{Model: "local", BaseURL: serve(t, f) + "/v1", NoFunctionCalling: prompt, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			a := &agent.Agent{Name: "chat", Instructions: "Be brief.", Model: m, Toolkit: toolkit(t, reg, "chat", "calculator")}
			var seen []string
			var calls []string
			loop := agent.NewLoop(e, &agent.LoopOptions{
				OnMessage: func(_ string, m llm.Message) { seen = append(seen, string(m.Role)) },
				OnCall: func(_ string, c llm.ToolCall, r *wield.Result) {
					s := "→ " + c.Name + " " + string(c.Arguments)
					if r != nil {
						s = fmt.Sprintf("← %s ok=%v", c.Name, r.OK)
					}
					calls = append(calls, s)
				},
			})
			var history []llm.Message
			for _, line := range []string{"6*7?", "2+2?"} {
				history = append(history, llm.Message{Role: llm.RoleUser, Content: line})
				out, err := loop.Run(context.Background(), a, "conv-once", history)
				if err != nil {
					t.Fatal(err)
				}
				history = out.Messages
			}
			result := "tool"
			if prompt {
				result = "user" // the results go back as one user message
			}
			want := []string{"system", "assistant", result, "assistant", "assistant", result, "assistant"}
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Errorf("messages notified (-want +got):\n%s", diff)
			}
			wantCalls := []string{`→ calculator {"expression":"6*7"}`, "← calculator ok=true", `→ calculator {"expression":"2+2"}`, "← calculator ok=true"}
			if diff := cmp.Diff(wantCalls, calls); diff != "" {
				t.Errorf("calls notified (-want +got):\n%s", diff)
			}
		})
	}
}
