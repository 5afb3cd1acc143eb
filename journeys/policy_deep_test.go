//go:build unix

package journeys

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyPolicyTooDeep: a policy file rewritten, under a running wield
// serve that watches it, into a policy a million "!" deep is refused on
// reload with its file and line: the server lives on with the last good
// policies (it died of a stack overflow), and wield validate says the
// same and exits 1.
func TestJourneyPolicyTooDeep(t *testing.T) {
	u := newUser(t)
	key, _ := makeKey(t, u, "--name", "k", "--rights", "call")
	u.write("configs/policies.cedar", "@id(\"everyone\") permit(principal, action, resource);\n@id(\"no-calculator\") forbid(principal, action, resource == Tool::\"calculator\");\n")
	u.write("wield.yaml", "reload: {watch: true}\n")
	s := u.serve("--config", "wield.yaml", "--tools", "configs")
	if names := listNames(t, s, key); slices.Contains(names, "calculator") || !slices.Contains(names, "echo") {
		t.Fatalf("/v1/tools = %v, want echo without calculator", names)
	}

	u.write("configs/policies.cedar", "@id(\"everyone\") permit(principal, action, resource)\n  when { "+strings.Repeat("!", 1_000_000)+"false };\n")
	if !eventually(10*time.Second, func() bool { return strings.Contains(s.stderr.String(), "policies.cedar:1:") }) {
		t.Fatalf("no reload error naming policies.cedar:1: in the log:\n%.4000s", s.stderr)
	}
	if !strings.Contains(s.stderr.String(), "nests too deep") {
		t.Errorf("the reload error does not say the policy nests too deep:\n%.4000s", s.stderr)
	}
	if names := listNames(t, s, key); slices.Contains(names, "calculator") || !slices.Contains(names, "echo") {
		t.Errorf("after the refused reload /v1/tools = %v, want the last good policies (echo, no calculator)", names)
	}
	if r := u.wield("validate", "configs"); r.code != 1 || !strings.Contains(r.stdout, "policies.cedar:1:1: policy: this policy nests too deep") {
		t.Errorf("validate of the deep file: want exit 1 naming policies.cedar:1:1:\n%.4000s", r)
	}
	if code, took := s.stop(syscall.SIGTERM, 20*time.Second); code != 0 {
		t.Fatalf("serve exit %d after %v:\n%.4000s", code, took, s.stderr)
	}
}
