//go:build unix

package journeys

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyScopedNamespaces: a key scoped to toolset math exports its
// tools for the Responses API's own search with namespaces
// (GET /v1/tools?format=responses&deferred=true&namespaces=true) and gets
// them grouped in math only, never in a toolset out of its scope that
// holds the same tool (payroll, sorted first), whose name and description
// it must not learn.
func TestJourneyScopedNamespaces(t *testing.T) {
	u := newUser(t)
	u.write("configs/tool_sets/math.yaml", "name: math\ndescription: arithmetic\ntools:\n  - calculator\n")
	u.write("configs/tool_sets/a_payroll.yaml", "name: a_payroll\ndescription: Salaries of the finance team\ntools:\n  - calculator\n  - echo\n")
	math, _ := makeKey(t, u, "--name", "s", "--toolset", "math", "--rights", "call", "--tools", "configs")
	s := u.serve("--tools", "configs")
	code, b := s.do("GET", "/v1/tools?format=responses&deferred=true&namespaces=true", "", bearer(math))
	if code != 200 || !strings.Contains(string(b), `"math"`) || !strings.Contains(string(b), `"calculator"`) {
		t.Errorf("the scoped key's export: %d %s", code, b)
	}
	if strings.Contains(string(b), "payroll") || strings.Contains(string(b), "Salaries") {
		t.Errorf("the scoped key's export names a toolset out of its scope:\n%s", b)
	}
	if code, took := s.stop(syscall.SIGTERM, 20*time.Second); code != 0 {
		t.Fatalf("serve exit %d after %v:\n%s", code, took, s.stderr)
	}
}
