//go:build unix

package journeys

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestJourneyMCPProgressRedacted: a secret an imported MCP server puts in a
// progress message (a URL with a password, beside an escape sequence) does
// not reach the MCP client that called through wield, any more than it
// reaches /v1/events: the client's notifications/progress carry the
// message the call's execution_progress event carries, redacted and
// escaped.
func TestJourneyMCPProgressRedacted(t *testing.T) {
	bin := hostileMCP(t)
	u := newUser(t)
	u.write("wield.yaml", `mcp_servers:
  - name: h
    command: [`+bin+`, -progress-message, "fetching https://bob:hunter2hunter2@example.com/x \e[2J"]
`)
	s := u.serve("--config", "wield.yaml")
	if !s.listed("h__echo", 30*time.Second) {
		t.Fatalf("h__echo never appeared in /v1/tools:\n%s", s.stderr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	next := progressEvents(ctx, t, s)

	var mu sync.Mutex
	var told []string
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			told = append(told, r.Params.Message)
			mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to wield's MCP endpoint: %v\n%s", err, s.stderr)
	}
	defer cs.Close()
	p := &mcp.CallToolParams{Name: "h__echo", Arguments: map[string]any{}}
	p.SetProgressToken("journey")
	if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
		t.Fatalf("h__echo: %v %+v", err, res)
	}
	events, _ := next("h__echo")
	if len(events) != 1 || strings.Contains(events[0], "hunter2") {
		t.Fatalf("the call's progress events %q, want one, redacted", events)
	}
	_, event, _ := strings.Cut(events[0], " ") // after the figures
	// The go-sdk hands a notice to its handler on a queue of its own: it
	// may come just after the result.
	if !eventually(5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(told) > 0 }) {
		t.Fatalf("no progress notice reached the MCP client; the event said %q", event)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || told[0] != event || strings.Contains(told[0], "hunter2") || strings.Contains(told[0], "\x1b") {
		t.Errorf("the MCP client was told %q, want the event's message %q", told, event)
	}
}
