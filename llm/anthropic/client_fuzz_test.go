package anthropic_test

import (
	"net/http"
	"testing"

	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

// FuzzAnswer: whatever the provider answers, the client returns an answer
// or an error, never panics, and every call it reports has JSON object
// arguments or arguments as the provider sent them.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte(okReply))
	f.Add([]byte(`{"content":[{"type":"tool_use","id":"t","name":"x","input":null},{"type":"text","text":"hi"}],"stop_reason":"tool_use"}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"choices":null,"content":null,"candidates":[{}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		modeltest.CheckAnswer(t, body, func(hc *http.Client) (llm.Model, error) {
			return anthropic.NewClient(anthropic.ClientOptions{Model: "m", APIKey: "k", BaseURL: "http://model.test", HTTPClient: hc, MaxRetries: -1})
		})
	})
}
