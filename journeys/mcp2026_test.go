//go:build unix

package journeys

// MCP 2026-07-28 beside the initialize handshake: a client of the go-sdk
// (v1.8.0, which prefers 2026-07-28 and discovers first) lists and calls
// wield's tools without a session, on /mcp and /mcp/{toolset} of `wield
// serve` and of `wield mcp --http`; a client of the handshake still gets a
// session on the same endpoint; a confirm tool waits in the approval inbox.

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect2026 connects a go-sdk client to endpoint, in the revision it
// prefers unless version says otherwise.
func connect2026(ctx context.Context, t *testing.T, endpoint, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil)
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, opts)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// toolNames lists the tools of a session.
func toolNames(ctx context.Context, t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// calc calls calculator with 6*7 and checks the answer is 42.
func calc(ctx context.Context, t *testing.T, cs *mcp.ClientSession, where string) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": "6*7"}})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "42") {
		t.Fatalf("calculator on %s: %v %+v", where, err, res)
	}
}

func TestJourneyMCP2026(t *testing.T) {
	u := newUser(t)
	u.write("configs/tool_sets/math.yaml", "name: math\ndescription: arithmetic\ntools:\n  - calculator\n")
	for _, kind := range []string{"serve", "mcp --http"} {
		t.Run(kind, func(t *testing.T) {
			var s *server
			if kind == "serve" {
				s = u.serve("--tools", "configs")
			} else {
				s = u.mcpHTTP("--tools", "configs")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			cs := connect2026(ctx, t, s.url+"/mcp", "")
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" || cs.ID() != "" {
				t.Fatalf("/mcp: protocol %q, session %q; want 2026-07-28 and none", v, cs.ID())
			}
			if names := toolNames(ctx, t, cs); !slices.Contains(names, "calculator") || !slices.Contains(names, "echo") {
				t.Errorf("tools/list on /mcp: %v, want calculator and echo among them", names)
			}
			calc(ctx, t, cs, "/mcp")

			math := connect2026(ctx, t, s.url+"/mcp/math", "")
			if names := toolNames(ctx, t, math); !slices.Equal(names, []string{"calculator"}) {
				t.Errorf("tools/list on /mcp/math: %v, want [calculator]", names)
			}
			calc(ctx, t, math, "/mcp/math")
			if res, err := math.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err == nil && !res.IsError {
				t.Errorf("echo on /mcp/math answered %+v; want it unknown there", res)
			}

			old := connect2026(ctx, t, s.url+"/mcp", "2025-11-25")
			if v := old.InitializeResult().ProtocolVersion; v != "2025-11-25" || old.ID() == "" {
				t.Errorf("handshake client on /mcp: protocol %q, session %q; want 2025-11-25 and a session", v, old.ID())
			}
			calc(ctx, t, old, "/mcp in a session")
		})
	}
}

// TestJourneyMCP2026Confirm: a client of 2026-07-28, which the server may
// not ask anything mid-call, calls a confirm tool; the call waits in the
// approval inbox, where the user denies it; the tool did not run, the
// client reads the denial, and the record says who called.
func TestJourneyMCP2026Confirm(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	s := u.serve("--tools", "tools")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connect2026(ctx, t, s.url+"/mcp", "")
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("protocol %q, want 2026-07-28", v)
	}
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mark", Arguments: map[string]any{"message": "x"}})
		done <- answer{res, err}
	}()
	ids := pendingIDs(t, u, 1)
	select {
	case a := <-done:
		t.Fatalf("the call answered before a decision: %v %+v", a.err, a.res)
	default:
	}
	u.must("approvals", "deny", ids[0], "--reason", "not now")
	var a answer
	select {
	case a = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer 10 s after the denial")
	}
	if a.err != nil || !a.res.IsError || len(a.res.Content) == 0 || !strings.Contains(a.res.Content[0].(*mcp.TextContent).Text, "not now") {
		t.Fatalf("answer after the denial: %v %+v; want an error result with the reason", a.err, a.res)
	}
	if _, err := os.Stat(u.path("ran.txt")); err == nil {
		t.Error("the denied tool ran")
	}
	code, body := s.do("GET", "/v1/calls?tool=mark", "")
	var page struct {
		Calls []struct {
			Call struct {
				Caller struct {
					ID string `json:"id"`
				} `json:"caller"`
			} `json:"call"`
			Result struct {
				ErrorType string `json:"error_type"`
			} `json:"result"`
		} `json:"calls"`
	}
	if code != 200 || json.Unmarshal(body, &page) != nil || len(page.Calls) != 1 ||
		page.Calls[0].Call.Caller.ID != "mcp:journey" || page.Calls[0].Result.ErrorType != "approval_denied" {
		t.Errorf("records of mark: %d %s; want one, by mcp:journey, approval_denied", code, body)
	}
}
