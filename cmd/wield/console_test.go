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

// TestClientCommandsWithServer: list, call, calls and stats talk to a
// running server with --server.
func TestClientCommandsWithServer(t *testing.T) {
	s := startServe(t, "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--server", s.url}, "calculator"},
		{[]string{"list", "--server", s.url, "--json", "--category", "data"}, `"name": "calculator"`},
		{[]string{"call", "--server", s.url, "calculator", "expression=6*7", "--conversation", "remote-c"}, `"result": 42`},
		{[]string{"calls", "--server", s.url, "--conversation", "remote-c"}, "calculator"},
		{[]string{"stats", "--server", s.url}, "calculator"},
		{[]string{"stats", "--server", s.url, "--conversation", "remote-c"}, "1 calls, 1 ok"},
	} {
		code, out, errs := runIn(t, "", tt.args...)
		if code != 0 || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d, want %q in\n%s\n%s", tt.args, code, tt.want, out, errs)
		}
	}
	if code, out, _ := runIn(t, "", "call", "--server", s.url, "calculator", "expression=1/0"); code != 1 || !strings.Contains(out, "execution_error") {
		t.Errorf("a failed remote call: exit %d\n%s", code, out)
	}
	if code, _, errs := runIn(t, "", "list", "--server", "http://127.0.0.1:1"); code != 1 || errs == "" {
		t.Errorf("unreachable server: exit %d %s", code, errs)
	}
}
