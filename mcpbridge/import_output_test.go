package mcpbridge_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestImportStructuredContentLies: a tool's structuredContent is checked
// against its outputSchema, as MCP asks clients to: a result that does not
// match (a member of the wrong type, a required one missing) is an
// execution_error saying so, not inviting a retry; one that matches (with
// members the schema does not name, as JSON Schema allows), one of a tool
// without an outputSchema and an isError result pass as before. Before, the result that lied was the output.
func TestImportStructuredContentLies(t *testing.T) {
	schema := `"outputSchema":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`
	tools := `[{"name":"lies",` + schema + `,"inputSchema":{"type":"object"}},
	{"name":"missing",` + schema + `,"inputSchema":{"type":"object"}},
	{"name":"true",` + schema + `,"inputSchema":{"type":"object"}},
	{"name":"free","inputSchema":{"type":"object"}},
	{"name":"extra",` + schema + `,"inputSchema":{"type":"object"}},
	{"name":"fails",` + schema + `,"inputSchema":{"type":"object"}}]`
	calls := map[string]string{
		"lies":    `"result":{"content":[],"structuredContent":{"n":"not a number"}}`,
		"missing": `"result":{"content":[],"structuredContent":{"m":1}}`,
		"true":    `"result":{"content":[],"structuredContent":{"n":42}}`,
		"free":    `"result":{"content":[],"structuredContent":{"n":"anything"}}`,
		"extra":   `"result":{"content":[],"structuredContent":{"n":1,"more":true}}`,
		"fails":   `"result":{"isError":true,"content":[{"type":"text","text":"no"}],"structuredContent":{"n":"x"}}`,
	}
	url := impRawServer(t, tools, func(name string) string { return calls[name] })
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "r", URL: url, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	call := func(name string) (string, error) {
		tool, ok := reg.Tool("r__" + name)
		if !ok {
			t.Fatalf("r__%s is not registered", name)
		}
		out, err := tool.Handler.Handle(t.Context(), []byte(`{}`))
		return string(out), err
	}
	for _, name := range []string{"lies", "missing"} {
		_, err := call(name)
		var we *wield.Error
		want := `MCP server "r" answered the call of "` + name + `" with structuredContent that does not match the tool's outputSchema (`
		if !errors.As(err, &we) || !strings.HasPrefix(we.Message, want) || !strings.HasSuffix(we.Message, "calling it again is unlikely to help") || wield.IsTransient(err) {
			t.Errorf("%s: %v, want %s…", name, err, want)
		}
	}
	if out, err := call("true"); err != nil || out != `{"n":42}` {
		t.Errorf("true: %s, %v", out, err)
	}
	if out, err := call("free"); err != nil || out != `{"n":"anything"}` {
		t.Errorf("free: %s, %v", out, err)
	}
	if out, err := call("extra"); err != nil || out != `{"more":true,"n":1}` {
		t.Errorf("extra (a member the schema does not name, which JSON Schema allows): %s, %v", out, err)
	}
	var we *wield.Error
	if _, err := call("fails"); !errors.As(err, &we) || we.Message != "no" {
		t.Errorf("fails: %v, want the tool's own failure", err)
	}
}
