//go:build unix

package journeys

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestJourneyMCPRunProgramDescribed: wield serve --programs without keys
// or policies lists run_program over MCP with the functions its programs
// have, as REST does: not a confirm tool that programs may not call, and
// a tool file written while it runs (reload) among them once reloaded.
func TestJourneyMCPRunProgramDescribed(t *testing.T) {
	u := newUser(t)
	u.write("tools/ops.yaml", `tools:
  - name: note_down
    description: Write a note
    parameters:
      - {name: message, type: string}
    entry: {type: builtin, handler: echo}
  - name: restart_service
    description: Restart a service (asks a person first)
    permission: confirm
    parameters:
      - {name: service, type: string}
    entry: {type: builtin, handler: echo}
`)
	u.write("wield.yaml", "reload: {watch: true}\n")
	s := u.serve("--config", "wield.yaml", "--tools", "tools", "--programs")
	describe := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			if tl.Name == "run_program" {
				return tl.Description
			}
		}
		t.Fatalf("no run_program in tools/list")
		return ""
	}
	if d := describe(); !strings.Contains(d, "note_down(") || strings.Contains(d, "restart_service") {
		t.Errorf("run_program over MCP lacks note_down or names restart_service, which programs may not call:\n%s", d)
	}
	u.write("tools/late.yaml", "name: late_tool\ndescription: Written while the server runs\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	if !eventually(10*time.Second, func() bool { return strings.Contains(describe(), "late_tool(") }) {
		t.Errorf("run_program over MCP does not list late_tool after the reload:\n%s", describe())
	}
	if code, took := s.stop(syscall.SIGTERM, 20*time.Second); code != 0 {
		t.Fatalf("serve exit %d after %v:\n%s", code, took, s.stderr)
	}
}
