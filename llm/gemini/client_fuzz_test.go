package gemini_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

// FuzzAnswer: whatever the provider answers, the client returns an answer
// or an error, never panics, and every call it reports has JSON object
// arguments or arguments as the provider sent them.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte(okReply))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"x","args":{"a":[1]}}},{"text":"t","thought":true}]}}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"choices":null,"content":null,"candidates":[{}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "m", APIKey: "k", BaseURL: "http://model.test", HTTPClient: &http.Client{Transport: modeltest.Canned{Body: body}}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		if err != nil {
			return
		}
		for _, tc := range resp.Message.ToolCalls {
			if len(tc.Arguments) == 0 {
				t.Errorf("call %q has no arguments", tc.Name)
			}
		}
		_, _ = json.Marshal(resp)
	})
}
