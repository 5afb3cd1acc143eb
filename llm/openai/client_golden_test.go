package openai_test

import (
	"context"
	"flag"
	"testing"

	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modeltest"
	"github.com/wieldhq/wield/llm/openai"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

const okReply = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`

// TestRequestsGolden holds the client to the requests the official SDK
// (openai-go v3.96.0) sent for the same conversations: testdata/requests.golden.json
// was written by it, but for the "tools", which are now the dialect's
// export of each tool (what `wield list --format` prints), the one
// conversion every path shares.
func TestRequestsGolden(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-test")
	t.Setenv("OPENAI_PROJECT_ID", "proj-test")
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	ctx := context.Background()
	conv := modeltest.Conversation()
	for _, tc := range []struct {
		opts openai.ClientOptions
		req  *llm.ModelRequest
	}{
		{openai.ClientOptions{Model: "gpt-test", APIKey: "sk-test"}, &llm.ModelRequest{Messages: conv, Tools: modeltest.Tools()}},
		{openai.ClientOptions{Model: "gpt-test", APIKey: "sk-test"}, &llm.ModelRequest{Messages: conv[:3], MaxTokens: 100}},
		{openai.ClientOptions{Model: "local", NoFunctionCalling: true}, &llm.ModelRequest{Messages: conv[:3], Tools: modeltest.Tools()}},
	} {
		tc.opts.BaseURL = srv.URL + "/v1"
		c, err := openai.NewClient(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := c.Generate(ctx, tc.req); err != nil || resp.Message.Content != "ok" {
			t.Fatalf("generate: %+v, %v", resp, err)
		}
	}
	modeltest.CheckRequests(t, srv, "testdata/requests.golden.json", *update)
}
