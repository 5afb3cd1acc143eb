package mcpbridge_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

func BenchmarkImportResult(b *testing.B) {
	results := []struct {
		name string
		res  *mcp.CallToolResult
	}{
		{"structured", &mcp.CallToolResult{StructuredContent: map[string]any{"temperature": 36, "conditions": "drizzle", "humidity": 82}}},
		{"json_text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"temperature": 36, "conditions": "drizzle", "humidity": 82}`}}}},
		{"plain_text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "The sum of 2 and 3 is 5."}}}},
	}
	for _, r := range results {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := mcpbridge.ImportResult(r.res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkImportCall is one engine call of an imported tool, over
// streamable HTTP on loopback to an in-process Go-SDK server.
func BenchmarkImportCall(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	r := impEchoArgs("echo", "")
	srv.AddTool(r.tool, r.handle)
	g := &impGoServer{t: b, srv: srv}
	g.start("127.0.0.1:0")
	defer g.stop()
	reg := wield.NewRegistry(nil)
	im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{Logger: slog.New(slog.DiscardHandler)})
	defer im.Close()
	if err := im.Add(context.Background(), mcpbridge.ServerConfig{Name: "b", URL: g.url(), Enabled: true}); err != nil {
		b.Fatal(err)
	}
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	args := json.RawMessage(`{"q":"x"}`)
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.Call(context.Background(), wield.Call{Tool: "b__echo", Arguments: args})
		if err != nil || !res.OK {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
