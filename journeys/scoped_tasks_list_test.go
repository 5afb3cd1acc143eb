//go:build unix

package journeys

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyScopedTaskList: a key scoped to toolset ops (run_program and
// nap, a tool that runs as a task) opens a 2025-11-25 session on /mcp/ops
// of wield serve, whose tools/list the in-core tasks answer: run_program
// lists the functions of the key's scope (nap), not secret_note out of it.
func TestJourneyScopedTaskList(t *testing.T) {
	u := newUser(t)
	u.write("tools/nap.yaml", napTool)
	u.write("tools/notes.yaml", seamTools())
	u.write("tools/tool_sets/ops.yaml", "name: ops\ndescription: programs and naps\ntools:\n  - run_program\n  - nap\n")
	ops, _ := makeKey(t, u, "--name", "ops", "--toolset", "ops", "--rights", "call", "--tools", "tools")
	s := u.serve("--tools", "tools", "--programs")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := connectMCP(ctx, s.url+"/mcp/ops", ops)
	if err != nil {
		t.Fatalf("the ops key on /mcp/ops: %v", err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list on /mcp/ops: %v", err)
	}
	found := false
	for _, tl := range list.Tools {
		if tl.Name == "run_program" {
			found = true
			if strings.Contains(tl.Description, "secret_note") || !strings.Contains(tl.Description, "nap(") {
				t.Errorf("run_program's description for the ops key names a tool out of its scope, or lacks nap:\n%s", tl.Description)
			}
		}
	}
	if !found {
		t.Errorf("tools/list on /mcp/ops lacks run_program: %+v", list.Tools)
	}
	cs.Close()
	if code, took := s.stop(syscall.SIGTERM, 20*time.Second); code != 0 {
		t.Fatalf("serve exit %d after %v:\n%s", code, took, s.stderr)
	}
}
