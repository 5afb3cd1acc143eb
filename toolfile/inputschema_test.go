package toolfile

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
