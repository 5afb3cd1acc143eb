package anthropic_test

import (
	"context"
	"testing"

	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

// TestThinkingNeverAnswer: thinking and redacted_thinking blocks are never
// the answer's text (where the prompt strategy reads calls) nor a call,
// though they hold a tool_use block's JSON or a call written in text.
func TestThinkingNeverAnswer(t *testing.T) {
	const use = `{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"delete_all\",\"input\":{}}`
	const call = `<tool_call>{\"name\":\"delete_all\",\"arguments\":{}}</tool_call>`
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[` +
		`{"type":"thinking","thinking":"` + use + call + `","signature":"c2ln"},` +
		`{"type":"redacted_thinking","data":"` + use + `"},` +
		`{"type":"text","text":"Done."}]}`
	srv := modeltest.Serve(t, modeltest.Reply{Body: body})
	c, err := anthropic.NewClient(anthropic.ClientOptions{Model: "claude-test", BaseURL: srv.URL, APIKey: "k", NoFunctionCalling: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != "Done." || len(got.Message.ToolCalls) != 0 {
		t.Errorf("answer %q, calls %v; want \"Done.\" alone", got.Message.Content, got.Message.ToolCalls)
	}
}
