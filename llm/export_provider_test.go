package llm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// providerSchemas are the JSON Schemas of one tool definition in each
// provider's request, written from the provider's documentation (each
// file's $comment gives the pages), by dialect.
var providerSchemas = map[string]string{
	"openai":                  "openai.tool.schema.json",
	"openai-strict":           "openai.tool.schema.json",
	"openai-responses":        "openai-responses.tool.schema.json",
	"openai-responses-strict": "openai-responses.tool.schema.json",
	"anthropic":               "anthropic.tool.schema.json",
	"anthropic-strict":        "anthropic.tool.schema.json",
	"gemini":                  "gemini.tool.schema.json",
	"gemini-json-schema":      "gemini.tool.schema.json",
	"mcp":                     "mcp.tool.schema.json",
}

func providerSchema(t *testing.T, dialect string) *jsonschema.Resolved {
	t.Helper()
	file, ok := providerSchemas[dialect]
	if !ok {
		t.Fatalf("no provider schema for dialect %q", dialect)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "provider", file))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if !strings.Contains(s.Comment, "https://") {
		t.Errorf("%s: $comment does not name the documentation it was written from", file)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return r
}

// TestGoldensMatchProviderSchemas validates every tool of every export
// golden against the provider's documented shape of a tool definition.
func TestGoldensMatchProviderSchemas(t *testing.T) {
	for _, tc := range dialects {
		t.Run(tc.d.Name(), func(t *testing.T) {
			r := providerSchema(t, tc.d.Name())
			raw, err := os.ReadFile(filepath.Join("testdata", "golden", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var g struct {
				Tools []any `json:"tools"`
			}
			if err := json.Unmarshal(raw, &g); err != nil {
				t.Fatal(err)
			}
			if len(g.Tools) == 0 {
				t.Fatal("golden has no tools")
			}
			for _, tool := range g.Tools {
				if err := r.Validate(tool); err != nil {
					t.Errorf("%v: %v", tool.(map[string]any)["name"], err)
				}
			}
		})
	}
}

// TestProviderSchemasReject proves the provider schemas can fail: each
// tool breaks one documented rule.
func TestProviderSchemasReject(t *testing.T) {
	tests := []struct{ dialect, tool string }{
		{"anthropic", `{"name":"a.b","input_schema":{"type":"object"}}`},
		{"anthropic", `{"name":"a","input_schema":{"type":"object"},"input_examples":["x"]}`},
		{"anthropic", `{"name":"a","input_schema":{"type":"object"},"allowed_callers":["program"]}`},
		{"anthropic", `{"name":"a","input_schema":{"type":"string"}}`},
		{"anthropic", `{"name":"a","input_schema":{"type":"object"},"examples":[{}]}`},
		{"openai", `{"type":"function","function":{"name":"a","parameters":{"type":"object"},"input_examples":[]}}`},
		{"openai-responses", `{"type":"function","name":"a","parameters":{"type":"object"}}`},
		{"gemini", `{"name":"a","parameters":{"type":"object"}}`},
		{"gemini", `{"name":"a","parameters":{"type":"OBJECT","additionalProperties":false}}`},
		{"gemini", `{"name":"a","parameters":{"type":"OBJECT"},"parametersJsonSchema":{"type":"object"}}`},
		{"mcp", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"examples":[]}}`},
		{"mcp", `{"name":"a","inputSchema":{"type":"object"},"_meta":{"modelcontextprotocol.io/x":1}}`},
		{"mcp", `{"name":"a","inputSchema":{"type":"array"}}`},
	}
	for _, tt := range tests {
		r := providerSchema(t, tt.dialect)
		var tool any
		if err := json.Unmarshal([]byte(tt.tool), &tool); err != nil {
			t.Fatal(err)
		}
		if r.Validate(tool) == nil {
			t.Errorf("%s schema accepted %s", tt.dialect, tt.tool)
		}
	}
}
