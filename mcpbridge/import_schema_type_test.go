package mcpbridge_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestImportInputSchemaNotObject: MCP's inputSchema is an object schema
// (a tool takes an object of arguments). A tool whose schema is of another
// type (a string, an array, a type list without object) is not imported,
// with a warning that says why: given to a model, such a tool makes
// providers refuse the whole request that carries it. A schema that names
// no type, or object among others, is imported.
func TestImportInputSchemaNotObject(t *testing.T) {
	tools := `[
	{"name":"str","inputSchema":{"type":"string"}},
	{"name":"arr","inputSchema":{"type":"array","items":{"type":"string"}}},
	{"name":"many","inputSchema":{"type":["string","number"]}},
	{"name":"ok","inputSchema":{"type":"object"}},
	{"name":"untyped","inputSchema":{"properties":{"a":{"type":"string"}}}},
	{"name":"nullable","inputSchema":{"type":["object","null"]}}
	]`
	url := impRawServer(t, tools, func(string) string { return `"result":{"content":[]}` })
	log := &impLog{}
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "r", URL: url, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"r__ok", "r__untyped", "r__nullable"}, impNames(reg)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	got := log.String()
	for _, w := range []string{
		`tool=str error="input schema: its type is \"string\", not object: an MCP tool takes an object of arguments"`,
		`tool=arr error="input schema: its type is \"array\", not object`,
		`tool=many error="input schema: its type is [\"string\" \"number\"], not object`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("log lacks %s:\n%s", w, got)
		}
	}
}
