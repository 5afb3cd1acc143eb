package mcpbridge_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield/mcpbridge"
)

// BenchmarkFilePinsSetPins writes the pins of one listing of 10,000 tools
// into a file that already holds them (a restart after a server added
// tools): with the definitions kept since pins show a held tool's diff,
// against the hashes alone (the reference, in the same run), both with the
// file read again before the write.
func BenchmarkFilePinsSetPins(b *testing.B) {
	pins := make(map[string]mcpbridge.Pin, 10000)
	for i := range 10000 {
		p, err := mcpbridge.PinTool(&mcp.Tool{Name: fmt.Sprintf("t%05d", i), Description: "answers with its name",
			InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"q": {Type: "string"}}},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}})
		if err != nil {
			b.Fatal(err)
		}
		pins[fmt.Sprintf("t%05d", i)] = p
	}
	hashes := make(map[string]mcpbridge.Pin, len(pins))
	for k, p := range pins {
		p.Definition = nil
		hashes[k] = p
	}
	for _, c := range []struct {
		name string
		pins map[string]mcpbridge.Pin
	}{{"hashes", hashes}, {"definitions", pins}} {
		b.Run(c.name, func(b *testing.B) {
			f, err := mcpbridge.OpenFilePins(filepath.Join(b.TempDir(), "pins.json"))
			if err != nil {
				b.Fatal(err)
			}
			if err := f.SetPins("s", c.pins); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := f.SetPins("s", c.pins); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
