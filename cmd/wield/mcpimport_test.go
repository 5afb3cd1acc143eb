package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConfigImportsMCPServers: the tools of a configured MCP server are
// listed and called as server__tool, and a tool file's mcp entry runs one.
func TestConfigImportsMCPServers(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "shout", Description: "Shout a word", InputSchema: &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"word": {Type: "string"}}, Required: []string{"word"}},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(string(req.Params.Arguments))}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	t.Setenv("XDG_STATE_HOME", t.TempDir())

	dir := t.TempDir()
	tools := filepath.Join(dir, "tools")
	os.Mkdir(tools, 0o755)
	os.WriteFile(filepath.Join(tools, "yell.yaml"), []byte("name: yell\ndescription: Yell through the notes server\nparameters: [{name: word, type: string, required: true}]\nentry: {type: mcp, server: notes, tool: shout}\n"), 0o644)
	cfg := filepath.Join(dir, "wield.yaml")
	os.WriteFile(cfg, []byte("tool_dirs: [tools]\nmcp_servers:\n  - {name: notes, url: \""+hs.URL+"\", tags: [team]}\n"), 0o644)

	code, out, errs := runIn(t, "", "--config", cfg, "list")
	if code != 0 || !strings.Contains(out, "notes__shout") || !strings.Contains(out, "yell") {
		t.Fatalf("list: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runIn(t, "", "--config", cfg, "call", "notes__shout", "word=hey")
	if code != 0 || !strings.Contains(out, `"WORD": "HEY"`) {
		t.Errorf("call: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runIn(t, "", "--config", cfg, "call", "yell", "word=ho")
	if code != 0 || !strings.Contains(out, `"WORD": "HO"`) {
		t.Errorf("mcp entry: exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("XDG_STATE_HOME"), "wield", "mcp-pins.json")); err != nil {
		t.Errorf("no pins kept: %v", err)
	}
}
