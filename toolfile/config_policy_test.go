package toolfile

import (
	"strings"
	"testing"
)

// TestLoadConfigPolicyMode reads policy.mode: enforce unless written,
// monitor when asked, anything else an error at its line and column.
func TestLoadConfigPolicyMode(t *testing.T) {
	for src, want := range map[string]string{
		"timeout: 5s\n":              "",
		"policy: {mode: enforce}\n":  "enforce",
		"policy:\n  mode: monitor\n": "monitor",
	} {
		cfg, err := LoadConfig(writeConfig(t, src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if cfg.PolicyMode != want {
			t.Errorf("%q: policy mode %q, want %q", src, cfg.PolicyMode, want)
		}
	}
	for src, at := range map[string]string{
		"policy:\n  mode: audit\n":  `2:9: policy mode "audit": use enforce or monitor`,
		"policy: {mood: monitor}\n": "1:10",
	} {
		_, err := LoadConfig(writeConfig(t, src))
		if err == nil || !strings.Contains(err.Error(), at) {
			t.Errorf("%q: %v; want an error at %s", src, err, at)
		}
	}
}
