package mcpbridge_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// A server's schemas are read in time linear in their size, and one nested
// deeper than internal/schemadec.MaxDepth (128 schemas) is refused: the
// tool is not imported, the others are. jsonschema-go read a schema
// decoding all of it again at every schema it holds: a 9 KB input schema
// 900 items deep (JSON's encoder stops at 1,000 levels) held the importer,
// its lock taken, for over a second before the tool was imported, so a
// tools/list of 16 MiB of such schemas held it for most of an hour.
func TestImportDeepSchemaRefused(t *testing.T) {
	deep := `{"type":"string"}`
	for range 900 {
		deep = `{"items":` + deep + `}`
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"a":`+deep+`}}`), &in); err != nil {
		t.Fatal(err)
	}
	bad := impEchoArgs("deep", "Deep.")
	bad.tool.InputSchema = in
	g := impNewGoServer(t, bad, impEchoArgs("small", "Small."))
	bus := wield.NewBus(0)
	sub := bus.Subscribe(func(e *wield.Event) bool { return e.Type == wield.EventLoadError })
	defer sub.Close()
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Pins: &mcpbridge.MemPins{}})
	start := time.Now()
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if x, _ := reg.Tool("go__small"); x == nil {
		t.Fatal("the small tool was not imported")
	}
	if x, _ := reg.Tool("go__deep"); x != nil {
		t.Fatalf("the tool of a schema 900 deep was imported (after %v)", took)
	}
	e, err := sub.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := `input schema: schema at "#/properties/a/items/items/`; !strings.Contains(e.Message, want) || !strings.Contains(e.Message, "nested deeper than 128 schemas") {
		t.Errorf("load error %q, want it to say where the schema is too deep", e.Message)
	}
}
