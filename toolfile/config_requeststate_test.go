package toolfile

import (
	"testing"
	"time"
)

// TestLoadConfigRequestStateTTL checks mcp.request_state_ttl: a duration,
// seconds for a bare number, and refused when negative.
func TestLoadConfigRequestStateTTL(t *testing.T) {
	for src, want := range map[string]time.Duration{"mcp: {request_state_ttl: 2m}\n": 2 * time.Minute, "mcp: {request_state_ttl: 30}\n": 30 * time.Second, "mcp: {}\n": 0} {
		cfg, err := LoadConfig(writeConfig(t, src))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.MCP.RequestStateTTL != want {
			t.Errorf("%q: %v, want %v", src, cfg.MCP.RequestStateTTL, want)
		}
	}
	p := writeConfig(t, "mcp: {request_state_ttl: -1s}\n")
	if got := configProblems(t, p); len(got) != 1 || got[0] != p+":1:26: request_state_ttl: must not be negative" {
		t.Errorf("problems %q, want the negative TTL refused", got)
	}
}
