package openai_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modeltest"
	"github.com/wieldhq/wield/llm/openai"
)

// TestToolsRefusal: a server that refuses tools (Ollama's 400, llama.cpp's
// 500) answers with an error that is llm.ErrToolsUnsupported and keeps the
// server's words; other errors are not.
func TestToolsRefusal(t *testing.T) {
	for _, tt := range []struct {
		rep  modeltest.Reply
		want string
		is   bool
	}{
		{modeltest.Reply{Status: 400, Body: `{"error":{"message":"registry.ollama.ai/library/gemma3:4b does not support tools","type":"api_error","param":null,"code":null}}`},
			"openai: Bad Request: registry.ollama.ai/library/gemma3:4b does not support tools", true},
		{modeltest.Reply{Status: 500, Body: `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`},
			"openai: Internal Server Error: tools param requires --jinja flag", true},
		{modeltest.Reply{Status: 400, Body: `{"error":{"message":"bad model"}}`}, "openai: Bad Request: bad model", false},
	} {
		srv := modeltest.Serve(t, tt.rep)
		c, _ := openai.NewClient(openai.ClientOptions{Model: "m", BaseURL: srv.URL, MaxRetries: -1})
		_, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		if err == nil || err.Error() != tt.want || errors.Is(err, llm.ErrToolsUnsupported) != tt.is {
			t.Errorf("got %v (tools refused %v), want %q (%v)", err, errors.Is(err, llm.ErrToolsUnsupported), tt.want, tt.is)
		}
		if tt.is && wield.IsTransient(err) {
			t.Errorf("%v is transient: asking again with the same tools cannot help", err)
		}
	}
}
