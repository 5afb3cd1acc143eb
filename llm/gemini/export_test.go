package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
)

func schemaOf(t *testing.T, text string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatalf("schema %s: %v", text, err)
	}
	return &s
}

func compact(t *testing.T, text string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestConvertSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"types upper-case, order kept, required checked",
			`{"type":"object","properties":{"b":{"type":"integer","format":"int64"},"a":{"type":"boolean"}},"required":["b","zzz"]}`,
			`{"type":"OBJECT","properties":{"a":{"type":"BOOLEAN"},"b":{"type":"INTEGER","format":"int64"}},"propertyOrdering":["a","b"],"required":["b"]}`},
		{"type list with null is nullable",
			`{"type":"object","properties":{"c":{"type":["string","null"],"enum":["x",null]}}}`,
			`{"type":"OBJECT","properties":{"c":{"type":"STRING","nullable":true,"enum":["x"]}},"propertyOrdering":["c"]}`},
		{"anyOf with null folds into its branch",
			`{"type":"object","properties":{"n":{"description":"Ratio","anyOf":[{"type":"number","exclusiveMinimum":0},{"type":"null"}]}}}`,
			`{"type":"OBJECT","properties":{"n":{"type":"NUMBER","description":"Ratio;exclusiveMinimum: 0","nullable":true}},"propertyOrdering":["n"]}`},
		{"other type lists and oneOf become anyOf",
			`{"type":"object","properties":{"v":{"type":["string","integer"]},"w":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}}}`,
			`{"type":"OBJECT","properties":{"v":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]},"w":{"anyOf":[{"type":"STRING"},{"type":"ARRAY","items":{"type":"STRING"}}]}},"propertyOrdering":["v","w"]}`},
		{"references are expanded with their siblings",
			`{"type":"object","$defs":{"o":{"type":"string","enum":["asc","desc"]}},"properties":{"x":{"$ref":"#/$defs/o","description":"Order"},"y":{"type":"array","items":{"$ref":"#/$defs/o"}}}}`,
			`{"type":"OBJECT","properties":{"x":{"type":"STRING","description":"Order","enum":["asc","desc"]},"y":{"type":"ARRAY","items":{"type":"STRING","enum":["asc","desc"]}}},"propertyOrdering":["x","y"]}`},
		{"const and enums of other types",
			`{"type":"object","properties":{"s":{"const":"json"},"n":{"type":"integer","const":3},"e":{"type":"integer","enum":[1,2,3],"description":"Level"}}}`,
			`{"type":"OBJECT","properties":{"e":{"type":"INTEGER","description":"Level;Allowed values: 1, 2, 3"},"n":{"type":"INTEGER","minimum":3,"maximum":3},"s":{"type":"STRING","enum":["json"]}},"propertyOrdering":["e","n","s"]}`},
		{"unknown formats and dropped keywords",
			`{"$schema":"x","type":"object","additionalProperties":false,"properties":{"u":{"type":"string","format":"uri","examples":["https://a"],"default":"https://b","readOnly":true},"t":{"type":"string","format":"date-time","multipleOf":2}}}`,
			`{"type":"OBJECT","properties":{"t":{"type":"STRING","format":"date-time","description":"multipleOf: 2"},"u":{"type":"STRING","description":"format: uri","default":"https://b","example":"https://a"}},"propertyOrdering":["t","u"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ps := gemini.ConvertSchema(schemaOf(t, tt.in))
			if len(ps) > 0 {
				t.Fatalf("problems: %v", ps)
			}
			got, _ := json.Marshal(out)
			if diff := cmp.Diff(compact(t, tt.want), compact(t, string(got))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertSchemaProblems(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"recursive reference", `{"type":"object","$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"properties":{"root":{"$ref":"#/$defs/n"}}}`, []string{"/properties/root/properties/kids/items"}},
		{"recursive root", `{"type":"object","properties":{"next":{"$ref":"#"}}}`, []string{"/properties/next/properties/next"}},
		{"map", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}}}`, []string{"/properties/m/additionalProperties"}},
		{"free-form object", `{"type":"object","properties":{"m":{"type":"object"}}}`, []string{"/properties/m"}},
		{"any value", `{"type":"object","properties":{"a":true}}`, []string{"/properties/a"}},
		{"allOf", `{"type":"object","properties":{"a":{"type":"string","allOf":[{"minLength":1}]}}}`, []string{"/properties/a"}},
		{"array without items", `{"type":"object","properties":{"a":{"type":"array"}}}`, []string{"/properties/a"}},
		{"unresolvable reference", `{"type":"object","properties":{"a":{"$ref":"#/$defs/none"}}}`, []string{"/properties/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := gemini.ConvertSchema(schemaOf(t, tt.in))
			var got []string
			for _, p := range ps {
				got = append(got, p.Path)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problem paths (-want +got):\n%s\n%v", diff, ps)
			}
		})
	}
}

type pingIn struct{}

func TestExportTool(t *testing.T) {
	ping := wield.Func("ping", "Check", func(context.Context, pingIn) (string, error) { return "", nil })
	dotted := wield.Raw("ns.read:v1", "Read", schemaOf(t, `{"type":"object","properties":{"path":{"type":"string"}}}`), nil)
	badParam := wield.Raw("bad_param", "Bad", schemaOf(t, `{"type":"object","properties":{"my-path":{"type":"string"}}}`), nil)
	digit := wield.Raw("1read", "Read", schemaOf(t, `{"type":"object","properties":{"path":{"type":"string"}}}`), nil)
	// Names and parameter names have at most 64 characters.
	long := wield.Raw(strings.Repeat("n", 65), "Long", schemaOf(t, `{"type":"object","properties":{"path":{"type":"string"}}}`), nil)
	longParam := wield.Raw("long_param", "Long", schemaOf(t, `{"type":"object","properties":{"`+strings.Repeat("p", 65)+`":{"type":"string"}}}`), nil)
	at64 := wield.Raw(strings.Repeat("n", 64), "At 64", schemaOf(t, `{"type":"object","properties":{"`+strings.Repeat("p", 64)+`":{"type":"string"}}}`), nil)
	tool, ps := gemini.Tools([]*wield.Tool{ping, dotted, badParam, digit, long, longParam, at64})
	got, _ := json.Marshal(tool)
	want := `{"functionDeclarations":[{"name":"ping","description":"Check"},{"name":"ns.read:v1","description":"Read","parameters":{"type":"OBJECT","properties":{"path":{"type":"STRING"}},"propertyOrdering":["path"]}},` +
		`{"name":"` + strings.Repeat("n", 64) + `","description":"At 64","parameters":{"type":"OBJECT","properties":{"` + strings.Repeat("p", 64) + `":{"type":"STRING"}},"propertyOrdering":["` + strings.Repeat("p", 64) + `"]}}]}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var left []string
	for _, p := range ps {
		left = append(left, p.Tool+" "+p.Path)
	}
	if diff := cmp.Diff([]string{"bad_param /properties/my-path", "1read ", strings.Repeat("n", 65) + " ", "long_param /properties/" + strings.Repeat("p", 65)}, left); diff != "" {
		t.Errorf("problems (-want +got):\n%s\n%v", diff, ps)
	}
}

func ExampleTools() {
	type weatherIn struct {
		City  string `json:"city" description:"City name"`
		Units string `json:"units,omitempty" enum:"c,f"`
	}
	weather := wield.Func("weather", "Current weather",
		func(context.Context, weatherIn) (string, error) { return "", nil })
	tool, problems := gemini.Tools([]*wield.Tool{weather})
	b, _ := json.Marshal(tool)
	fmt.Println(string(b), len(problems))
	// Output:
	// {"functionDeclarations":[{"name":"weather","description":"Current weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING","description":"City name"},"units":{"type":"STRING","enum":["c","f"]}},"propertyOrdering":["city","units"],"required":["city"]}}]} 0
}

// TestNotesWordedAsKeywordNote: a keyword Gemini cannot take goes into
// the description in the words every dialect uses (llm.KeywordNote), as
// the OpenAI and Anthropic strict exports write it.
func TestNotesWordedAsKeywordNote(t *testing.T) {
	for _, tt := range []struct{ keyword, schema string }{
		{"exclusiveMinimum", `{"type":"number","exclusiveMinimum":0}`},
		{"exclusiveMaximum", `{"type":"number","exclusiveMaximum":1.5}`},
		{"multipleOf", `{"type":"number","multipleOf":0.5}`},
		{"uniqueItems", `{"type":"array","items":{"type":"string"},"uniqueItems":true}`},
		{"contentEncoding", `{"type":"string","contentEncoding":"base64"}`},
		{"contentMediaType", `{"type":"string","contentMediaType":"image/png"}`},
		{"deprecated", `{"type":"string","deprecated":true}`},
		{"format", `{"type":"string","format":"uri"}`},
	} {
		s := schemaOf(t, tt.schema)
		out, problems := gemini.ConvertSchema(s)
		if len(problems) > 0 {
			t.Fatalf("%s: %v", tt.keyword, problems)
		}
		if want := llm.KeywordNote(s, tt.keyword); out.Description != want {
			t.Errorf("%s: description %q, want %q (llm.KeywordNote)", tt.keyword, out.Description, want)
		}
	}
}
