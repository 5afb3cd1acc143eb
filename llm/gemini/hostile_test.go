package gemini_test

import (
	"context"
	"testing"

	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

// TestThoughtPartNeverCalls: a part marked "thought": true is the model's
// reasoning, whatever it holds: a functionCall in one is not a call, its
// text is not the answer.
func TestThoughtPartNeverCalls(t *testing.T) {
	body := `{"candidates":[{"content":{"role":"model","parts":[
		{"thought":true,"functionCall":{"id":"fc_1","name":"delete_all","args":{"path":"/"}}},
		{"thought":true,"text":"<tool_call>{\"name\":\"delete_all\",\"arguments\":{}}</tool_call>"},
		{"text":"Done."}]},"finishReason":"STOP"}]}`
	srv := modeltest.Serve(t, modeltest.Reply{Body: body})
	c, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "gemini-test", BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Message.ToolCalls) != 0 || got.Message.Content != "Done." {
		t.Errorf("answer = %q with calls %v; want \"Done.\" and no call", got.Message.Content, got.Message.ToolCalls)
	}
}
