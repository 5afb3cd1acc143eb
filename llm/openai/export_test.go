package openai_test

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
	"github.com/wieldhq/wield/llm/openai"
)

func schemaOf(t *testing.T, text string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatalf("schema %s: %v", text, err)
	}
	return &s
}

// compact re-encodes JSON text so that expected schemas can be written
// readably.
func compact(t *testing.T, text string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestStrictSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"optional becomes nullable and required",
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","minimum":1}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["integer","null"],"minimum":1}},"required":["a","b"],"additionalProperties":false}`},
		{"optional enum also accepts null",
			`{"type":"object","properties":{"u":{"type":"string","enum":["c","f"]}}}`,
			`{"type":"object","properties":{"u":{"type":["string","null"],"enum":["c","f",null]}},"required":["u"],"additionalProperties":false}`},
		{"optional reference becomes anyOf with null",
			`{"type":"object","properties":{"o":{"$ref":"#/$defs/o"}},"$defs":{"o":{"type":"string","enum":["asc","desc"]}}}`,
			`{"type":"object","properties":{"o":{"anyOf":[{"$ref":"#/$defs/o"},{"type":"null"}]}},"required":["o"],"additionalProperties":false,"$defs":{"o":{"type":"string","enum":["asc","desc"]}}}`},
		{"reference with siblings is inlined; definitions become $defs",
			`{"type":"object","properties":{"o":{"$ref":"#/definitions/o","description":"Order"}},"required":["o"],"definitions":{"o":{"type":"string","title":"O"}}}`,
			`{"type":"object","properties":{"o":{"type":"string","title":"O","description":"Order"}},"required":["o"],"additionalProperties":false,"$defs":{"o":{"type":"string","title":"O"}}}`},
		{"narrowing keywords move into the description",
			`{"type":"object","properties":{"s":{"type":"string","description":"Name","minLength":1,"maxLength":9,"format":"uri","default":"x"}},"required":["s"]}`,
			`{"type":"object","properties":{"s":{"type":"string","description":"Name;Default: x;minLength: 1;maxLength: 9;format: uri"}},"required":["s"],"additionalProperties":false}`},
		{"annotations are dropped; oneOf becomes anyOf",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$comment":"c","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}],"readOnly":true}},"required":["v"]}`,
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"required":["v"],"additionalProperties":false}`},
		{"nested arrays of objects are closed",
			`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}}}},"required":["xs"]}`,
			`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"object","properties":{"k":{"type":["string","null"]}},"required":["k"],"additionalProperties":false}}},"required":["xs"],"additionalProperties":false}`},
		{"parameters that are any object mean none",
			`{"type":"object"}`,
			`{"type":"object","properties":{},"additionalProperties":false}`},
		{"optional const keeps its description on the union",
			`{"type":"object","properties":{"f":{"const":"json","description":"Format"}}}`,
			`{"type":"object","properties":{"f":{"anyOf":[{"const":"json"},{"type":"null"}],"description":"Format"}},"required":["f"],"additionalProperties":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := schemaOf(t, tt.in)
			before, _ := json.Marshal(in)
			out, ps := openai.StrictSchema(in)
			if len(ps) > 0 {
				t.Fatalf("problems: %v", ps)
			}
			got, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(compact(t, tt.want), compact(t, string(got))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if after, _ := json.Marshal(in); string(after) != string(before) {
				t.Errorf("the input was modified:\n%s\n%s", before, after)
			}
		})
	}
}

func TestStrictSchemaProblems(t *testing.T) {
	deep := `{"type":"string"}`
	for range 11 {
		deep = `{"type":"object","properties":{"n":` + deep + `},"required":["n"]}`
	}
	var many strings.Builder
	many.WriteString(`{"type":"object","properties":{`)
	for i := range 5001 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"p%d":{"type":"boolean"}`, i)
	}
	many.WriteString(`}}`)
	enum := make([]string, 1001)
	for i := range enum {
		enum[i] = fmt.Sprintf(`"v%d"`, i)
	}
	longEnum := make([]string, 251)
	for i := range longEnum {
		longEnum[i] = `"` + strings.Repeat("x", 60) + fmt.Sprint(i) + `"`
	}
	tests := []struct {
		name, in string
		want     []string // paths
	}{
		{"map", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`, []string{"/properties/m/additionalProperties"}},
		{"free-form object", `{"type":"object","properties":{"m":{"type":"object"}}}`, []string{"/properties/m"}},
		{"open parameters", `{"type":"object","additionalProperties":true}`, []string{""}},
		{"patternProperties", `{"type":"object","properties":{"a":{"type":"string"}},"patternProperties":{"^x":{"type":"string"}}}`, []string{""}},
		{"allOf and not", `{"type":"object","properties":{"a":{"allOf":[{"type":"string"}],"not":{"const":"x"}}}}`, []string{"/properties/a", "/properties/a", "/properties/a"}},
		{"any value", `{"type":"object","properties":{"a":{}}}`, []string{"/properties/a"}},
		{"array without items", `{"type":"object","properties":{"a":{"type":"array"}}}`, []string{"/properties/a"}},
		{"tuple", `{"type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}]}}}`, []string{"/properties/a/items"}},
		{"root not an object", `{"type":"string"}`, []string{""}},
		{"root anyOf", `{"anyOf":[{"type":"object","properties":{}}]}`, []string{"", "/anyOf/0", ""}},
		{"unresolvable reference", `{"type":"object","properties":{"a":{"$ref":"other.json#/x"}}}`, []string{"/properties/a"}},
		{"11 levels of objects", deep, []string{"/properties/n/properties/n/properties/n/properties/n/properties/n/properties/n/properties/n/properties/n/properties/n/properties/n"}},
		{"5001 properties", many.String(), []string{""}},
		{"1001 enum values", `{"type":"object","properties":{"e":{"type":"string","enum":[` + strings.Join(enum, ",") + `]}},"required":["e"]}`, []string{""}},
		{"long large enum", `{"type":"object","properties":{"e":{"type":"string","enum":[` + strings.Join(longEnum, ",") + `]}},"required":["e"]}`, []string{"/properties/e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := openai.StrictSchema(schemaOf(t, tt.in))
			var got []string
			for _, p := range ps {
				got = append(got, p.Path)
				if p.Message == "" {
					t.Errorf("problem at %q has no message", p.Path)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problem paths (-want +got):\n%s\n%v", diff, ps)
			}
		})
	}
}

type weatherIn struct {
	City  string `json:"city" description:"City name"`
	Units string `json:"units,omitempty" enum:"c,f" default:"c"`
}

func weather(name string) *wield.Tool {
	return wield.Func(name, "Current weather", func(context.Context, weatherIn) (string, error) { return "", nil })
}

func TestDialects(t *testing.T) {
	tests := []struct {
		d    openai.Dialect
		name string
		want string
	}{
		{openai.Chat, "openai", `{"type":"function","function":{"name":"weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"units":{"type":"string","description":"Default: c","default":"c","enum":["c","f"]}},"required":["city"],"additionalProperties":false}}}`},
		{openai.ChatStrict, "openai-strict", `{"type":"function","function":{"name":"weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"units":{"type":["string","null"],"description":"Default: c","enum":["c","f",null]}},"required":["city","units"],"additionalProperties":false},"strict":true}}`},
		{openai.Responses, "openai-responses", `{"type":"function","name":"weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"units":{"type":"string","description":"Default: c","default":"c","enum":["c","f"]}},"required":["city"],"additionalProperties":false},"strict":false}`},
		{openai.ResponsesStrict, "openai-responses-strict", `{"type":"function","name":"weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"units":{"type":["string","null"],"description":"Default: c","enum":["c","f",null]}},"required":["city","units"],"additionalProperties":false},"strict":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.d.Name() != tt.name {
				t.Errorf("Name() = %q, want %q", tt.d.Name(), tt.name)
			}
			v, ps := tt.d.ExportTool(weather("weather"))
			if len(ps) > 0 {
				t.Fatalf("problems: %v", ps)
			}
			got, _ := json.Marshal(v)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"get_weather-2", true},
		{"weather.v2", false},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		tools, ps := openai.ChatTools([]*wield.Tool{weather(tt.name)}, false)
		if got := len(ps) == 0 && len(tools) == 1; got != tt.ok {
			t.Errorf("%q: accepted %v, want %v (%v)", tt.name, got, tt.ok, ps)
		}
	}
	rs, ps := openai.ResponsesTools([]*wield.Tool{weather("a"), weather("b.c")}, true)
	if len(rs) != 1 || rs[0].Name != "a" || len(ps) != 1 || ps[0] != (llm.Problem{Tool: "b.c", Dialect: "openai-responses-strict",
		Message: `name "b.c" is not accepted: the provider requires 1-64 letters, digits, _ or -`}) {
		t.Errorf("ResponsesTools = %+v, %+v", rs, ps)
	}
}

func ExampleStrictSchema() {
	var in jsonschema.Schema
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"q":{"type":"string","maxLength":100},"n":{"type":"integer"}},"required":["q"]}`), &in)
	out, problems := openai.StrictSchema(&in)
	b, _ := json.Marshal(out)
	fmt.Println(string(b), len(problems))
	// Output:
	// {"type":"object","properties":{"n":{"type":["integer","null"]},"q":{"type":"string","description":"maxLength: 100"}},"required":["n","q"],"additionalProperties":false} 0
}

// TestTopLevelRefused: OpenAI answers 400 for parameters with oneOf,
// anyOf, allOf, enum, const or not at the top level, whatever else they
// say; the dialect refuses such a tool, naming the keywords, and takes
// the same keywords below the top.
func TestTopLevelRefused(t *testing.T) {
	for _, tt := range []struct {
		schema, want string
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}},"oneOf":[{"required":["a"]}]}`, "function parameters cannot have oneOf at the top level: OpenAI refuses it"},
		{`{"type":"object","anyOf":[{"required":["a"]}],"allOf":[{"required":["b"]}],"not":{"required":["c"]}}`, "function parameters cannot have anyOf, allOf, not at the top level: OpenAI refuses it"},
		{`{"type":"object","enum":[{}],"const":{}}`, "function parameters cannot have enum, const at the top level: OpenAI refuses it"},
		{`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer"}]},"b":{"not":{"type":"null"}}}}`, ""},
	} {
		_, ps := openai.Chat.ExportTool(wield.Raw("x", "X", schemaOf(t, tt.schema), nil))
		got := ""
		if len(ps) > 0 {
			got = ps[0].Message
		}
		if len(ps) > 1 || got != tt.want {
			t.Errorf("%s: problems %v, want %q", tt.schema, ps, tt.want)
		}
	}
}

// TestDescriptionLimit: Chat Completions refuses a function description of
// more than 1024 characters (counted as characters, not bytes); the tool
// is left out with a problem saying so, not cut. The Responses API has no
// published limit.
func TestDescriptionLimit(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object"}
	at := wield.Raw("at_limit", strings.Repeat("é", openai.MaxDescription), schema, nil)
	over := wield.Raw("over_limit", strings.Repeat("a", openai.MaxDescription+1), schema, nil)
	for _, d := range []openai.Dialect{openai.Chat, openai.ChatStrict} {
		vs, ps := llm.Export(d, []*wield.Tool{at, over})
		if len(vs) != 1 || len(ps) != 1 || ps[0].Tool != "over_limit" || !strings.Contains(ps[0].Message, "1025 characters") {
			t.Errorf("%s: %d exported, problems %v", d.Name(), len(vs), ps)
		}
	}
	if vs, ps := llm.Export(openai.Responses, []*wield.Tool{at, over}); len(vs) != 2 || len(ps) != 0 {
		t.Errorf("responses: %d exported, problems %v", len(vs), ps)
	}
}
