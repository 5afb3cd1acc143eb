package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

// An MCP server's tools, imported and called through the engine.
func ExampleImporter() {
	// A server with one tool, over streamable HTTP.
	type sumIn struct {
		A, B float64
	}
	type sumOut struct {
		Sum float64 `json:"sum"`
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "calc"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Adds two numbers.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in sumIn) (*mcp.CallToolResult, sumOut, error) {
			return nil, sumOut{Sum: in.A + in.B}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()

	reg := wield.NewRegistry(nil)
	im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{Logger: slog.New(slog.DiscardHandler)})
	defer im.Close()
	if err := im.Add(context.Background(), mcpbridge.ServerConfig{Name: "calc", URL: hs.URL, Enabled: true}); err != nil {
		fmt.Println(err)
		return
	}
	tool, _ := reg.Tool("calc__add")
	fmt.Println(tool.Name, tool.Category, tool.Annotations.ReadOnly)

	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	res, err := e.Call(context.Background(), wield.Call{Tool: "calc__add", Arguments: json.RawMessage(`{"A": 2, "B": "3"}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.OK, string(res.Output))
	// Output:
	// calc__add mcp true
	// true {"sum":5}
}
