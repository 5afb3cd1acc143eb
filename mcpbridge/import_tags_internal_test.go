package mcpbridge

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestImportTagsBounded: the tags a server gives a tool are bounded in
// number and length, and a list of 200,000 of them costs no more than a
// short one (each was compared with every one kept before: minutes of CPU
// for one tools/list). The configured tags follow, all of them.
func TestImportTagsBounded(t *testing.T) {
	many := make([]any, 200000)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	long := strings.Repeat("x", impMaxTag+1)
	start := time.Now()
	got := impTags(mcp.Meta{"tags": append([]any{long, "a", "a"}, many...)}, []string{"configured", "a"})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("200,000 tags took %v", d)
	}
	if len(got) != impMaxTags+1 || got[0] != "a" || got[len(got)-1] != "configured" || slices.Contains(got, long) {
		t.Errorf("tags = %d: %.200q, want the first %d of the server's (the long one left out, no repeat) and then the configured one", len(got), got, impMaxTags)
	}
}
