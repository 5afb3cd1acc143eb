package anthropic_test

import (
	"context"
	"flag"
	"testing"

	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

const okReply = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`

// TestRequestsGolden holds the client to the requests the official SDK
// (anthropic-sdk-go v1.84.0) sent for the same conversations: testdata/requests.golden.json
// was written by it, but for the "tools", which are now the dialect's
// export of each tool (what `wield list --format` prints), the one
// conversion every path shares.
func TestRequestsGolden(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	ctx := context.Background()
	conv := modeltest.Conversation()
	for _, tc := range []struct {
		opts anthropic.ClientOptions
		req  *llm.ModelRequest
	}{
		{anthropic.ClientOptions{Model: "claude-test", APIKey: "k"}, &llm.ModelRequest{Messages: conv, Tools: modeltest.Tools()}},
		{anthropic.ClientOptions{Model: "claude-test", APIKey: "k"}, &llm.ModelRequest{Messages: conv[:3], MaxTokens: 100}},
		{anthropic.ClientOptions{Model: "claude-test", APIKey: "k", MaxTokens: 1000}, &llm.ModelRequest{Messages: conv[2:3]}},
	} {
		tc.opts.BaseURL = srv.URL
		c, err := anthropic.NewClient(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := c.Generate(ctx, tc.req); err != nil || resp.Message.Content != "ok" {
			t.Fatalf("generate: %+v, %v", resp, err)
		}
	}
	modeltest.CheckRequests(t, srv, "testdata/requests.golden.json", *update)
}
