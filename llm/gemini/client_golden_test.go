package gemini_test

import (
	"context"
	"flag"
	"testing"

	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

const okReply = `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`

// TestRequestsGolden holds the client to the requests the official SDK
// (google.golang.org/genai v1.77.0) sent for the same conversations: testdata/requests.golden.json
// was written by it, but for the "tools", which are now the dialect's
// export of each tool (what `wield list --format` prints), the one
// conversion every path shares.
func TestRequestsGolden(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	ctx := context.Background()
	conv := modeltest.Conversation()
	for _, tc := range []struct {
		opts gemini.ClientOptions
		req  *llm.ModelRequest
	}{
		{gemini.ClientOptions{Model: "gemini-test", APIKey: "k"}, &llm.ModelRequest{Messages: conv, Tools: modeltest.Tools()}},
		{gemini.ClientOptions{Model: "gemini-test", APIKey: "k"}, &llm.ModelRequest{Messages: conv[:3], MaxTokens: 100}},
		{gemini.ClientOptions{Model: "models/gemini-test", APIKey: "k"}, &llm.ModelRequest{Messages: conv[2:3]}},
	} {
		tc.opts.BaseURL = srv.URL
		c, err := gemini.NewClient(ctx, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := c.Generate(ctx, tc.req); err != nil || resp.Message.Content != "ok" {
			t.Fatalf("generate: %+v, %v", resp, err)
		}
	}
	modeltest.CheckRequests(t, srv, "testdata/requests.golden.json", *update)
}
