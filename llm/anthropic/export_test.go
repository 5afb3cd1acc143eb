package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm/anthropic"
)

type weatherIn struct {
	City string `json:"city" description:"City name"`
}

func weather(name string) *wield.Tool {
	return wield.Func(name, "Current weather", func(context.Context, weatherIn) (string, error) { return "", nil })
}

func TestTools(t *testing.T) {
	notObject := wield.Raw("echo", "Echo", &jsonschema.Schema{Type: "string"}, nil)
	tools, ps := anthropic.Tools([]*wield.Tool{weather("get_weather"), weather("weather.v2"), weather(strings.Repeat("w", 65)), notObject})
	got, _ := json.Marshal(tools)
	want := `[{"name":"get_weather","description":"Current weather","input_schema":{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"],"additionalProperties":false}}]`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var left []string
	for _, p := range ps {
		left = append(left, p.Tool)
		if p.Dialect != "anthropic" || p.Message == "" {
			t.Errorf("problem %+v", p)
		}
	}
	if diff := cmp.Diff([]string{"weather.v2", strings.Repeat("w", 65), "echo"}, left); diff != "" {
		t.Errorf("left out (-want +got):\n%s", diff)
	}
}

// TestTopLevelRefused: the Messages API answers 400 "input_schema does
// not support oneOf, allOf, or anyOf at the top level" for the whole
// request; the dialect refuses such a tool, and takes them below the top.
func TestTopLevelRefused(t *testing.T) {
	for _, tt := range []struct {
		schema string
		refuse bool
	}{
		{`{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}]}`, true},
		{`{"type":"object","anyOf":[{"required":["a"]}]}`, true},
		{`{"type":"object","allOf":[{"required":["a"]}]}`, true},
		{`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer"}]}},"additionalProperties":false}`, false},
	} {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
			t.Fatal(err)
		}
		_, ps := anthropic.Dialect.ExportTool(wield.Raw("x", "X", &s, nil))
		if got := len(ps) > 0; got != tt.refuse {
			t.Errorf("%s: problems %v, want refused %v", tt.schema, ps, tt.refuse)
		}
		if tt.refuse && (len(ps) != 1 || !strings.Contains(ps[0].Message, "top level")) {
			t.Errorf("%s: problems %v", tt.schema, ps)
		}
	}
}

// TestStrictSchema: strict tool use gets additionalProperties false on
// every object and the bounds it cannot constrain in the descriptions;
// what it cannot express is a problem at its pointer; the tool's schema is
// left alone.
func TestStrictSchema(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":7},"tags":{"type":"array","items":{"type":"string"},"minItems":2},"o":{"oneOf":[{"type":"string","format":"uri"},{"type":"object","properties":{"k":{"type":"string"}}}]}}}`), &s); err != nil {
		t.Fatal(err)
	}
	tool := wield.Raw("x", "X", &s, nil)
	v, ps := anthropic.Strict.ExportTool(tool)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	got, _ := json.Marshal(v)
	want := `{"name":"x","description":"X","input_schema":{"type":"object","properties":{"n":{"type":"integer","description":"minimum: 1;maximum: 7"},"o":{"anyOf":[{"type":"string","format":"uri"},{"type":"object","properties":{"k":{"type":"string"}},"additionalProperties":false}]},"tags":{"type":"array","items":{"type":"string"},"description":"minItems: 2"}},"additionalProperties":false},"strict":true}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s.AdditionalProperties != nil || s.Properties["n"].Minimum == nil {
		t.Error("the tool's schema was modified")
	}
	for schema, path := range map[string]string{
		`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`: "/properties/m/additionalProperties",
		`{"type":"object","properties":{"any":{"type":"object"}}}`:                                        "/properties/any",
		`{"type":"object","properties":{"n":{"$ref":"#"}}}`:                                               "/properties/n",
		`{"type":"object","properties":{"x":{"type":"string","not":{"const":"a"}}}}`:                      "/properties/x",
	} {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(schema), &s); err != nil {
			t.Fatal(err)
		}
		_, ps := anthropic.Strict.ExportTool(wield.Raw("x", "X", &s, nil))
		if len(ps) == 0 || ps[0].Path != path || ps[0].Dialect != "anthropic-strict" {
			t.Errorf("%s: problems %v, want one at %q", schema, ps, path)
		}
	}
}

func ExampleStrictSchema() {
	type weatherIn struct {
		City string `json:"city" description:"City name"`
		Days int    `json:"days,omitempty" minimum:"1" maximum:"7"`
	}
	weather := wield.Func("weather", "Current weather",
		func(context.Context, weatherIn) (string, error) { return "", nil })
	s, problems := anthropic.StrictSchema(weather.InputSchema)
	b, _ := json.Marshal(s)
	fmt.Println(string(b), len(problems))
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"City name"},"days":{"type":"integer","description":"minimum: 1;maximum: 7"}},"required":["city"],"additionalProperties":false} 0
}

// TestStrictExamples: an example the strict schema refuses (a property
// the tool's open object accepts but strict mode closes) keeps the tool
// out of anthropic-strict, since the API would refuse the whole request;
// the plain dialect sends it.
func TestStrictExamples(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"q":{"type":"string"}}}`), &s); err != nil {
		t.Fatal(err)
	}
	tool := wield.Raw("find", "Find", &s, nil)
	tool.Examples = []json.RawMessage{json.RawMessage(`{"q":"a"}`), json.RawMessage(`{"q":"a","extra":1}`)}
	_, ps := anthropic.Strict.ExportTool(tool)
	if len(ps) != 1 || !strings.Contains(ps[0].Message, "input_examples[1] does not match the schema strict tool use is given") {
		t.Errorf("problems %v", ps)
	}
	if _, ps := anthropic.Dialect.ExportTool(tool); len(ps) != 0 {
		t.Errorf("anthropic: %v", ps)
	}
}
