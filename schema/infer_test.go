package schema

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// inferCase is one inference and the JSON its schema marshals to.
type inferCase struct {
	name string
	got  func() (*jsonschema.Schema, error)
	want string
}

// runInfer compares schemas as decoded JSON, so that a failure shows the
// differing keywords; TestForPropertyOrder checks the order of properties.
func runInfer(t *testing.T, tests []inferCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decodeJSON(t, tt.want), decodeJSON(t, marshalJSON(t, s))); diff != "" {
				t.Errorf("schema mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func marshalJSON(t *testing.T, s *jsonschema.Schema) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	return v
}

// runErrors checks that each inference fails with exactly the message.
func runErrors(t *testing.T, tests []struct {
	name string
	got  func() (*jsonschema.Schema, error)
	want string
}) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.got()
			if err == nil {
				t.Fatalf("got schema %s, want error %q", marshalJSON(t, s), tt.want)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

type (
	level string                 // provides its own schema with a value receiver
	point struct{ X, Y float64 } // provides its own schema with a pointer receiver
	ip    [4]byte                // encoded as text
	raw   struct{ N int }
	key   struct{ A, B string } // a text map key
)

func (level) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{"low", "high"}}
}
func (*point) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "number"}}
}
func (ip) MarshalText() ([]byte, error)           { return nil, nil }
func (*raw) UnmarshalJSON([]byte) error           { return nil }
func (key) MarshalText() ([]byte, error)          { return nil, nil }
func (*key) UnmarshalText(b []byte) error         { return nil }
func (*nilSchema) JSONSchema() *jsonschema.Schema { return nil }

type nilSchema struct{}

func TestForTypes(t *testing.T) {
	type name string
	type obj struct {
		A int `json:"a"`
	}
	runInfer(t, []inferCase{
		{"bool", For[bool], `{"type":"boolean"}`},
		{"int", For[int], `{"type":"integer"}`},
		{"int8", For[int8], `{"type":"integer","minimum":-128,"maximum":127}`},
		{"int16", For[int16], `{"type":"integer","minimum":-32768,"maximum":32767}`},
		{"int32", For[int32], `{"type":"integer","minimum":-2147483648,"maximum":2147483647}`},
		{"int64", For[int64], `{"type":"integer"}`},
		{"uint", For[uint], `{"type":"integer","minimum":0}`},
		{"uint8", For[uint8], `{"type":"integer","minimum":0,"maximum":255}`},
		{"uint16", For[uint16], `{"type":"integer","minimum":0,"maximum":65535}`},
		{"uint32", For[uint32], `{"type":"integer","minimum":0,"maximum":4294967295}`},
		{"uint64", For[uint64], `{"type":"integer","minimum":0}`},
		{"float32", For[float32], `{"type":"number"}`},
		{"float64", For[float64], `{"type":"number"}`},
		{"string", For[string], `{"type":"string"}`},
		{"named string", For[name], `{"type":"string"}`},
		{"pointer", For[*int], `{"type":"integer"}`},
		{"pointer to pointer", For[**string], `{"type":"string"}`},
		{"bytes", For[[]byte], `{"type":"string","contentEncoding":"base64"}`},
		{"byte array", For[[2]byte], `{"type":"array","items":{"type":"integer","minimum":0,"maximum":255},"minItems":2,"maxItems":2}`},
		{"slice", For[[]string], `{"type":"array","items":{"type":"string"}}`},
		{"slice of pointers", For[[]*bool], `{"type":"array","items":{"type":"boolean"}}`},
		{"nested slice", For[[][]int], `{"type":"array","items":{"type":"array","items":{"type":"integer"}}}`},
		{"array", For[[3]float64], `{"type":"array","items":{"type":"number"},"minItems":3,"maxItems":3}`},
		{"string map", For[map[string]int], `{"type":"object","additionalProperties":{"type":"integer"}}`},
		{"named string key", For[map[name]bool], `{"type":"object","additionalProperties":{"type":"boolean"}}`},
		{"int map", For[map[int]string], `{"type":"object","additionalProperties":{"type":"string"},"propertyNames":{"pattern":"^-?[0-9]+$"}}`},
		{"uint map", For[map[uint16]string], `{"type":"object","additionalProperties":{"type":"string"},"propertyNames":{"pattern":"^[0-9]+$"}}`},
		{"text key map", For[map[key]string], `{"type":"object","additionalProperties":{"type":"string"}}`},
		{"any map", For[map[string]any], `{"type":"object","additionalProperties":true}`},
		{"map of structs", For[map[string]obj], `{"type":"object","additionalProperties":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}}`},
		{"time", For[time.Time], `{"type":"string","format":"date-time"}`},
		{"number", For[json.Number], `{"type":"number"}`},
		{"raw message", For[json.RawMessage], `true`},
		{"any", For[any], `true`},
		{"interface", For[interface{ M() }], `true`},
		{"JSONSchema method", For[level], `{"type":"string","enum":["low","high"]}`},
		{"JSONSchema pointer method", For[point], `{"type":"array","items":{"type":"number"}}`},
		{"JSONSchema of pointer", For[*level], `{"type":"string","enum":["low","high"]}`},
		{"text marshaler", For[ip], `{"type":"string"}`},
		{"json unmarshaler", For[raw], `true`},
		{"duration", For[time.Duration], `{"type":"integer"}`},
	})
}

// TestForProviderCloned checks that changing an inferred schema leaves the
// schema that a JSONSchema method returned untouched.
func TestForProviderCloned(t *testing.T) {
	type in struct {
		L level `description:"how loud"`
	}
	for range 2 {
		s, err := For[in]()
		if err != nil {
			t.Fatal(err)
		}
		got := marshalJSON(t, s.Properties["L"])
		if want := `{"type":"string","description":"how loud","enum":["low","high"]}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	if d := (level("")).JSONSchema().Description; d != "" {
		t.Errorf("provider schema changed: description %q", d)
	}
}

// TestForPropertyOrder checks the marshaled bytes, in which properties
// must follow the field order rather than the order of their names.
func TestForPropertyOrder(t *testing.T) {
	type in struct {
		Zeta  string `json:"zeta"`
		Alpha int    `json:"alpha,omitempty"`
		Mid   bool   `json:"mid"`
	}
	s, err := For[in]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"},"mid":{"type":"boolean"}},"required":["zeta","mid"],"additionalProperties":false}`
	if diff := cmp.Diff(want, marshalJSON(t, s)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"zeta", "alpha", "mid"}, s.PropertyOrder); diff != "" {
		t.Errorf("PropertyOrder (-want +got):\n%s", diff)
	}
}

type Inner struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

type inner struct {
	Hidden string `json:"hidden"`
}

type Tags []string

type Shadow struct {
	ID    int    `json:"id"`    // hidden by the shallower Outer.ID
	Depth string `json:"depth"` // kept: no other field has this name
}

type TaggedA struct {
	Same string `json:"Same"` // hides TaggedB.Same: tagged
}

type TaggedB struct {
	Same string
}

type DupA struct{ Dup int }
type DupB struct{ Dup int }

func TestForStructs(t *testing.T) {
	type empty struct{}
	type visibility struct {
		Plain     string
		Named     string `json:"named"`
		Skipped   string `json:"-"`
		Dash      string `json:"-,"`
		Empty     string `json:",omitempty"`
		Zero      int    `json:"zero,omitzero"`
		Invalid   string `json:"a\"b"`
		unexport  string //lint:ignore U1000 checks that unexported fields are skipped
		Interface any    `json:"iface"`
	}
	type embedded struct {
		Inner
		Own string `json:"own"`
	}
	type embeddedPointer struct {
		*Inner
		Own string `json:"own"`
	}
	type embeddedNamed struct {
		Inner `json:"inner"`
	}
	type embeddedUnexported struct {
		inner
		Tags
	}
	type shadowed struct {
		ID int `json:"id"`
		Shadow
		TaggedA
		TaggedB
		DupA
		DupB
	}
	type twice struct {
		A Inner  `json:"a"`
		B *Inner `json:"b"`
	}
	inner := `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},"required":["id"],"additionalProperties":false}`
	runInfer(t, []inferCase{
		{"empty", For[empty], `{"type":"object","properties":{},"additionalProperties":false}`},
		{"visibility", For[visibility], `{"type":"object","properties":{
			"Plain":{"type":"string"},"named":{"type":"string"},"-":{"type":"string"},
			"Empty":{"type":"string"},"zero":{"type":"integer"},"Invalid":{"type":"string"},"iface":true},
			"required":["Plain","named","-","Invalid","iface"],"additionalProperties":false}`},
		{"embedded", For[embedded], `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"},"own":{"type":"string"}},
			"required":["id","own"],"additionalProperties":false}`},
		{"embedded pointer", For[embeddedPointer], `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"},"own":{"type":"string"}},
			"required":["id","own"],"additionalProperties":false}`},
		{"embedded with a json name", For[embeddedNamed], `{"type":"object","properties":{"inner":` + inner + `},
			"required":["inner"],"additionalProperties":false}`},
		{"embedded unexported struct and slice", For[embeddedUnexported], `{"type":"object","properties":{
			"hidden":{"type":"string"},"Tags":{"type":"array","items":{"type":"string"}}},
			"required":["hidden","Tags"],"additionalProperties":false}`},
		{"shadowed", For[shadowed], `{"type":"object","properties":{"id":{"type":"integer"},"depth":{"type":"string"},"Same":{"type":"string"}},
			"required":["id","depth","Same"],"additionalProperties":false}`},
		{"same struct twice", For[twice], `{"type":"object","properties":{"a":` + inner + `,"b":` + inner + `},
			"required":["a","b"],"additionalProperties":false}`},
		{"pointer to struct", For[*Inner], inner},
		{"slice of structs", For[[]Inner], `{"type":"array","items":` + inner + `}`},
	})
}

type Node struct {
	Value    int     `json:"value"`
	Children []*Node `json:"children,omitempty"`
}

type Even struct {
	Next *Odd `json:"next,omitempty"`
}

type Odd struct {
	Next *Even `json:"next,omitempty"`
}

type Dir map[string]Dir

type List[T any] struct {
	Head T        `json:"head"`
	Tail *List[T] `json:"tail,omitempty"`
}

// nodeType returns a recursive type named Node, as Node but distinct.
func nodeType() reflect.Type {
	type Node struct {
		Next *Node `json:"next,omitempty"`
	}
	return reflect.TypeFor[Node]()
}

func TestForRecursive(t *testing.T) {
	type tree struct {
		Root  Node  `json:"root" description:"the root"`
		Other *Node `json:"other"`
		Nodes []Node
	}
	type chain struct {
		Even Even `json:"even"`
		Odd  Odd  `json:"odd"`
	}
	node := `{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},
		"required":["value"],"additionalProperties":false}`
	runInfer(t, []inferCase{
		{"root", For[Node], `{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},
			"required":["value"],"additionalProperties":false,"$defs":{"Node":` + node + `}}`},
		{"nested", For[tree], `{"type":"object","properties":{
			"root":{"$ref":"#/$defs/Node","description":"the root"},
			"other":{"$ref":"#/$defs/Node"},
			"Nodes":{"type":"array","items":{"$ref":"#/$defs/Node"}}},
			"required":["root","other","Nodes"],"additionalProperties":false,"$defs":{"Node":` + node + `}}`},
		{"mutual", For[chain], `{"type":"object","properties":{
			"even":{"$ref":"#/$defs/Even"},
			"odd":{"type":"object","properties":{"next":{"$ref":"#/$defs/Even"}},"additionalProperties":false}},
			"required":["even","odd"],"additionalProperties":false,"$defs":{
			"Even":{"type":"object","properties":{"next":{"type":"object","properties":{"next":{"$ref":"#/$defs/Even"}},"additionalProperties":false}},"additionalProperties":false}}}`},
		{"map", For[Dir], `{"type":"object","additionalProperties":{"$ref":"#/$defs/Dir"},
			"$defs":{"Dir":{"type":"object","additionalProperties":{"$ref":"#/$defs/Dir"}}}}`},
		{"generic", For[List[int]], `{"type":"object","properties":{"head":{"type":"integer"},"tail":{"$ref":"#/$defs/List_int"}},
			"required":["head"],"additionalProperties":false,"$defs":{"List_int":
			{"type":"object","properties":{"head":{"type":"integer"},"tail":{"$ref":"#/$defs/List_int"}},"required":["head"],"additionalProperties":false}}}`},
		{"same name", func() (*jsonschema.Schema, error) {
			return ForType(reflect.StructOf([]reflect.StructField{
				{Name: "A", Type: reflect.TypeFor[Node]()},
				{Name: "B", Type: nodeType()},
			}))
		}, `{"type":"object","properties":{"A":{"$ref":"#/$defs/Node"},"B":{"$ref":"#/$defs/Node2"}},
			"required":["A","B"],"additionalProperties":false,"$defs":{"Node":` + node + `,
			"Node2":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node2"}},"additionalProperties":false}}}`},
	})
}

// TestForRecursiveResolves checks that jsonschema-go resolves the $defs
// references and validates through them.
func TestForRecursiveResolves(t *testing.T) {
	s, err := For[Node]()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(decodeJSON(t, `{"value":1,"children":[{"value":2,"children":[{"value":3}]}]}`)); err != nil {
		t.Errorf("valid tree: %v", err)
	}
	if err := rs.Validate(decodeJSON(t, `{"value":1,"children":[{"value":2,"children":[{"value":"x"}]}]}`)); err == nil {
		t.Error("invalid tree validated")
	}
}

func TestForTypeErrors(t *testing.T) {
	type withChan struct {
		Events chan int `json:"events"`
	}
	type options struct {
		Callback func() `json:"callback"`
	}
	type nested struct {
		Options options `json:"options"`
	}
	type inSlice struct {
		Items []struct{ C complex64 }
	}
	type badKey struct {
		M map[float64]string `json:"m"`
	}
	type badValue struct {
		M map[string]unsafe.Pointer `json:"m"`
	}
	type quoted struct {
		N int `json:"n,string"`
	}
	type tagOnEmbedded struct {
		Inner `description:"the inner part"`
	}
	type nilProvider struct {
		N nilSchema `json:"n"`
	}
	runErrors(t, []struct {
		name string
		got  func() (*jsonschema.Schema, error)
		want string
	}{
		{"nil type", func() (*jsonschema.Schema, error) { return ForType(nil) }, "schema for <nil>: no type"},
		{"chan root", For[chan int], "schema for chan int: unsupported type chan int"},
		{"func root", For[func()], "schema for func(): unsupported type func()"},
		{"complex root", For[complex128], "schema for complex128: unsupported type complex128"},
		{"unsafe pointer root", For[unsafe.Pointer], "schema for unsafe.Pointer: unsupported type unsafe.Pointer"},
		{"chan field", For[withChan], "schema for schema.withChan: field Events: unsupported type chan int"},
		{"nested func field", For[nested], "schema for schema.nested: field Options.Callback: unsupported type func()"},
		{"complex in slice", For[inSlice], "schema for schema.inSlice: field Items.C: unsupported type complex64"},
		{"map key", For[badKey], "schema for schema.badKey: field M: unsupported map key type float64"},
		{"map value", For[badValue], "schema for schema.badValue: field M: unsupported type unsafe.Pointer"},
		{"string option", For[quoted], `schema for schema.quoted: field N: json tag option "string" is not supported`},
		{"tag on embedded", For[tagOnEmbedded], "schema for schema.tagOnEmbedded: field Inner: description tag has no effect on an embedded struct"},
		{"nil JSONSchema", For[nilProvider], "schema for schema.nilProvider: field N: schema.nilSchema.JSONSchema returned nil"},
	})
}

func BenchmarkFor(b *testing.B) {
	type in struct {
		City  string   `json:"city" description:"City name" default:"Oslo"`
		Units string   `json:"units" enum:"metric,imperial"`
		Days  int      `json:"days,omitempty" minimum:"1" maximum:"7"`
		Tags  []string `json:"tags,omitempty" maxItems:"5"`
		Root  Node     `json:"root"`
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := For[in](); err != nil {
			b.Fatal(err)
		}
	}
}
