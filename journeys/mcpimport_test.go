//go:build unix

package journeys

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServerOn serves an MCP server over streamable HTTP on addr, with tools
// whose results take each form a server may send; ok is false when addr is
// taken.
func mcpServerOn(t *testing.T, addr string) (calls *int, ok bool) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, false
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "journey-fs", Version: "1.0.0"}, nil)
	n := 0
	obj := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"path": {Type: "string", Description: "A path"}}}
	add := func(name, desc string, res func(*mcp.CallToolRequest) *mcp.CallToolResult) {
		srv.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				n++
				return res(req), nil
			})
	}
	add("stat", "Structured content", func(*mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"size": 42, "kind": "file"},
			Content: []mcp.Content{&mcp.TextContent{Text: `{"size": 42, "kind": "file"}`}}}
	})
	add("read_json", "Text that is JSON", func(*mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"lines": 3, "first": "a < b && c > d"}`}}}
	})
	add("read_text", "Text that is not JSON", func(*mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "plain words"}}}
	})
	add("fail", "A failure the server reports", func(*mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}}
	})
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { _ = hs.Close() })
	return &n, true
}

// TestJourneyMCPImportConfig: the configuration file's tools.mcpServers
// list, as written in the source document (a server at
// http://localhost:3000 enabled, one at :3001 disabled), imports the tools
// of a real MCP server listening there; each comes back in the form the
// result conversion promises (structured content as is, JSON text parsed,
// other text as text, a server's error as the tool's failure); a tool the
// server does not have is "Can not find tool named …"; the disabled server
// is never contacted; serve offers the same tools.
func TestJourneyMCPImportConfig(t *testing.T) {
	calls, ok := mcpServerOn(t, "127.0.0.1:3000")
	if !ok {
		t.Skip("127.0.0.1:3000 is taken: the document's config names that port")
	}
	disabled, err := net.Listen("tcp", "127.0.0.1:3001")
	dialled := make(chan struct{}, 1)
	if err == nil {
		t.Cleanup(func() { disabled.Close() })
		go func() {
			if c, err := disabled.Accept(); err == nil {
				c.Close()
				dialled <- struct{}{}
			}
		}()
	}
	u := newUser(t)
	u.copy("seeds/003/config.yml", "config.yml")
	for _, d := range []string{"data", "docs", "src"} {
		if err := os.MkdirAll(u.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	u.setenv("WEB_SEARCH_API_KEY", "journey-key")

	r := u.must("list", "--config", "config.yml")
	for _, name := range []string{"filesystem__stat", "filesystem__read_json", "filesystem__read_text", "filesystem__fail"} {
		if !strings.Contains(r.stdout, name) {
			t.Errorf("list lacks %s:\n%s", name, r)
		}
	}
	if strings.Contains(r.stdout, "database__") {
		t.Errorf("the disabled server's tools are listed:\n%s", r)
	}

	var res struct {
		OK        bool   `json:"ok"`
		Output    any    `json:"output"`
		Error     string `json:"error"`
		ErrorType string `json:"error_type"`
	}
	call := func(want int, args ...string) {
		t.Helper()
		r := u.wield(append([]string{"call", "--config", "config.yml"}, args...)...)
		if r.code != want {
			t.Fatalf("want exit %d:\n%s", want, r)
		}
		res.Output, res.Error, res.ErrorType = nil, "", ""
		r.json(t, &res)
	}
	call(0, "filesystem__stat", "path=a.txt")
	if m, _ := res.Output.(map[string]any); m["size"] != float64(42) || m["kind"] != "file" {
		t.Errorf("structured content: output %v, want {size: 42, kind: file}", res.Output)
	}
	call(0, "filesystem__read_json", "path=a.json")
	if m, _ := res.Output.(map[string]any); m["lines"] != float64(3) || m["first"] != "a < b && c > d" {
		t.Errorf("JSON text: output %#v, want the parsed object with its text as sent", res.Output)
	}
	call(0, "filesystem__read_text", "path=a.md")
	if res.Output != "plain words" {
		t.Errorf("plain text: output %#v, want the text", res.Output)
	}
	call(1, "filesystem__fail", "path=x")
	if res.OK || !strings.Contains(res.Error, "disk full") {
		t.Errorf("server's error: %+v, want a failure that says disk full", res)
	}
	call(1, "filesystem__nosuch")
	if res.ErrorType != "tool_not_found" || !strings.Contains(res.Error, "Can not find tool named 'filesystem__nosuch'") {
		t.Errorf("unknown tool: %+v, want tool_not_found with Can not find tool named 'filesystem__nosuch'", res)
	}
	if *calls != 4 {
		t.Errorf("the server ran %d calls, want 4", *calls)
	}
	if _, err := os.Stat(filepath.Join(u.dir, ".state", "wield", "mcp-pins.json")); err != nil {
		t.Errorf("no pins kept under the user's state folder: %v", err)
	}

	s := u.serve("--config", "config.yml")
	if !eventually(10*time.Second, func() bool {
		_, b := s.do("GET", "/v1/tools", "")
		return strings.Contains(string(b), "filesystem__read_text")
	}) {
		t.Errorf("serve does not list the imported tools:\n%s", s.stderr)
	}
	if code, body := s.do("POST", "/v1/tools/filesystem__read_text/call", `{"arguments":{"path":"b"}}`); code != 200 || !strings.Contains(string(body), "plain words") {
		t.Errorf("call over REST: %d %s", code, body)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("serve after SIGTERM: exit %d after %v\n%s", code, took, s.stderr)
	}
	select {
	case <-dialled:
		t.Errorf("the disabled server (localhost:3001) was contacted")
	default:
	}
}

// TestJourneyToolsetOfImportedTools: serve imports its MCP servers in the
// background, so a toolset file naming an imported tool (server__tool)
// meets a registry without it at start. serve still starts (it stopped with
// "define toolset: not found" when imports began to run in the
// background), warns that the toolset waits for the import, and defines it
// once the server has listed its tools: /v1/toolsets and /mcp/{toolset}
// then have it.
func TestJourneyToolsetOfImportedTools(t *testing.T) {
	h := hostileMCP(t)
	u := newUser(t)
	u.write("tools/s.yaml", "name: mixed\ndescription: A built-in and an imported tool\ntools: [echo, h__echo]\n")
	u.write("wield.yaml", "tool_dirs: [tools]\nmcp_servers:\n  - {name: h, command: ["+h+"]}\n")
	s := u.serve("--config", "wield.yaml")
	var body []byte
	if !eventually(10*time.Second, func() bool {
		_, body = s.do("GET", "/v1/toolsets/mixed", "")
		return strings.Contains(string(body), "h__echo")
	}) {
		t.Fatalf("toolset mixed not defined with h__echo: %s\n%s", body, s.stderr)
	}
	if !strings.Contains(s.stderr.String(), "defined once the MCP servers have listed their tools") {
		t.Errorf("no warning that the toolset waits for the import:\n%s", s.stderr)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("after SIGTERM: exit %d after %v\n%s", code, took, s.stderr)
	}
}
