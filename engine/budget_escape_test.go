package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wieldhq/wield/engine"
)

// TestTruncateKeepsText checks that an output cut to the budget is text a
// model reads: <, > and & as they are, within the budget.
func TestTruncateKeepsText(t *testing.T) {
	text := strings.Repeat("if a < b && c > d {}\n", 200)
	out := engine.Truncate([]byte(text), 1000)
	var s string
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("Truncate wrote %s: %v", out, err)
	}
	if len(out) > 1000 || strings.Contains(string(out), `\u00`) || !strings.HasPrefix(s, "if a < b && c > d {}\n") || !strings.HasSuffix(s, "if a < b && c > d {}\n") {
		t.Errorf("Truncate = %s (%d bytes), want <, > and & as they are within 1000 bytes", out, len(out))
	}
}
