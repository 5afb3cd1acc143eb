package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

func TestJSONWritesHTMLCharacters(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"string", "a < b && b > c", `"a < b && b > c"`},
		// jsonschema.Schema marshals itself with json.Marshal, which
		// escapes whatever the outer encoder is told.
		{"schema", &jsonschema.Schema{Type: "string", Description: "<left> & <right>"}, `{"type":"string","description":"<left> & <right>"}`},
		{"nested schema", map[string]any{"s": &jsonschema.Schema{Description: "x<y"}}, `{"s":{"description":"x<y"}}`},
		// A backslash followed by the text u003c is not an escape of <.
		{"escaped backslash", `\u003c`, `"\\u003c"`},
		{"other escapes stay", "tab\there \u2028 \"q\"", `"tab\there \u2028 \"q\""`},
	}
	for _, tc := range tests {
		got, err := llm.JSON(tc.v, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestPromptsWriteHTMLCharacters: the prompts are text a model reads, so a
// schema shown in them keeps <, > and & as they are.
func TestPromptsWriteHTMLCharacters(t *testing.T) {
	type in struct {
		Filter map[string]string `json:"filter" description:"keys <= 10 & values > 0"`
	}
	tool := wield.Func("pick", "Pick rows where a < b & c > d", func(context.Context, in) (string, error) { return "", nil })
	for name, text := range map[string]string{"xml": llm.XMLInstructions([]*wield.Tool{tool}), "json": llm.JSONInstructions([]*wield.Tool{tool})} {
		if strings.Contains(text, `\u00`) || !strings.Contains(text, "keys <= 10 & values > 0") || !strings.Contains(text, "a < b & c > d") {
			t.Errorf("%s prompt escapes <, > or &:\n%s", name, text)
		}
	}
}

// FuzzJSON checks that llm.JSON writes the same JSON value as
// encoding/json, with no HTML escapes left.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{"", "<>&", `\u003c`, `\\u003c<`, "\u2028", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := map[string]any{"s": s, "schema": &jsonschema.Schema{Description: s}}
		got, err := llm.JSON(v, "  ")
		if err != nil {
			t.Fatal(err)
		}
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(strings.ReplaceAll(string(got), `\\`, ""), esc) {
				t.Fatalf("%s left in %s", esc, got)
			}
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, got)
		}
		if err := json.Unmarshal(want, &b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(b, a); diff != "" {
			t.Errorf("value changed (-encoding/json +llm.JSON):\n%s", diff)
		}
	})
}
