package toolfile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

func TestInputSchema(t *testing.T) {
	src := `name: geo
description: A tool with a hand-written JSON Schema
input_schema:
  $schema: https://json-schema.org/draft/2020-12/schema
  type: object
  $defs:
    point:
      type: object
      properties: {lat: {type: number, minimum: -90, maximum: 90}, lon: {type: number}}
      required: [lat, lon]
  properties:
    from: {$ref: "#/$defs/point"}
    to: {$ref: "#/$defs/point"}
  required: [from]
  additionalProperties: false
entry: {type: builtin, handler: echo}
`
	l := Loader{Builtins: map[string]wield.Handler{"echo": wield.HandlerFunc(func(_ context.Context, a json.RawMessage) (json.RawMessage, error) { return a, nil })}}
	set, err := l.Load(context.Background(), "geo.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s := set.Tools[0].InputSchema
	if s.Defs["point"] == nil || s.Properties["from"].Ref != "#/$defs/point" || s.Schema == "" {
		t.Fatalf("schema not kept as written: %+v", s)
	}
	reg := wield.NewRegistry(nil)
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	e := reg.Entry("geo")
	if _, errs := e.Input.Normalize([]byte(`{"from":{"lat":1,"lon":2}}`)); len(errs) > 0 {
		t.Errorf("valid input refused: %v", errs)
	}
	if _, errs := e.Input.Normalize([]byte(`{"from":{"lat":100,"lon":2}}`)); len(errs) == 0 {
		t.Error("lat 100 accepted")
	}
	for bad, want := range map[string]string{
		"name: a\ndescription: d\ninput_schema: {type: string}\nentry: {type: builtin, handler: echo}\n":                                            "is an object, not string",
		"name: a\ndescription: d\ninput_schema: {type: object}\nparameters: [{name: x, type: string}]\nentry: {type: builtin, handler: echo}\n":     "both describe the input",
		"name: a\ndescription: d\ninput_schema: {type: object, properties: {x: {$ref: \"#/$defs/nope\"}}}\nentry: {type: builtin, handler: echo}\n": "input_schema",
	} {
		if _, err := l.Load(context.Background(), "bad.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", bad, err, want)
		}
	}
}

// TestInputSchemaDeep: an input_schema is read in time linear in its size,
// as imported MCP servers' schemas are (see internal/schemadec), not in its
// size times its depth as jsonschema-go's own decoding reads it: 512 KB of
// properties 30 schemas deep (as deep as a tool file's 64 levels of YAML
// allow) load in 1.7 times the time of 512 KB 1 deep (interleaved,
// medians; 2.5 times passes), where jsonschema-go's decoding took 4.3
// times as long (2026-11-28). A null input_schema is an empty one, as
// before.
func TestInputSchemaDeep(t *testing.T) {
	nested := func(depth, wide int) []byte {
		var b strings.Builder
		b.WriteString("name: a\ndescription: d\nentry: {type: builtin, handler: echo}\ninput_schema: ")
		for range depth {
			b.WriteString(`{"type":"object","properties":{"x":`)
		}
		b.WriteString(`{"type":"object","properties":{`)
		for i := range wide {
			fmt.Fprintf(&b, `"p%d":{"type":"string","description":"a property at the deepest level"},`, i)
		}
		b.WriteString(`"x":{"type":"string"}}}`)
		b.WriteString(strings.Repeat("}}", depth))
		b.WriteString("\n")
		return []byte(b.String())
	}
	l := Loader{Builtins: map[string]wield.Handler{"echo": wield.HandlerFunc(func(_ context.Context, a json.RawMessage) (json.RawMessage, error) { return a, nil })}}
	shallow, deep := nested(0, 7000), nested(30, 7000)
	var s, d []time.Duration
	for range 3 {
		for _, c := range []struct {
			src []byte
			out *[]time.Duration
		}{{shallow, &s}, {deep, &d}} {
			start := time.Now()
			if _, err := l.Load(context.Background(), "wide.yaml", c.src); err != nil {
				t.Fatal(err)
			}
			*c.out = append(*c.out, time.Since(start))
		}
	}
	slices.Sort(s)
	slices.Sort(d)
	ms, md := s[1], d[1]
	t.Logf("%d KB of input_schema: %v at 1 deep, %v at 31 deep (%.1f×)", len(deep)>>10, ms, md, float64(md)/float64(ms))
	if md > 5*ms/2 {
		t.Errorf("31 deep took %v, 1 deep %v: the cost grows with the depth", md, ms)
	}

	set, err := l.Load(context.Background(), "null.yaml", []byte("name: a\ndescription: d\nentry: {type: builtin, handler: echo}\ninput_schema: null\n"))
	if err != nil || set.Tools[0].InputSchema == nil {
		t.Errorf("input_schema: null: %v, want an empty schema", err)
	}
}
