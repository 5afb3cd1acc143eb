package main

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeConsoleAndMCP: `wield serve` serves the web console at / and
// the tools over MCP at /mcp, beside the API.
func TestServeConsoleAndMCP(t *testing.T) {
	s := startServe(t, "")
	resp, err := http.Get(s.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(page), "wield") {
		t.Errorf("console: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, err := http.Get(s.url + "/v1/nope"); err != nil || resp.StatusCode != 404 || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		t.Errorf("an unknown API path is the API's 404, not the console: %v %v", resp.StatusCode, err)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	sess, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	list, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "echo") || !slices.Contains(names, "calculator") {
		t.Errorf("tools over MCP: %v", names)
	}
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": "6*7"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "42") {
		t.Errorf("call over MCP: %+v %v", res, err)
	}
}
