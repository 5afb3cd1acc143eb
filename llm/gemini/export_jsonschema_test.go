package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
)

// TestJSONSchemaHTTPGet: http_get, which the OpenAPI subset cannot offer
// (its headers are a map), goes to Gemini in the JSON Schema dialect with
// its schema as it is.
func TestJSONSchemaHTTPGet(t *testing.T) {
	var get *wield.Tool
	for _, tool := range builtin.NetTools(builtin.NetOptions{}) {
		if tool.Name == "http_get" {
			get = tool
		}
	}
	if _, ps := gemini.Dialect.ExportTool(get); len(ps) == 0 {
		t.Fatal("http_get is accepted by the OpenAPI dialect: the test no longer shows what JSONSchema adds")
	}
	v, ps := gemini.JSONSchema.ExportTool(get)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	decl := v.(gemini.FunctionDeclaration)
	want, _ := json.Marshal(get.InputSchema)
	got, _ := json.Marshal(decl.ParametersJSONSchema)
	if diff := cmp.Diff(string(want), string(got)); diff != "" || decl.Parameters != nil {
		t.Errorf("parametersJsonSchema is not the schema as it is (-want +got):\n%s", diff)
	}
	if decl.ResponseJSONSchema == nil {
		t.Error("no responseJsonSchema for a tool with an output schema")
	}
}

// TestJSONSchemaRewrites: oneOf is sent as anyOf and definitions as $defs,
// with the references; keywords whose loss changes the shape are problems
// at their pointer; the tool's own schema is not modified.
func TestJSONSchemaRewrites(t *testing.T) {
	s := schemaOf(t, `{"type":"object","definitions":{"id":{"type":"string"}},"properties":{"a":{"oneOf":[{"$ref":"#/definitions/id"},{"type":"integer"}]}}}`)
	v, ps := gemini.JSONSchema.ExportTool(wield.Raw("pick", "Pick", s, nil))
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	got, _ := json.Marshal(v.(gemini.FunctionDeclaration).ParametersJSONSchema)
	if diff := cmp.Diff(compact(t, `{"type":"object","properties":{"a":{"anyOf":[{"$ref":"#/$defs/id"},{"type":"integer"}]}},"$defs":{"id":{"type":"string"}}}`), compact(t, string(got))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s.Definitions == nil || s.Properties["a"].OneOf == nil {
		t.Error("the tool's schema was modified")
	}
	for schema, path := range map[string]string{
		`{"type":"object","properties":{"x":{"type":"string","not":{"const":"a"}}}}`:                   "/properties/x",
		`{"type":"object","properties":{"m":{"type":"object","patternProperties":{"^x":{}}}}}`:         "/properties/m",
		`{"type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`:                          "",
		`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}],"anyOf":[{"minLength":1}]}}}`: "/properties/a",
	} {
		_, ps := gemini.JSONSchema.ExportTool(wield.Raw("x", "X", schemaOf(t, schema), nil))
		if len(ps) == 0 || ps[0].Path != path || ps[0].Dialect != "gemini-json-schema" {
			t.Errorf("%s: problems %v, want one at %q", schema, ps, path)
		}
	}
}

// TestClientJSONSchema: ClientOptions.JSONSchema sends parametersJsonSchema.
func TestClientJSONSchema(t *testing.T) {
	var decl map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Tools []struct {
				FunctionDeclarations []map[string]any `json:"functionDeclarations"`
			} `json:"tools"`
		}
		json.Unmarshal(body, &req)
		if len(req.Tools) == 1 && len(req.Tools[0].FunctionDeclarations) == 1 {
			decl = req.Tools[0].FunctionDeclarations[0]
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
	}))
	defer srv.Close()
	c, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "gemini-test", BaseURL: srv.URL, APIKey: "k", JSONSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "6*7?"}},
		Tools: []*wield.Tool{builtin.Calculator()}}); err != nil {
		t.Fatal(err)
	}
	if decl["name"] != "calculator" || decl["parametersJsonSchema"] == nil || decl["parameters"] != nil {
		t.Errorf("declaration %v", decl)
	}
}

func ExampleJSONSchemaTools() {
	type headersIn struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
	}
	get := wield.Func("get", "Fetch a URL",
		func(context.Context, headersIn) (string, error) { return "", nil })
	tool, problems := gemini.JSONSchemaTools([]*wield.Tool{get})
	b, _ := json.Marshal(tool)
	fmt.Println(string(b), len(problems))
	// Output:
	// {"functionDeclarations":[{"name":"get","description":"Fetch a URL","parametersJsonSchema":{"type":"object","properties":{"url":{"type":"string"},"headers":{"type":"object","additionalProperties":{"type":"string"}}},"required":["url"],"additionalProperties":false},"responseJsonSchema":{"type":"string"}}]} 0
}
