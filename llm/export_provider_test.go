package llm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/openai"
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
		{"openai-responses", `{"type":"function","name":"a","parameters":{"type":"object"},"strict":false,"allowed_callers":["program"]}`},
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

// loadSchema reads one of the provider schemas by file name.
func loadSchema(t *testing.T, file string) *jsonschema.Resolved {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "provider", file))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return r
}

// TestDeferredGoldens writes the documents for the providers' own tool
// search (Anthropic's; the Responses API's with a toolset as a namespace)
// as goldens, and validates each entry against the provider's documented
// shape: the search tool, each function (with defer_loading), each
// namespace and the functions in it.
func TestDeferredGoldens(t *testing.T) {
	tools := representativeTools(t)
	load := func(tool *wield.Tool) bool { return tool.Name == "web_search" }
	spaces := llm.NamespacesOf([]wield.Toolset{{Name: "records", Description: "Query and label records", Tools: []string{"query_records", "set_labels", "ping"}}})
	for _, tc := range []struct {
		file     string
		d        llm.Dialect
		spaces   []llm.Namespace
		search   string
		function string
	}{
		{"anthropic-deferred.json", anthropic.Dialect, nil, "anthropic-tool-search.schema.json", "anthropic.tool.schema.json"},
		{"openai-responses-deferred.json", openai.Responses, spaces, "openai-tool-search.schema.json", "openai-responses.tool.schema.json"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			vs, ps, err := llm.ExportDeferredIn(tc.d, tools, load, tc.spaces)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.file, marshalGolden(t, golden{Tools: vs, Problems: ps}))
			raw, err := llm.JSON(vs, "")
			if err != nil {
				t.Fatal(err)
			}
			var entries []map[string]any
			if err := json.Unmarshal(raw, &entries); err != nil {
				t.Fatal(err)
			}
			search, function, namespace := loadSchema(t, tc.search), loadSchema(t, tc.function), loadSchema(t, "openai-namespace.schema.json")
			var deferred, spaced int
			for i, e := range entries {
				var err error
				switch {
				case i == 0:
					err = search.Validate(e)
				case e["type"] == "namespace":
					if err = namespace.Validate(e); err == nil {
						for _, f := range e["tools"].([]any) {
							spaced++
							if f.(map[string]any)["defer_loading"] != true {
								t.Errorf("%v in a namespace is not deferred", f.(map[string]any)["name"])
							}
							if err = function.Validate(f); err != nil {
								break
							}
						}
					}
				default:
					err = function.Validate(e)
					if e["defer_loading"] == true {
						deferred++
					} else if e["name"] != "web_search" {
						t.Errorf("%v is loaded, want deferred", e["name"])
					}
				}
				if err != nil {
					t.Errorf("entry %d (%v): %v", i, e["name"], err)
				}
			}
			if deferred == 0 || (tc.spaces != nil && spaced != 3) {
				t.Errorf("%d deferred at the top, %d in namespaces", deferred, spaced)
			}
		})
	}
}

// TestDeferredSchemasReject proves the search tool and namespace schemas
// can fail.
func TestDeferredSchemasReject(t *testing.T) {
	for file, bad := range map[string]string{
		"anthropic-tool-search.schema.json": `{"type":"tool_search_tool_bm25","name":"tool_search_tool_bm25"}`,
		"openai-tool-search.schema.json":    `{"type":"tool_search","defer_loading":true}`,
		"openai-namespace.schema.json":      `{"type":"namespace","name":"a b","description":"d","tools":[{"type":"function"}]}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(bad), &v); err != nil {
			t.Fatal(err)
		}
		if loadSchema(t, file).Validate(v) == nil {
			t.Errorf("%s accepted %s", file, bad)
		}
	}
	var noDesc any
	_ = json.Unmarshal([]byte(`{"type":"namespace","name":"a","tools":[{"type":"function"}]}`), &noDesc)
	if loadSchema(t, "openai-namespace.schema.json").Validate(noDesc) == nil {
		t.Error("a namespace without a description was accepted")
	}
}
