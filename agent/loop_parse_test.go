package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
)

type deleteIn struct {
	Path string `json:"path"`
}

// reasoningReply is a chat.completion from an OpenAI-compatible server
// that returns the model's reasoning apart (reasoning_content) and leaves
// the calls in the text.
func reasoningReply(reasoning, content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-r1", "object": "chat.completion", "created": 1731000000, "model": "qwen3",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "reasoning_content": reasoning, "content": content}}},
	})
	return string(b)
}

// TestLoopPromptReasoningIsNotCalled: in the prompt strategy, a call the
// model drafts in its reasoning (a <think> block, or the server's separate
// reasoning_content) is never run; the real calls are, a tool without
// parameters among them; a call inside thinking never closed is answered
// with a note instead.
func TestLoopPromptReasoningIsNotCalled(t *testing.T) {
	var deleted atomic.Int32
	del := wield.Func("delete_file", "Delete a file", func(_ context.Context, in deleteIn) (string, error) {
		deleted.Add(1)
		return "deleted " + in.Path, nil
	})
	reg, e := newWorld(t, del)
	draft := "<tool_call><name>delete_file</name><params><path><![CDATA[/]]></path></params></tool_call>"
	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string {
			return reasoningReply("Maybe "+draft+"?", "<think>Or "+draft+"? No.</think>\n"+
				"<tool_call><name>calculator</name><params><expression><![CDATA[6*7]]></expression></params></tool_call>\n"+
				`<tool_call>{"name":"current_time"}</tool_call>`)
		},
		func(map[string]any) string { return reasoningReply("", "<think>Now delete? "+draft) },
		func(map[string]any) string { return reasoningReply("", "The answer is 42.") },
	}
	m, _ := openai.NewClient(openai.ClientOptions{Model: "local", BaseURL: serve(t, f) + "/v1", NoFunctionCalling: true, MaxRetries: -1})
	a := &agent.Agent{Name: "thinker", Model: m, Toolkit: toolkit(t, reg, "thinker", "calculator", "current_time", "delete_file")}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-r", []llm.Message{{Role: llm.RoleUser, Content: "6 times 7, and the time?"}})
	if err != nil || out.Answer != "The answer is 42." {
		t.Fatalf("got %+v, %v", out, err)
	}
	if n := deleted.Load(); n != 0 {
		t.Errorf("delete_file ran %d times from reasoning", n)
	}
	msgs := messages(f.request(1))
	results := msgs[len(msgs)-1]["content"].(string)
	if n := strings.Count(results, "<tool_result>"); n != 2 || !strings.Contains(results, "<name>calculator</name>\n  <success>true</success>") ||
		!strings.Contains(results, "<name>current_time</name>\n  <success>true</success>") || strings.Contains(results, "delete_file") {
		t.Errorf("turn 1's results went back as:\n%s", results)
	}
	msgs = messages(f.request(2))
	note := msgs[len(msgs)-1]["content"].(string)
	if strings.Contains(note, "<tool_result>") || !strings.Contains(note, "could not be read (call 1 (delete_file) is inside <think>, reasoning that is never closed") {
		t.Errorf("turn 2's unclosed thinking was answered with:\n%s", note)
	}
}
