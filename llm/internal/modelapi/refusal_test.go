package modelapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/wieldhq/wield/llm"
)

func TestToolsRefused(t *testing.T) {
	for _, tt := range []struct {
		status int
		body   string
		want   bool
	}{
		// Ollama's /v1 and /api/chat.
		{400, `{"error":{"message":"registry.ollama.ai/library/gemma3:4b does not support tools","type":"api_error","param":null,"code":null}}`, true},
		{400, `{"error":"registry.ollama.ai/library/qwen:4b does not support tools"}`, true},
		// vLLM without a tool parser, old and new error shapes.
		{400, `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`, true},
		{400, `{"error":{"message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","code":400}}`, true},
		// llama.cpp without --jinja.
		{500, `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`, true},
		{500, `{"code":500,"message":"Unsupported param: tools","type":"server_error"}`, true},
		// OpenAI, a model without function calling.
		{400, `{"error":{"message":"Unsupported parameter: 'tools' is not supported with this model.","type":"invalid_request_error","param":"tools","code":"unsupported_parameter"}}`, true},
		// Other refusals are not about tools.
		{400, `{"error":{"message":"model 'x' not found"}}`, false},
		{401, `{"error":{"message":"Incorrect API key provided"}}`, false},
		{429, `{"error":{"message":"Rate limit reached"}}`, false},
		// The words elsewhere than in the error's message (an echo of what
		// the conversation said) are not a refusal.
		{400, `{"error":{"message":"context too long"},"prompt":"this model does not support tools"}`, false},
		{400, `<html>does not support tools</html>`, false},
		{400, ``, false},
		{200, `{"error":"does not support tools"}`, false},
	} {
		got := ToolsRefused(&StatusError{StatusCode: tt.status, Body: []byte(tt.body)})
		if got != tt.want {
			t.Errorf("ToolsRefused(%d %s) = %v, want %v", tt.status, tt.body, got, tt.want)
		}
	}
	if ToolsRefused(nil) {
		t.Error("ToolsRefused(nil) = true")
	}
	base := errors.New("openai: Bad Request: x does not support tools")
	err := ToolsRefusal(base)
	if !errors.Is(err, llm.ErrToolsUnsupported) || !errors.Is(err, base) || err.Error() != base.Error() {
		t.Errorf("ToolsRefusal(%v) = %v: is ErrToolsUnsupported %v, is the cause %v", base, err, errors.Is(err, llm.ErrToolsUnsupported), errors.Is(err, base))
	}
}

// FuzzToolsRefused: whatever a server answers, reading it neither panics
// nor finds a refusal outside the error's message.
func FuzzToolsRefused(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"x does not support tools"}}`,
		`{"error":"x does not support tools"}`,
		`{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"}`,
		`{"error":{"message":null}}`, `{"error":[1,2]}`, `null`, `[]`, `"does not support tools"`,
	} {
		f.Add(400, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if ToolsRefused(&StatusError{StatusCode: status, Body: body}) {
			if status < 400 {
				t.Fatalf("a refusal in a %d answer", status)
			}
			if !strings.Contains(strings.ToLower(errorMessage(body)), "tool") {
				t.Fatalf("a refusal whose message %q does not mention tools", errorMessage(body))
			}
		}
	})
}
