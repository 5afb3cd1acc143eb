package toolfile

import (
	"fmt"
	"testing"
)

// TestLoadConfigTaskAfter checks mcp.task_after: absent (nil: the server's
// default), a duration, seconds for a bare number, zero (no such task), and
// refused when negative or not a duration, saying where.
func TestLoadConfigTaskAfter(t *testing.T) {
	for src, want := range map[string]string{"mcp: {task_after: 10s}\n": "10s", "mcp: {task_after: 45}\n": "45s", "mcp: {task_after: 0}\n": "0s", "mcp: {}\n": "<nil>"} {
		cfg, err := LoadConfig(writeConfig(t, src))
		if err != nil {
			t.Fatal(err)
		}
		got := "<nil>"
		if d := cfg.MCP.TaskAfter; d != nil {
			got = fmt.Sprint(*d)
		}
		if got != want {
			t.Errorf("%q: %s, want %s", src, got, want)
		}
	}
	p := writeConfig(t, "mcp: {task_after: -1s}\n")
	if got := configProblems(t, p); len(got) != 1 || got[0] != p+":1:19: task_after: must not be negative" {
		t.Errorf("problems %q, want the negative duration refused", got)
	}
	p = writeConfig(t, "mcp: {task_after: soon}\n")
	if got := configProblems(t, p); len(got) != 1 || got[0] != p+`:1:19: task_after: "soon" is not a duration like "30s"` {
		t.Errorf("problems %q, want the word refused", got)
	}
}
