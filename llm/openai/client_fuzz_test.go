package openai_test

import (
	"net/http"
	"testing"

	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modeltest"
	"github.com/wieldhq/wield/llm/openai"
)

// FuzzAnswer: whatever the provider answers, the client returns an answer
// or an error, never panics, and every call it reports has JSON object
// arguments or arguments as the provider sent them.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte(okReply))
	f.Add([]byte(`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"x","arguments":{"a":1}}}]}}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"choices":null,"content":null,"candidates":[{}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		modeltest.CheckAnswer(t, body, func(hc *http.Client) (llm.Model, error) {
			return openai.NewClient(openai.ClientOptions{Model: "m", BaseURL: "http://model.test/v1", HTTPClient: hc, MaxRetries: -1})
		})
	})
}
