//go:build unix

package journeys

// A key scoped to toolsets over MCP: it uses the endpoint of each of its
// toolsets (/mcp/{toolset}) and no other, and its sessions count against
// its own bound there as anywhere.

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keyed adds a key to every request of an MCP client.
type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connectMCP opens an MCP session on endpoint with key.
func connectMCP(ctx context.Context, endpoint, key string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, HTTPClient: &http.Client{Transport: keyed{key}}}
	// The handshake era (2025-11-25): a session, counted against the
	// key's bound; the go-sdk client would prefer 2026-07-28, which has none.
	return client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// TestJourneyScopedKeyMCP: a key made with --toolset math --rights call
// opens a session on /mcp/math, lists exactly the math toolset's tools and
// calls one; /mcp and /mcp/text are refused (403) with a message naming
// its toolsets; a second session of that key is refused once its bound (1)
// is reached, while an unscoped key still opens /mcp.
func TestJourneyScopedKeyMCP(t *testing.T) {
	u := newUser(t)
	u.write("configs/tool_sets/math.yaml", "name: math\ndescription: arithmetic\ntools:\n  - calculator\n")
	u.write("configs/tool_sets/text.yaml", "name: text\ndescription: words\ntools:\n  - echo\n")
	u.write("wield.yaml", "mcp: {max_sessions_per_client: 1}\n")
	math, _ := makeKey(t, u, "--name", "s", "--toolset", "math", "--rights", "call", "--tools", "configs")
	ops, _ := makeKey(t, u, "--name", "ops", "--rights", "call")
	s := u.serve("--config", "wield.yaml", "--tools", "configs")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := connectMCP(ctx, s.url+"/mcp/math", math)
	if err != nil {
		t.Fatalf("the math key on /mcp/math: %v", err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list on /mcp/math: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"calculator"}) {
		t.Errorf("tools/list on /mcp/math = %v, want [calculator]", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": "6*7"}})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "42") {
		t.Errorf("calculator on /mcp/math: %v %+v", err, res)
	}

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"j","version":"1"}}}`
	for _, path := range []string{"/mcp", "/mcp/text", "/mcp/math/extra"} {
		code, b := s.do("POST", path, init, bearer(math), "Accept: application/json, text/event-stream")
		if code != 403 || !strings.Contains(string(b), "math") || !strings.Contains(string(b), "/mcp/math") {
			t.Errorf("the math key on %s: %d %s; want 403 naming its toolset math and /mcp/math", path, code, b)
		}
	}

	// Its bound (1 session per key) holds on its endpoint too.
	code, _, msg := mcpPost(t, http.DefaultClient, s.url+"/mcp/math", "", init, "Authorization", "Bearer "+math)
	if code != 429 {
		t.Errorf("a second session of the math key: %d %v; want 429", code, msg)
	}
	other, err := connectMCP(ctx, s.url+"/mcp", ops)
	if err != nil {
		t.Fatalf("the unscoped key on /mcp: %v", err)
	}
	other.Close()
}
