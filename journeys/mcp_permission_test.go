//go:build unix

package journeys

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJourneyMCPServerPermission: mcp_servers[].permission gives every
// tool of that server its permission, over what the tools' annotations
// imply: wield's own `wield mcp` imported twice over stdio, once as is
// (its read-only echo runs unasked), once with permission: confirm (the
// same echo needs a decision) and once with deny (refused, not run). A
// permission that is not auto, confirm or deny is refused at its line.
func TestJourneyMCPServerPermission(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "mcp_servers:\n"+
		"  - {name: plain, command: ["+bin+", mcp]}\n"+
		"  - {name: guarded, command: ["+bin+", mcp], permission: confirm}\n"+
		"  - {name: shut, command: ["+bin+", mcp], permission: deny}\n")
	r := u.must("list", "--config", "wield.yaml", "--json")
	var list []struct {
		Name       string `json:"name"`
		Permission string `json:"permission"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r)
	}
	got := map[string]string{}
	for _, tl := range list {
		got[tl.Name] = tl.Permission
	}
	for name, want := range map[string]string{"plain__echo": "auto", "guarded__echo": "confirm", "shut__echo": "deny"} {
		if got[name] != want {
			t.Errorf("%s: permission %q, want %q", name, got[name], want)
		}
	}
	if r := u.wield("call", "--config", "wield.yaml", "plain__echo", "message=hi"); r.code != 0 {
		t.Errorf("plain__echo:\n%s", r)
	}
	if r := u.wield("call", "--config", "wield.yaml", "shut__echo", "message=hi"); r.code != 1 || !strings.Contains(r.stdout, "permission_denied") {
		t.Errorf("shut__echo, its server's permission deny:\n%s", r)
	}
	u.write("bad.yaml", "mcp_servers:\n  - {name: x, command: [x], permission: sometimes}\n")
	if r := u.wield("list", "--config", "bad.yaml"); r.code == 0 || !strings.Contains(r.stderr, `bad.yaml:2:41: mcp server x: permission: "sometimes" is not auto, confirm or deny`) {
		t.Errorf("permission: sometimes:\n%s", r)
	}
}
