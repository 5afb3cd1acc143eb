package mcpbridge_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield/mcpbridge"
)

// impWireTool decodes a tool as the SDK receives it off the wire.
func impWireTool(t testing.TB, js string) *mcp.Tool {
	t.Helper()
	var tool mcp.Tool
	if err := json.Unmarshal([]byte(js), &tool); err != nil {
		t.Fatal(err)
	}
	return &tool
}

func TestPinTool(t *testing.T) {
	base := impWireTool(t, `{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"integer","maximum":10},"b":{"type":"string"}}}}`)
	basePin, err := mcpbridge.PinTool(base)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		tool    string
		changed []string // nil: the same pin
	}{
		{"keys in another order, other spacing", `{ "inputSchema": {"properties": {"b": {"type": "string"}, "a": {"maximum": 10, "type": "integer"}}, "type": "object"}, "description": "d", "name": "t"}`, nil},
		{"title and meta are not pinned", `{"name":"t","description":"d","_meta":{"x":1},"title":"T","inputSchema":{"type":"object","properties":{"a":{"type":"integer","maximum":10},"b":{"type":"string"}}}}`, nil},
		{"annotations are: they decide the permission", `{"name":"t","description":"d","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object","properties":{"a":{"type":"integer","maximum":10},"b":{"type":"string"}}}}`, []string{"annotations"}},
		{"the hints' defaults written out are no change", `{"name":"t","description":"d","annotations":{"destructiveHint":true,"openWorldHint":true},"inputSchema":{"type":"object","properties":{"a":{"type":"integer","maximum":10},"b":{"type":"string"}}}}`, nil},
		{"description", `{"name":"t","description":"d2","inputSchema":{"type":"object","properties":{"a":{"type":"integer","maximum":10},"b":{"type":"string"}}}}`, []string{"description"}},
		{"the same number written otherwise", `{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"integer","maximum":10.0},"b":{"type":"string"}}}}`, nil},
		{"a number", `{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"integer","maximum":11},"b":{"type":"string"}}}}`, []string{"input_schema"}},
		{"output schema added", `{"name":"t","description":"d","outputSchema":{"type":"object"},"inputSchema":{"type":"object","properties":{"a":{"type":"integer","maximum":10},"b":{"type":"string"}}}}`, []string{"output_schema"}},
		{"another wield's permission in _meta is", `{"name":"t","description":"d","_meta":{"wield/permission":"confirm"},"inputSchema":{"type":"object","properties":{"a":{"type":"integer","maximum":10},"b":{"type":"string"}}}}`, []string{"permission"}},
		{"name and schema", `{"name":"u","description":"d","inputSchema":{"type":"object"}}`, []string{"input_schema", "name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := mcpbridge.PinTool(impWireTool(t, tt.tool))
			if err != nil {
				t.Fatal(err)
			}
			var changed []string
			if p.Hash != basePin.Hash {
				changed = basePin.Changed(p)
			}
			if diff := cmp.Diff(tt.changed, changed); diff != "" {
				t.Errorf("changed parts (-want +got):\n%s", diff)
			}
		})
	}
	// A server lowering the permission it exports is a change, as raising
	// it is; the same permission sent again is not.
	confirm, err := mcpbridge.PinTool(impWireTool(t, `{"name":"t","description":"d","_meta":{"wield/permission":"confirm","x":1},"inputSchema":{"type":"object"}}`))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := mcpbridge.PinTool(impWireTool(t, `{"name":"t","description":"d","_meta":{"x":2,"wield/permission":"confirm"},"inputSchema":{"type":"object"}}`))
	auto, _ := mcpbridge.PinTool(impWireTool(t, `{"name":"t","description":"d","_meta":{"wield/permission":"auto"},"inputSchema":{"type":"object"}}`))
	if again.Hash != confirm.Hash {
		t.Error("the same permission sent again changed the pin")
	}
	if got := confirm.Changed(auto); auto.Hash == confirm.Hash || !slices.Equal(got, []string{"permission"}) {
		t.Errorf("confirm -> auto: hashes equal %v, changed %v; want a change of permission", auto.Hash == confirm.Hash, got)
	}
	if !strings.HasPrefix(basePin.Hash, "sha256:") || len(basePin.Hash) != len("sha256:")+64 {
		t.Errorf("hash %q is not sha256:<64 hex digits>", basePin.Hash)
	}
}

func TestFilePins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	f, err := mcpbridge.OpenFilePins(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.Pin("s", "t"); ok {
		t.Fatal("an empty store has a pin")
	}
	when := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	pins := map[[2]string]mcpbridge.Pin{
		{"s", "t"}:   {Hash: "sha256:01", Parts: map[string]string{"name": "sha256:02"}, Time: when},
		{"s", "u"}:   {Hash: "sha256:03", Time: when},
		{"s2", "t"}:  {Hash: "sha256:04", Time: when},
		{"s", "t\n"}: {Hash: "sha256:05", Time: when},
	}
	for k, p := range pins {
		if err := f.SetPin(k[0], k[1], p); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SetPin("s", "u", mcpbridge.Pin{Hash: "sha256:06", Time: when}); err != nil {
		t.Fatal(err)
	}
	pins[[2]string{"s", "u"}] = mcpbridge.Pin{Hash: "sha256:06", Time: when}
	reopened, err := mcpbridge.OpenFilePins(path)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range pins {
		got, ok, err := reopened.Pin(k[0], k[1])
		if err != nil || !ok {
			t.Fatalf("pin %v after reopening: %v, %v", k, ok, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pin %v (-want +got):\n%s", k, diff)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the folder holds %d files, want only pins.json (no temporary files left)", len(entries))
	}
}

func TestFilePinsRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		ok            bool
	}{
		{"empty", "", true},
		{"empty object", "{}", true},
		{"not json", "pins: yes", false},
		{"unknown field", `{"s":{"t":{"hash":"sha256:01","colour":"red"}}}`, false},
		{"array", `[]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := mcpbridge.OpenFilePins(path)
			if (err == nil) != tt.ok {
				t.Errorf("OpenFilePins: %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestMemPins(t *testing.T) {
	var m mcpbridge.MemPins
	if _, ok, _ := m.Pin("s", "t"); ok {
		t.Fatal("the zero MemPins has a pin")
	}
	want := mcpbridge.Pin{Hash: "sha256:01"}
	if err := m.SetPin("s", "t", want); err != nil {
		t.Fatal(err)
	}
	got, ok, _ := m.Pin("s", "t")
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("pin (-want +got):\n%s", diff)
	}
	if _, ok, _ := m.Pin("s", "t2"); ok {
		t.Error("a pin of another tool was found")
	}
}

func BenchmarkPinTool(b *testing.B) {
	tool := impWireTool(b, `{"name":"search","description":"Search the web.","inputSchema":{"type":"object","required":["q"],"properties":{"q":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":50,"default":10},"site":{"type":"string"}}},"outputSchema":{"type":"object","properties":{"results":{"type":"array","items":{"type":"object"}}}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mcpbridge.PinTool(tool); err != nil {
			b.Fatal(err)
		}
	}
}
