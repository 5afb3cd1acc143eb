// Package schemadec reads a JSON Schema that someone else wrote (an
// imported MCP server's tool schemas, the form an MCP server asks a person
// to fill, a tool file's input_schema, the elicit schema of a configured
// MCP prompt) into a [jsonschema.Schema], as its UnmarshalJSON reads it, in
// time linear in the schema's size, and refuses nesting deeper than
// [MaxDepth].
//
// jsonschema-go's UnmarshalJSON decodes the whole of a schema at each
// schema it holds, three times over (as a boolean, into its struct, and
// into a map for the keywords it does not know): the cost is the size
// times the depth. A 32 KB schema 4,000 levels deep took 11 s; 1 MiB of
// schemas 32 levels deep took 6.5 s, 64 levels 13 s: a server's tools/list
// of 16 MiB held wield's CPU for minutes, at every listing.
//
// Here each schema's own keywords are decoded once, by jsonschema-go (so
// every keyword reads as it reads it: "type" as a string or a list, the
// integer keywords, const null, boolean schemas, the keywords it does not
// know kept in Extra), and the schemas it holds are read first, the same
// way, and put in place: each byte is decoded a bounded number of times.
//
// Two differences. Of duplicate keys the last is the schema, as in the
// map an MCP SDK hands over (and wield pins); jsonschema-go merged two
// "properties" into one. And encoding/json matches keys to fields in any letter case,
// so to jsonschema-go "Properties" is properties (and is kept in Extra as
// well). JSON Schema's keywords are case-sensitive; a key that is a keyword
// holding schemas in another letter case is refused, saying so.
package schemadec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// MaxDepth bounds how many schemas deep a schema may nest (properties of
// properties, items of items, ...): far more than any schema of arguments
// needs (arguments nest at most 100 levels), and few enough that compiling
// and walking it stays cheap.
const MaxDepth = 128

// keyword kinds: how a keyword holds schemas.
const (
	one   = iota // a schema
	list         // an array of schemas
	named        // an object of schemas
	items        // a schema, or an array of schemas (ItemsArray)
	deps         // an object of schemas or arrays of strings
)

var keywords = map[string]int{
	"items": items, "prefixItems": list, "additionalItems": one, "contains": one,
	"unevaluatedItems": one, "properties": named, "patternProperties": named,
	"additionalProperties": one, "propertyNames": one, "unevaluatedProperties": one,
	"allOf": list, "anyOf": list, "oneOf": list, "not": one, "if": one, "then": one,
	"else": one, "dependentSchemas": named, "contentSchema": one, "$defs": named,
	"definitions": named, "dependencies": deps,
}

// Decode reads the JSON Schema data as json.Unmarshal into a
// jsonschema.Schema would, in time linear in its size; a schema nested
// deeper than MaxDepth, a key that is a keyword holding schemas spelled in
// another letter case, and what json.Unmarshal refuses are errors.
func Decode(data []byte) (*jsonschema.Schema, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber() // numbers go back to jsonschema-go as they were written
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return FromValue(v)
}

// FromValue is [Decode] of a value decoded from JSON (maps, slices,
// strings, float64 or json.Number, booleans and nil), as an MCP SDK hands
// a tool's schemas over.
func FromValue(v any) (*jsonschema.Schema, error) {
	var s *jsonschema.Schema
	if err := into(&s, v, 1, nil); err != nil {
		return nil, err
	}
	if s == nil { // null, as json.Unmarshal leaves a *Schema
		return nil, nil
	}
	return s, nil
}

// loc is where a schema is: its parent's loc and its key or index there,
// made into a JSON pointer only for a message (building each schema's
// pointer would cost the size times the depth again).
type loc struct {
	up  *loc
	key string
}

func (l *loc) String() string {
	if l == nil {
		return "#"
	}
	return l.up.String() + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(l.key)
}

// into sets *dst to the schema v, as json.Unmarshal into a *Schema does
// (nil for null); at is where v is, for messages.
func into(dst **jsonschema.Schema, v any, depth int, at *loc) error {
	m, ok := v.(map[string]any)
	if !ok {
		// A boolean, null, or what jsonschema-go refuses: one value, read
		// as it reads it.
		return reread(dst, v)
	}
	if depth > MaxDepth {
		return fmt.Errorf("schema at %q is nested deeper than %d schemas", at, MaxDepth)
	}
	own := make(map[string]any, len(m))
	var held []string
	for k, x := range m {
		kind, isKeyword := keywords[k]
		if !isKeyword {
			for kw := range keywords {
				if strings.EqualFold(k, kw) {
					return fmt.Errorf("schema at %q: key %q is not a keyword (keywords are case-sensitive: did you mean %q?)", at, k, kw)
				}
			}
			own[k] = x
			continue
		}
		if !holdsSchemas(kind, x) {
			own[k] = x // null or the wrong type: jsonschema-go says what it makes of it
			continue
		}
		held = append(held, k)
	}
	s := new(jsonschema.Schema)
	if err := reread(&s, own); err != nil {
		return err
	}
	for _, k := range held {
		where := &loc{at, k}
		x := m[k]
		var err error
		switch keywords[k] {
		case one:
			err = into(field(s, k), x, depth+1, where)
		case list:
			err = intoList(listField(s, k), x.([]any), depth, where)
		case named:
			err = intoNamed(namedField(s, k), x.(map[string]any), depth, where)
		case items:
			if a, ok := x.([]any); ok {
				err = intoList(&s.ItemsArray, a, depth, where)
			} else {
				err = into(&s.Items, x, depth+1, where)
			}
		case deps:
			err = intoDeps(s, x.(map[string]any), depth, where)
		}
		if err != nil {
			return err
		}
	}
	*dst = s
	return nil
}

// holdsSchemas reports whether x has the shape kind reads here; other
// values are left to jsonschema-go.
func holdsSchemas(kind int, x any) bool {
	switch kind {
	case one:
		_, ok := x.(map[string]any)
		return ok
	case list:
		_, ok := x.([]any)
		return ok
	case items:
		switch x.(type) {
		case map[string]any, []any:
			return true
		}
		return false
	}
	_, ok := x.(map[string]any)
	return ok
}

func intoList(dst *[]*jsonschema.Schema, a []any, depth int, at *loc) error {
	out := make([]*jsonschema.Schema, len(a))
	for i, x := range a {
		if err := into(&out[i], x, depth+1, &loc{at, strconv.Itoa(i)}); err != nil {
			return err
		}
	}
	*dst = out
	return nil
}

func intoNamed(dst *map[string]*jsonschema.Schema, m map[string]any, depth int, at *loc) error {
	out := make(map[string]*jsonschema.Schema, len(m))
	for k, x := range m {
		var s *jsonschema.Schema
		if err := into(&s, x, depth+1, &loc{at, k}); err != nil {
			return err
		}
		out[k] = s
	}
	*dst = out
	return nil
}

// intoDeps reads dependencies: an array is a list of property names
// (DependencyStrings), anything else a schema (DependencySchemas), null
// included (it reads as false), as jsonschema-go reads it.
func intoDeps(s *jsonschema.Schema, m map[string]any, depth int, at *loc) error {
	for k, x := range m {
		if a, ok := x.([]any); ok {
			var names []string
			if err := reread(&names, a); err != nil {
				return err
			}
			if s.DependencyStrings == nil {
				s.DependencyStrings = map[string][]string{}
			}
			s.DependencyStrings[k] = names
			continue
		}
		d := new(jsonschema.Schema)
		if x == nil {
			// jsonschema-go reads null here into a Schema value, whose
			// UnmarshalJSON takes null for false.
			if err := d.UnmarshalJSON([]byte("null")); err != nil {
				return err
			}
		} else if err := into(&d, x, depth+1, &loc{at, k}); err != nil {
			return err
		}
		if s.DependencySchemas == nil {
			s.DependencySchemas = map[string]*jsonschema.Schema{}
		}
		s.DependencySchemas[k] = d
	}
	return nil
}

// reread reads v into dst through its JSON, as json.Unmarshal does. v holds
// no schema here but those of values jsonschema-go reads in one pass.
func reread(dst any, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

func field(s *jsonschema.Schema, k string) **jsonschema.Schema {
	switch k {
	case "additionalItems":
		return &s.AdditionalItems
	case "contains":
		return &s.Contains
	case "unevaluatedItems":
		return &s.UnevaluatedItems
	case "additionalProperties":
		return &s.AdditionalProperties
	case "propertyNames":
		return &s.PropertyNames
	case "unevaluatedProperties":
		return &s.UnevaluatedProperties
	case "not":
		return &s.Not
	case "if":
		return &s.If
	case "then":
		return &s.Then
	case "else":
		return &s.Else
	case "contentSchema":
		return &s.ContentSchema
	}
	panic("schemadec: no field for " + k)
}

func listField(s *jsonschema.Schema, k string) *[]*jsonschema.Schema {
	switch k {
	case "prefixItems":
		return &s.PrefixItems
	case "allOf":
		return &s.AllOf
	case "anyOf":
		return &s.AnyOf
	case "oneOf":
		return &s.OneOf
	}
	panic("schemadec: no field for " + k)
}

func namedField(s *jsonschema.Schema, k string) *map[string]*jsonschema.Schema {
	switch k {
	case "properties":
		return &s.Properties
	case "patternProperties":
		return &s.PatternProperties
	case "dependentSchemas":
		return &s.DependentSchemas
	case "$defs":
		return &s.Defs
	case "definitions":
		return &s.Definitions
	}
	panic("schemadec: no field for " + k)
}
