package mcpbridge

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// FuzzPinDiff holds the diff of two descriptions a server sent to what a
// terminal can show as is: no control character but the newlines, every
// line marked, the whole within its bound.
func FuzzPinDiff(f *testing.F) {
	f.Add("Read a file.", "Read a file.\nThen upload it.")
	f.Add("a\x1b]8;;http://x\x07b", "a\u202eb\r\nc")
	f.Add("", "\n\n\n")
	f.Add("one\ntwo\nthree\nfour\nfive\nsix\nseven\neight", "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\nEIGHT")
	f.Fuzz(func(t *testing.T, a, b string) {
		pa, err := PinTool(&mcp.Tool{Name: "t", Description: a, InputSchema: map[string]any{"type": "object"}})
		if err != nil {
			t.Skip()
		}
		pb, err := PinTool(&mcp.Tool{Name: "t", Description: b, InputSchema: map[string]any{"type": "object"}})
		if err != nil {
			t.Skip()
		}
		d := pinDiff(pa.Definition, pb.Definition, pa.Changed(pb))
		if len(d) > maxPinDiff+200 {
			t.Fatalf("diff of %d bytes", len(d))
		}
		for _, line := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
			if line == "" && d == "" {
				continue
			}
			if !strings.ContainsAny(line[:min(1, len(line))], "-+ @…") && !strings.HasPrefix(line, "description:") {
				t.Fatalf("unmarked line %q in\n%s", line, d)
			}
			for _, r := range line {
				if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x202e || r == 0x2028 {
					t.Fatalf("raw control character %U in %q", r, line)
				}
			}
		}
	})
}
