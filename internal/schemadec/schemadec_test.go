package schemadec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// library reads data as jsonschema-go does.
func library(data []byte) (*jsonschema.Schema, error) {
	var s *jsonschema.Schema
	err := json.Unmarshal(data, &s)
	return s, err
}

var corpus = []string{
	`{}`, `true`, `false`, `null`,
	`{"type":"object","properties":{"a":{"type":"string","minLength":1,"pattern":"^x"},"b":{"type":["integer","null"],"minimum":1e3,"maximum":12345678901234567890}},"required":["a"],"additionalProperties":false}`,
	`{"items":{"type":"number"},"minItems":2.0,"maxItems":5}`,
	`{"items":[{"type":"string"},true,false,null],"additionalItems":{"const":null}}`,
	`{"items":null,"not":null,"allOf":null,"properties":null}`,
	`{"prefixItems":[{"enum":[1,"a",null,{"x":[1]}]}],"contains":{"const":{"k":1.50}},"minContains":1,"unevaluatedItems":false}`,
	`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n","definitions":{"d":true}}`,
	`{"allOf":[{"type":"object"},{"required":["x"]}],"anyOf":[true,{"minProperties":1}],"oneOf":[{"maxProperties":3},null]}`,
	`{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":["b"]}}`,
	`{"dependencies":{"a":["b","c"],"d":{"required":["e"]},"f":null,"g":true},"dependentSchemas":{"x":{"type":"string"}},"dependentRequired":{"y":["z"]}}`,
	`{"patternProperties":{"^a/b~c":{"type":"integer"}},"propertyNames":{"maxLength":3},"unevaluatedProperties":{"type":"boolean"}}`,
	`{"contentSchema":{"type":"object"},"contentMediaType":"application/json","x-custom":{"properties":{"deep":{"type":"string"}}},"title":"T","description":"d","default":{"a":[1,2]},"examples":[1,"a"],"deprecated":true,"readOnly":true}`,
	`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"items":{"anyOf":[{"not":{"type":"null"}}]}}}}}}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://x/y","$anchor":"a","$comment":"c","format":"date-time"}`,
}

// TestSameAsLibrary: every schema reads as jsonschema-go reads it, and what
// it refuses is refused.
func TestSameAsLibrary(t *testing.T) {
	bad := []string{`{"properties":[1]}`, `{"items":3}`, `{"not":"x"}`, `{"allOf":{"a":1}}`, `{"type":3}`, `{"minLength":"a"}`,
		`{"dependencies":{"a":[1]}}`, `{"dependencies":{"a":"x"}}`, `{"properties":{"a":3}}`, `[]`, `3`, `"s"`, `{} x`, `{`}
	for _, src := range append(append([]string{}, corpus...), bad...) {
		want, werr := library([]byte(src))
		got, gerr := Decode([]byte(src))
		if (werr != nil) != (gerr != nil) {
			t.Errorf("%s: error %v, jsonschema-go's %v", src, gerr, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s:\n got %s\nwant %s", src, g, w)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range corpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		got, gerr := Decode([]byte(src))
		if gerr != nil && strings.Contains(gerr.Error(), "case-sensitive") {
			return // the one difference, on purpose
		}
		if gerr != nil && strings.Contains(gerr.Error(), "nested deeper") {
			return
		}
		want, werr := library([]byte(src))
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%q: error %v, jsonschema-go's %v", src, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("%q:\n got %s\nwant %s", src, g, w)
		}
	})
}

// TestKeywordCase: a keyword that holds schemas, in another letter case,
// is refused, naming it and where it is: to jsonschema-go (encoding/json)
// it was the keyword, read at the cost of the whole schema below it.
func TestKeywordCase(t *testing.T) {
	for src, want := range map[string]string{
		`{"Properties":{"a":{}}}`:             `schema at "#": key "Properties" is not a keyword (keywords are case-sensitive: did you mean "properties"?)`,
		`{"properties":{"a":{"NOT":{}}}}`:     `schema at "#/properties/a": key "NOT" is not a keyword (keywords are case-sensitive: did you mean "not"?)`,
		`{"$defs":{"a/b":{"propertieſ":{}}}}`: `schema at "#/$defs/a~1b": key "propertieſ" is not a keyword (keywords are case-sensitive: did you mean "properties"?)`,
	} {
		_, err := Decode([]byte(src))
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", src, err, want)
		}
	}
	if _, err := Decode([]byte(`{"Type":"string","TITLE":"t"}`)); err != nil {
		t.Errorf("keys that hold no schema are jsonschema-go's to read: %v", err)
	}
}

// nest is a schema n schemas deep through keyword, with a sibling of the
// same kind at each level when wide is set.
func nest(n int, keyword string) string {
	s := `{"type":"string"}`
	for range n - 1 {
		switch keyword {
		case "properties":
			s = `{"type":"object","properties":{"a":` + s + `}}`
		case "anyOf":
			s = `{"anyOf":[` + s + `]}`
		default:
			s = `{"` + keyword + `":` + s + `}`
		}
	}
	return s
}

// TestDepth: MaxDepth schemas deep read; one more is refused, saying
// where, whatever keyword nests them.
func TestDepth(t *testing.T) {
	for _, kw := range []string{"properties", "items", "not", "anyOf", "additionalProperties"} {
		if _, err := Decode([]byte(nest(MaxDepth, kw))); err != nil {
			t.Errorf("%s, %d deep: %v", kw, MaxDepth, err)
		}
		_, err := Decode([]byte(nest(MaxDepth+1, kw)))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("nested deeper than %d schemas", MaxDepth)) {
			t.Errorf("%s, %d deep: error %v, want one saying it is too deep", kw, MaxDepth+1, err)
		}
	}
}

// wide is about size bytes of schemas, each depth schemas deep.
func wide(size, depth int) []byte {
	one := nest(depth, "not")
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":%s`, i, one)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// TestLinear: the cost of reading a schema grows with its size, not with
// its size times its depth. 128 KiB of schemas 120 deep cost about what
// 128 KiB of schemas 2 deep cost (measured interleaved, medians); to
// jsonschema-go they cost 13 times more (1 MiB: 1.4 s and 19 s).
func TestLinear(t *testing.T) {
	shallow, deep := wide(128<<10, 2), wide(128<<10, 120)
	var s, d []time.Duration
	for range 3 {
		for _, c := range []struct {
			src []byte
			out *[]time.Duration
		}{{shallow, &s}, {deep, &d}} {
			start := time.Now()
			if _, err := Decode(c.src); err != nil {
				t.Fatal(err)
			}
			*c.out = append(*c.out, time.Since(start))
		}
	}
	ms, md := median(s), median(d)
	t.Logf("128 KiB of schemas: %v at 2 deep, %v at 120 deep (%.1f×)", ms, md, float64(md)/float64(ms))
	if md > 3*ms {
		t.Errorf("120 deep took %v, 2 deep %v: the cost grows with the depth", md, ms)
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// TestDuplicateKeysLastWins: of two keys alike, the last is the schema, as
// in the map an MCP SDK decodes (and wield pins); jsonschema-go merged two
// "properties" (or two "not") into one.
func TestDuplicateKeysLastWins(t *testing.T) {
	got, err := Decode([]byte(`{"properties":{"a":{}},"properties":{"b":{}},"not":{"type":"string"},"not":{"minLength":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if want := `{"properties":{"b":true},"not":{"minLength":1}}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
