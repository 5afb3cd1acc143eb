package mcpbridge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client subscribes only to the configured resources: a bounded set. A
// URI that a template matches was accepted, and the go-sdk keeps every URI
// subscribed in a map it never shrinks (a closed session leaves its URIs'
// entries behind): one client subscribing to test://items/1/data,
// test://items/2/data, … (or to one URI of megabytes per request) grew the
// server's memory without bound, for its whole life. A template's resources
// are made at each read and never change, so there is nothing to tell.
func TestServerSubscribeBounded(t *testing.T) {
	for _, tr := range []srvTransport{srvStateful, srvStdio} {
		t.Run(string(tr), func(t *testing.T) {
			f := srvNew(t, srvOffer(t), nil)
			cs := srvConnect(t, f, tr, "/mcp", nil)
			ctx, cancel := context.WithTimeout(context.Background(), srvWait)
			defer cancel()
			for _, uri := range []string{"test://items/1/data", "test://items/" + strings.Repeat("x", 1<<20) + "/data"} {
				err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
				if err == nil {
					t.Fatalf("subscribe to %.40s… of a template: no error", uri)
				}
				if !strings.Contains(err.Error(), "template") {
					t.Errorf("error %q does not say the resource is a template's", err)
				}
				if len(err.Error()) > 1024 {
					t.Errorf("error of %d bytes repeats the URI", len(err.Error()))
				}
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://items/1/data"}); err != nil {
				t.Errorf("read of a template's resource: %v", err)
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://file"}); err != nil {
				t.Errorf("subscribe to a listed resource: %v", err)
			}
		})
	}
}
