package openai_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modeltest"
	"github.com/wieldhq/wield/llm/openai"
)

// callText is a call written in text, as a model in the prompt strategy
// would write it.
const callText = `<tool_call>{\"name\":\"delete_all\",\"arguments\":{}}</tool_call>`

// TestReasoningNeverAnswer: reasoning is never the answer's text (where the
// prompt strategy reads calls) nor a call: chat completions'
// reasoning_content and reasoning (DeepSeek, vLLM, OpenRouter) and the
// Responses API's reasoning items, summary and content.
func TestReasoningNeverAnswer(t *testing.T) {
	chat := `{"object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Done.",` +
		`"reasoning_content":"` + callText + `","reasoning":"` + callText + `","reasoning_details":[{"type":"reasoning.text","text":"` + callText + `"}]}}]}`
	responses := `{"object":"response","status":"completed","output":[` +
		`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"` + callText + `"}],"content":[{"type":"reasoning_text","text":"` + callText + `"}]},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}]}`
	for _, tt := range []struct {
		name string
		body string
		new  func(base string) (llm.Model, error)
	}{
		{"chat", chat, func(base string) (llm.Model, error) {
			return openai.NewClient(openai.ClientOptions{Model: "m", BaseURL: base, APIKey: "k", NoFunctionCalling: true})
		}},
		{"responses", responses, func(base string) (llm.Model, error) {
			return openai.NewResponsesClient(openai.ClientOptions{Model: "m", BaseURL: base, APIKey: "k", NoFunctionCalling: true})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.Serve(t, modeltest.Reply{Body: tt.body})
			c, err := tt.new(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Message.Content != "Done." || len(got.Message.ToolCalls) != 0 {
				t.Errorf("answer %q, calls %v; want \"Done.\" alone", got.Message.Content, got.Message.ToolCalls)
			}
		})
	}
}

// TestResponsesFailureBounded: a failed response's message, read from a
// 2xx answer of up to 64 MiB, is kept to 64 KiB in the error.
func TestResponsesFailureBounded(t *testing.T) {
	body := `{"object":"response","status":"failed","output":[],"error":{"code":"server_error","message":"` + strings.Repeat("x", 1<<20) + `"}}`
	srv := modeltest.Serve(t, modeltest.Reply{Body: body})
	c, err := openai.NewResponsesClient(openai.ClientOptions{Model: "m", BaseURL: srv.URL, APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err == nil || len(err.Error()) > 65<<10 || !strings.Contains(err.Error(), "the response failed: server_error: xxx") {
		t.Fatalf("error of %d bytes: %.200v", len(fmt.Sprint(err)), err)
	}
}

// TestContentParts: a chat completion whose content is an array of parts
// (Mistral's reasoning models answer so: thinking chunks, then text) is
// read as its text and refusal parts, joined; a thinking part is never the
// answer's text, where the prompt strategy reads calls. It was read as no
// text at all.
func TestContentParts(t *testing.T) {
	body := `{"object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":[{"type":"text","text":"` + callText + `"}]},` +
		`{"type":"text","text":"The answer "},{"type":"text","text":"is 42."},{"type":"image_url","image_url":{"url":"data:,"}}]}}]}`
	srv := modeltest.Serve(t, modeltest.Reply{Body: body})
	c, err := openai.NewClient(openai.ClientOptions{Model: "m", BaseURL: srv.URL, APIKey: "k", NoFunctionCalling: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != "The answer is 42." || len(got.Message.ToolCalls) != 0 {
		t.Errorf("answer %q, calls %v; want \"The answer is 42.\" alone", got.Message.Content, got.Message.ToolCalls)
	}
}
