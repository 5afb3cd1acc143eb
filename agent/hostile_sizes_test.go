package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/openai"
)

// TestHostileHugeArguments: a call whose arguments are a 50 MB string is
// refused (over the engine's 8 MiB of arguments) and the model is told so
// as the call's result; the 50 MB do not go back to the model in the next
// request, nor stay in the conversation.
func TestHostileHugeArguments(t *testing.T) {
	reg, e := newWorld(t)
	huge := strings.Repeat("a", 50<<20)
	for _, prompt := range []bool{false, true} {
		name := map[bool]string{false: "native", true: "prompt"}[prompt]
		t.Run(name, func(t *testing.T) {
			f := &fakeModel{t: t, path: "/v1/chat/completions"}
			first := openAIReply("", [3]string{"call_1", "echo", `{"message":"` + huge + `"}`})
			if prompt {
				first = openAIReply(`<tool_call>{"name":"echo","arguments":{"message":"` + huge + `"}}</tool_call>`)
			}
			f.script = []func(map[string]any) string{
				func(map[string]any) string { return first },
				func(map[string]any) string { return openAIReply("done") },
			}
			m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", APIKey: "k", MaxRetries: -1, NoFunctionCalling: prompt})
			a := &agent.Agent{Name: "huge_" + name, Model: m, Toolkit: toolkit(t, reg, "huge_"+name, "echo")}
			out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-huge", []llm.Message{{Role: llm.RoleUser, Content: "go"}})
			if err != nil || out.Answer != "done" {
				t.Fatalf("answer %q, %.500v", out.Answer, err)
			}
			res := out.Messages[len(out.Messages)-2]
			text := res.Content
			if !prompt {
				if res.Result == nil || res.Result.ErrorType != wield.ErrValidation {
					t.Errorf("the result is %+v, want a validation error", res.Result)
				}
				text = res.ResultText()
			}
			if !strings.Contains(text, "arguments of 52428") || !strings.Contains(text, "exceed the limit") {
				t.Errorf("the model is told %.300q, want the arguments' size over the limit", text)
			}
			body, _ := json.Marshal(f.request(1))
			size := 0
			for _, m := range out.Messages {
				size += llm.HistorySize(m)
			}
			if len(body) > 1<<20 || size > 1<<20 {
				t.Errorf("the next request is %d bytes, the conversation %d; want the 50 MB left out of both", len(body), size)
			}
		})
	}
}

// TestHostileCallsEachProvider: a reply, from each provider, calling a
// tool outside the agent's toolkit, a tool with arguments nested 9,000
// deep (as deep as a provider's answer can be read), and a tool with
// arguments that are not an object: each call fails as its result, in
// words for the model (no Go error text), and the conversation goes on to
// the model's answer.
func TestHostileCallsEachProvider(t *testing.T) {
	reg, e := newWorld(t)
	deep := `{"message":` + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + `}`
	calls := [][3]string{{"c1", "calculator", `{"expression":"1+1"}`}, {"c2", "echo", deep}, {"c3", "echo", `[1,2]`}}
	for _, p := range []struct {
		name, path string
		reply      func(text string, calls ...[3]string) string
		new        func(url string) (llm.Model, error)
	}{
		{"openai", "/v1/chat/completions", openAIReply, func(url string) (llm.Model, error) {
			return openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: url + "/v1", APIKey: "k", MaxRetries: -1})
		}},
		{"anthropic", "/v1/messages", anthropicReply, func(url string) (llm.Model, error) {
			return anthropic.NewClient(anthropic.ClientOptions{Model: "claude-test", BaseURL: url, APIKey: "k", MaxRetries: -1})
		}},
		{"gemini", "/v1beta/models/gemini-test:generateContent", func(text string, calls ...[3]string) string {
			var cs [][4]string
			for _, c := range calls {
				cs = append(cs, [4]string{c[0], c[1], c[2], "c2ln"})
			}
			return geminiCalls(text, cs...)
		}, func(url string) (llm.Model, error) {
			return gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "gemini-test", BaseURL: url, APIKey: "k"})
		}},
	} {
		t.Run(p.name, func(t *testing.T) {
			f := &fakeModel{t: t, path: p.path}
			f.script = []func(map[string]any) string{
				func(map[string]any) string { return p.reply("", calls...) },
				func(map[string]any) string { return p.reply("done") },
			}
			m, err := p.new(serve(t, f))
			if err != nil {
				t.Fatal(err)
			}
			a := &agent.Agent{Name: "hostile_" + p.name, Model: m, Toolkit: toolkit(t, reg, "hostile_"+p.name, "echo")}
			out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-hostile", []llm.Message{{Role: llm.RoleUser, Content: "go"}})
			if err != nil || out.Answer != "done" {
				t.Fatalf("answer %q, %.500v", out.Answer, err)
			}
			var results []string
			for _, m := range out.Messages {
				if m.Role == llm.RoleTool {
					if m.Result == nil || m.Result.OK {
						t.Errorf("call %s: %+v, want a failure", m.ToolCallID, m.Result)
					}
					results = append(results, m.ResultText())
				}
			}
			want := []string{"Tool 'calculator' not available in hostile_" + p.name + "'s toolkit", "Error: ", "Error: "}
			if len(results) != len(want) {
				t.Fatalf("results %q", results)
			}
			for i, r := range results {
				if !strings.HasPrefix(r, want[i]) || len(r) > 2000 || strings.Contains(r, "json:") || strings.Contains(r, "goroutine") {
					t.Errorf("call %d reads %.300q, want %q… in words for the model", i+1, r, want[i])
				}
			}
		})
	}
}

// TestHostileManyWrittenCalls: a reply in the prompt strategy that writes
// 5,000 calls is answered in one message, one result for each call, those
// beyond the engine's capacity refused, and the run goes on to the answer.
func TestHostileManyWrittenCalls(t *testing.T) {
	reg, e := newWorld(t)
	const n = 5000
	var b strings.Builder
	for range n {
		b.WriteString(`<tool_call>{"name":"calculator","arguments":{"expression":"1+1"}}</tool_call>` + "\n")
	}
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string { return openAIReply(b.String()) },
		func(map[string]any) string { return openAIReply("done") },
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", APIKey: "k", MaxRetries: -1, NoFunctionCalling: true})
	a := &agent.Agent{Name: "written", Model: m, Toolkit: toolkit(t, reg, "written", "calculator")}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-written", []llm.Message{{Role: llm.RoleUser, Content: "go"}})
	if err != nil || out.Answer != "done" {
		t.Fatalf("answer %q, %.500v", out.Answer, err)
	}
	msgs := messages(f.request(1))
	results, _ := msgs[len(msgs)-1]["content"].(string)
	total, ran := strings.Count(results, "<tool_result"), strings.Count(results, `"result":2`)
	t.Logf("%d results sent back, %d of them run", total, ran)
	if total != n || ran == 0 || ran > agent.DefaultMaxCallsPerReply {
		t.Errorf("%d results (%d run) for %d calls; at most %d may run", total, ran, n, agent.DefaultMaxCallsPerReply)
	}
}
