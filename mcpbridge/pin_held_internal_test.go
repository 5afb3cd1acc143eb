package mcpbridge

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// A diff of large definitions is cut, and says how much was left out.
func TestPinDiffIsBounded(t *testing.T) {
	lines := func(prefix string) json.RawMessage {
		props := map[string]any{}
		for i := range 5000 {
			props[prefix+strings.Repeat("x", 20)+string(rune('a'+i%26))+strconv.Itoa(i)] = map[string]any{"type": "string"}
		}
		b, _ := json.Marshal(map[string]any{"input_schema": map[string]any{"type": "object", "properties": props}})
		return b
	}
	d := pinDiff(lines("old"), lines("new"), []string{"input_schema"})
	if len(d) > maxPinDiff+200 || !strings.Contains(d, "more bytes of diff not shown (over 64 KiB)") {
		t.Errorf("diff of %d bytes ends %q", len(d), d[max(0, len(d)-120):])
	}
}
