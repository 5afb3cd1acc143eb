package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNestedDefaults: an omitted object whose members have defaults is
// filled as {} with them, at any depth; one with a required member and no
// default, or with no defaulted member, stays omitted; one given keeps what
// it was given; a self-referring schema ends.
func TestNestedDefaults(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{
		"q":{"type":"string"},
		"page":{"type":"object","properties":{
			"limit":{"type":"integer","minimum":1,"default":10},
			"sort":{"type":"object","properties":{"by":{"type":"string","default":"date"},"desc":{"type":"boolean"}}},
			"cursor":{"type":"string"}}},
		"who":{"type":"object","properties":{"id":{"type":"string"},"role":{"type":"string","default":"user"}},"required":["id"]},
		"plain":{"type":"object","properties":{"a":{"type":"string"}}},
		"ref":{"$ref":"#/$defs/opt"},
		"tree":{"$ref":"#/$defs/node"}},
		"required":["q"],
		"$defs":{
			"opt":{"type":"object","properties":{"on":{"type":"boolean","default":true}}},
			"node":{"type":"object","properties":{"depth":{"type":"integer","default":0},"child":{"$ref":"#/$defs/node"}}}}}`)
	tests := []struct{ name, in, want string }{
		{"omitted objects filled", `{"q":"x"}`,
			`{"q":"x","page":{"limit":10,"sort":{"by":"date"}},"ref":{"on":true},"tree":{"depth":0}}`},
		{"given object completed", `{"q":"x","page":{"cursor":"c"}}`,
			`{"q":"x","page":{"cursor":"c","limit":10,"sort":{"by":"date"}},"ref":{"on":true},"tree":{"depth":0}}`},
		{"given values kept", `{"q":"x","page":{"limit":3,"sort":{"by":"name"}},"ref":{"on":false},"tree":{"child":{}}}`,
			`{"q":"x","page":{"limit":3,"sort":{"by":"name"}},"ref":{"on":false},"tree":{"child":{"depth":0},"depth":0}}`},
		{"null means omitted", `{"q":"x","page":null}`,
			`{"q":"x","page":{"limit":10,"sort":{"by":"date"}},"ref":{"on":true},"tree":{"depth":0}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := v.Normalize([]byte(tt.in))
			if errs != nil {
				t.Fatalf("errors: %v", errs)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMessagesSingular: one of a thing is not "1 things", and a null, true
// or false is named once.
func TestMessagesSingular(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{
		"s":{"type":"string","minLength":1,"maxLength":1},
		"a":{"type":"array","minItems":1,"maxItems":1},
		"o":{"type":"object","minProperties":1,"maxProperties":1},
		"n":{"type":"integer"},"b":{"type":"string"}},"required":["n"]}`)
	_, errs := v.Normalize([]byte(`{"s":"","a":[],"o":{},"n":null,"b":true}`))
	want := []FieldError{
		{"s", "must be at least 1 character long, got 0"},
		{"a", "must have at least 1 item, got 0"},
		{"o", "must have at least 1 property, got 0"},
		{"n", "expected integer, got null"},
		{"b", "expected string, got true"},
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	_, errs = v.Normalize([]byte(`{"s":"ab","a":[1,2],"o":{"x":1,"y":2},"n":1}`))
	want = []FieldError{
		{"s", "must be at most 1 character long, got 2"},
		{"a", "must have at most 1 item, got 2"},
		{"o", "must have at most 1 property, got 2"},
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
