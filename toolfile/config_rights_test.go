package toolfile

import (
	"strings"
	"testing"
)

// TestLoadConfigServerGuards reads the two settings that relax the key
// guards of a server: both off unless written, and only booleans.
func TestLoadConfigServerGuards(t *testing.T) {
	tests := []struct {
		name, src      string
		bypass, selfOK bool
	}{
		{"none", "server: {addr: \":8080\"}\n", false, false},
		{"both", "server:\n  allow_workflow_bypass: true\n  self_approval: true\n", true, true},
		{"one", "server: {self_approval: true}\n", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadConfig(writeConfig(t, tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Server.AllowWorkflowBypass != tt.bypass || cfg.Server.SelfApproval != tt.selfOK {
				t.Errorf("allow_workflow_bypass %v, self_approval %v; want %v, %v", cfg.Server.AllowWorkflowBypass, cfg.Server.SelfApproval, tt.bypass, tt.selfOK)
			}
		})
	}
	_, err := LoadConfig(writeConfig(t, "server:\n  self_approval: sometimes\n"))
	if err == nil || !strings.Contains(err.Error(), "2:18") {
		t.Errorf("self_approval: sometimes: %v; want an error at 2:18", err)
	}
}
