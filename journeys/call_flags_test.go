//go:build unix

package journeys

import (
	"strings"
	"testing"
)

// TestJourneyCallFlags: what a REST call can say, `wield call` can too,
// against its own engine and with --server: --id names the call (another
// call under it is refused, nothing run), --user is recorded as the call's
// user, --idempotency-key answers a repeat from the first result
// (replayed) and refuses the key with other arguments, --priority is
// recorded, and --agent confines the call to the agent's toolkit.
func TestJourneyCallFlags(t *testing.T) {
	u := newUser(t)
	u.write("tools/helper.yaml", "kind: agent\nname: helper\ndescription: a helper\ntools: [echo]\n")
	s := u.serve("--tools", "tools")
	for _, where := range []struct {
		name  string
		extra []string
	}{{"local", []string{"--tools", "tools"}}, {"server", []string{"--server", s.url}}} {
		t.Run(where.name, func(t *testing.T) {
			call := func(args ...string) *run {
				return u.wield(append(append([]string{"call"}, where.extra...), args...)...)
			}
			id := "mine-" + where.name
			r := call("echo", "message=hi", "--id", id, "--user", "alice", "--priority", "3", "--idempotency-key", "k-"+where.name)
			var res struct {
				CallID   string         `json:"call_id"`
				OK       bool           `json:"ok"`
				Error    string         `json:"error"`
				Metadata map[string]any `json:"metadata"`
			}
			r.json(t, &res)
			if r.code != 0 || res.CallID != id || !res.OK {
				t.Fatalf("the first call: %+v\n%s", res, r)
			}
			r = call("echo", "message=hi", "--idempotency-key", "k-"+where.name)
			r.json(t, &res)
			if r.code != 0 || res.Metadata["replayed"] != true || res.Metadata["replay_of"] != id {
				t.Errorf("a repeat under the key: %+v, want replayed from %s\n%s", res, id, r)
			}
			if r = call("echo", "message=other", "--idempotency-key", "k-"+where.name); r.code != 1 || !strings.Contains(r.stdout, "already used with other arguments") {
				t.Errorf("the key with other arguments:\n%s", r)
			}
			if r = call("echo", "message=again", "--id", id); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "id") {
				t.Errorf("a second call under --id %s:\n%s", id, r)
			}
			if r = call("calculator", "expression=1+1", "--agent", "helper"); r.code != 1 || !strings.Contains(r.stdout, "tool_not_found") {
				t.Errorf("calculator as helper, whose toolkit has only echo:\n%s", r)
			}
			if r = call("echo", "message=x", "--agent", "helper"); r.code != 0 {
				t.Errorf("echo as helper:\n%s", r)
			}
			if r = call("echo", "message=x", "--agent", "nobody"); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "nobody") {
				t.Errorf("an unknown agent:\n%s", r)
			}
		})
	}
	// The records, read from the store both shared.
	r := u.must("calls", "--json", "--limit", "100")
	for _, want := range []string{`"id": "mine-local"`, `"id": "mine-server"`, `"user_id": "alice"`, `"priority": 3`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the records lack %s:\n%.3000s", want, r.stdout)
		}
	}
	if r := u.wield("call", "echo", "message=x", "--id", "crajb5vnncy4bx0w0gx5bw8y2zz"); r.code != 2 || !strings.Contains(r.stderr, "shape of the IDs wield makes") {
		t.Errorf("--id of wield's own shape:\n%s", r)
	}
}
