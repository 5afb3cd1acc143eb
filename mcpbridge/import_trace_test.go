package mcpbridge_test

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// impCallTrace is a propagator that writes the call's ID, so that a test
// sees which call's context a request carries.
type impCallTrace struct{}

func (impCallTrace) Inject(ctx context.Context, set func(k, v string)) {
	if c, ok := ctx.Value(wield.CallKey).(*wield.Call); ok {
		set("traceparent", "call "+c.ID)
		set("tracestate", "wield=1")
	}
}

// TestImportCarriesTraceContext: a call of an imported tool writes the
// call's trace context in the tools/call's params._meta, where MCP carries
// it, when the process traces; without tracing there is no _meta.
func TestImportCarriesTraceContext(t *testing.T) {
	var mu sync.Mutex
	var metas []map[string]any
	g := impNewGoServer(t, impRemote{
		tool: &mcp.Tool{Name: "meta", InputSchema: impObject, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		handle: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			metas = append(metas, req.Params.Meta)
			mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		},
	})
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := impEngine(t, reg)
	plain := impCall(t, e, "go__meta", `{}`)
	wield.SetTracePropagator(impCallTrace{})
	defer wield.SetTracePropagator(nil)
	traced := impCall(t, e, "go__meta", `{}`)
	if !plain.OK || !traced.OK {
		t.Fatalf("calls: %+v %+v", plain, traced)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(metas) != 2 {
		t.Fatalf("%d calls reached the server, want 2", len(metas))
	}
	if metas[0]["traceparent"] != nil {
		t.Errorf("untraced call sent _meta %v", metas[0])
	}
	if metas[1]["traceparent"] != "call "+traced.CallID || metas[1]["tracestate"] != "wield=1" {
		t.Errorf("traced call's _meta %v, want traceparent and tracestate of call %s", metas[1], traced.CallID)
	}
}
