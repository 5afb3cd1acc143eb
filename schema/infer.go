package schema

import (
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// For infers the JSON Schema of T, so that a tool's input and output are
// described by their Go declarations instead of hand-written schemas.
//
// Go types map to JSON Schema as encoding/json encodes them:
//
//   - bool is "boolean"; integer types are "integer" (unsigned ones with
//     minimum 0, the 8-, 16- and 32-bit ones with their full range);
//     float32 and float64 are "number"; string is "string".
//   - []byte is a base64 "string"; other slices are "array" with "items";
//     arrays also fix "minItems" and "maxItems" to their length.
//   - Maps whose keys are strings, integers or encoding.TextMarshaler are
//     "object" with "additionalProperties" describing the values.
//   - Structs are "object" with their properties in field order, no
//     additional properties, and every field required unless its json tag
//     says omitempty or omitzero or it has a default. Field names, "-",
//     unexported fields and embedded structs follow encoding/json.
//   - Pointers are described by their element; they are not nullable.
//   - time.Time is a "date-time" string and json.Number a "number".
//     Interfaces, json.RawMessage and other types with their own
//     MarshalJSON or UnmarshalJSON accept any value; types with their own
//     MarshalText or UnmarshalText are strings.
//   - A type with a method JSONSchema() *jsonschema.Schema describes itself.
//   - A recursive type is described once under "$defs" at the root and
//     referred to as "#/$defs/Name"; a recursive root stays inline too.
//
// Struct field tags, each under its own key, refine a property:
//
//	description:"City name"   also jsonschema:"City name", as in the MCP Go SDK
//	title:"City"
//	enum:"metric,imperial"    or a JSON array: enum:"[\"a,b\",\"c\"]"
//	examples:"Paris,Oslo"     or a JSON array, of whole values for a list
//	default:"metric"          text for a string, JSON otherwise: default:"[1,2]"
//	required:"true"           or "false", overriding omitempty; not with a default
//	minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf
//	minLength, maxLength, pattern (a Go regexp), format
//	minItems, maxItems, uniqueItems:"true"
//
// Values are converted to the field's type, and defaults and examples must
// satisfy the field's other keywords. On a slice or array, enum and the
// number, string and format keywords constrain the items. A default is
// also appended to the description after a ";", for models that read only
// descriptions: "City name;Default: metric".
//
// As with MarshalJSON, a struct that embeds a type with a JSONSchema method
// inherits the method, and so that type's schema.
//
// For returns a plain error, naming the Go field, when a type cannot be
// described (channels, functions, complex numbers, unsafe pointers, maps
// with other keys, the json ",string" option) or a tag is malformed, does
// not apply to the field's type, or contradicts another tag.
func For[T any]() (*jsonschema.Schema, error) {
	return ForType(reflect.TypeFor[T]())
}

// ForType is [For] for a type known only at run time, such as the argument
// type of a handler found by reflection.
func ForType(t reflect.Type) (*jsonschema.Schema, error) {
	if t == nil {
		return nil, errors.New("schema for <nil>: no type")
	}
	b := &builder{
		root:     indirect(t),
		building: map[reflect.Type]bool{},
		refs:     map[reflect.Type]string{},
		taken:    map[string]bool{},
		defs:     map[string]*jsonschema.Schema{},
	}
	s, err := b.typeSchema(b.root)
	if err != nil {
		return nil, fmt.Errorf("schema for %s: %w", t, err)
	}
	if name, ok := b.refs[b.root]; ok {
		b.defs[name] = s.CloneSchemas()
	}
	if len(b.defs) > 0 {
		s.Defs = b.defs
	}
	return s, nil
}

// provider is implemented by types that describe themselves.
type provider interface {
	JSONSchema() *jsonschema.Schema
}

var (
	providerType        = reflect.TypeFor[provider]()
	timeType            = reflect.TypeFor[time.Time]()
	numberType          = reflect.TypeFor[json.Number]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// builder holds the state of one inference: the Go field path for errors
// and the recursive types found so far.
type builder struct {
	root     reflect.Type
	path     []string
	building map[reflect.Type]bool   // named types on the current path
	refs     map[reflect.Type]string // recursive types and their $defs names
	taken    map[string]bool         // $defs names in use
	defs     map[string]*jsonschema.Schema
}

// errorf returns an error that names the current Go field.
func (b *builder) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if len(b.path) == 0 {
		return err
	}
	return fmt.Errorf("field %s: %w", strings.Join(b.path, "."), err)
}

// typeSchema returns the schema of t without any field tags applied. It
// returns a fresh schema each time, so callers may modify it.
func (b *builder) typeSchema(t reflect.Type) (*jsonschema.Schema, error) {
	t = indirect(t)
	if name, ok := b.refs[t]; ok {
		return ref(name), nil
	}
	if b.building[t] {
		return ref(b.defName(t)), nil
	}
	if s, ok, err := b.knownSchema(t); ok || err != nil {
		return s, err
	}
	if t.Name() != "" {
		b.building[t] = true
		defer delete(b.building, t)
	}
	s, err := b.kindSchema(t)
	if err != nil {
		return nil, err
	}
	if name, ok := b.refs[t]; ok && t != b.root {
		b.defs[name] = s
		return ref(name), nil
	}
	return s, nil
}

// defName returns the $defs name of the recursive type t, choosing one
// that no other type uses.
func (b *builder) defName(t reflect.Type) string {
	base := strings.Trim(defNameRe.ReplaceAllString(t.Name(), "_"), "_")
	name := base
	for i := 2; b.taken[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	b.taken[name] = true
	b.refs[t] = name
	return name
}

// defNameRe matches what a $defs name avoids, so that a generic type's name
// needs no escaping in a JSON pointer or a URI fragment.
var defNameRe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func ref(name string) *jsonschema.Schema {
	return &jsonschema.Schema{Ref: "#/$defs/" + name}
}

// knownSchema describes the types that encoding/json does not encode by
// their kind.
func (b *builder) knownSchema(t reflect.Type) (*jsonschema.Schema, bool, error) {
	switch {
	case t.Kind() == reflect.Interface:
		return &jsonschema.Schema{}, true, nil
	case implements(t, providerType):
		s := reflect.New(t).Interface().(provider).JSONSchema()
		if s == nil {
			return nil, true, b.errorf("%s.JSONSchema returned nil", t)
		}
		return s.CloneSchemas(), true, nil
	case t == timeType:
		return &jsonschema.Schema{Type: "string", Format: "date-time"}, true, nil
	case t == numberType:
		return &jsonschema.Schema{Type: "number"}, true, nil
	case implements(t, jsonMarshalerType), implements(t, jsonUnmarshalerType):
		return &jsonschema.Schema{}, true, nil
	case implements(t, textMarshalerType), implements(t, textUnmarshalerType):
		return &jsonschema.Schema{Type: "string"}, true, nil
	}
	return nil, false, nil
}

// kindSchema describes t by its kind.
func (b *builder) kindSchema(t reflect.Type) (*jsonschema.Schema, error) {
	switch t.Kind() {
	case reflect.Bool:
		return &jsonschema.Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		lo, hi := intRange(t)
		return &jsonschema.Schema{Type: "integer", Minimum: lo, Maximum: hi}, nil
	case reflect.Float32, reflect.Float64:
		return &jsonschema.Schema{Type: "number"}, nil
	case reflect.String:
		return &jsonschema.Schema{Type: "string"}, nil
	case reflect.Slice:
		if isBytes(t) {
			return &jsonschema.Schema{Type: "string", ContentEncoding: "base64"}, nil
		}
		items, err := b.typeSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &jsonschema.Schema{Type: "array", Items: items}, nil
	case reflect.Array:
		items, err := b.typeSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &jsonschema.Schema{Type: "array", Items: items, MinItems: ptr(t.Len()), MaxItems: ptr(t.Len())}, nil
	case reflect.Map:
		return b.mapSchema(t)
	case reflect.Struct:
		return b.structSchema(t)
	}
	return nil, b.errorf("unsupported type %s", t)
}

// intRange returns the bounds of an integer type that a JSON number can
// exceed without losing precision first.
func intRange(t reflect.Type) (lo, hi *float64) {
	switch t.Kind() {
	case reflect.Int8:
		return ptr[float64](math.MinInt8), ptr[float64](math.MaxInt8)
	case reflect.Int16:
		return ptr[float64](math.MinInt16), ptr[float64](math.MaxInt16)
	case reflect.Int32:
		return ptr[float64](math.MinInt32), ptr[float64](math.MaxInt32)
	case reflect.Uint8:
		return ptr[float64](0), ptr[float64](math.MaxUint8)
	case reflect.Uint16:
		return ptr[float64](0), ptr[float64](math.MaxUint16)
	case reflect.Uint32:
		return ptr[float64](0), ptr[float64](math.MaxUint32)
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return ptr[float64](0), nil
	}
	return nil, nil
}

// mapSchema accepts the key types that encoding/json can write as object
// names; integer keys are constrained to look like integers.
func (b *builder) mapSchema(t reflect.Type) (*jsonschema.Schema, error) {
	s := &jsonschema.Schema{Type: "object"}
	switch k := t.Key(); {
	case k.Kind() == reflect.String, implements(k, textMarshalerType), implements(k, textUnmarshalerType):
	case k.Kind() >= reflect.Int && k.Kind() <= reflect.Int64:
		s.PropertyNames = &jsonschema.Schema{Pattern: `^-?[0-9]+$`}
	case k.Kind() >= reflect.Uint && k.Kind() <= reflect.Uintptr:
		s.PropertyNames = &jsonschema.Schema{Pattern: `^[0-9]+$`}
	default:
		return nil, b.errorf("unsupported map key type %s", k)
	}
	values, err := b.typeSchema(t.Elem())
	if err != nil {
		return nil, err
	}
	s.AdditionalProperties = values
	return s, nil
}

func (b *builder) structSchema(t reflect.Type) (*jsonschema.Schema, error) {
	fields, err := b.jsonFields(t)
	if err != nil {
		return nil, err
	}
	s := &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	for _, f := range fields {
		b.path = append(b.path, f.path)
		fs, required, err := b.fieldSchema(f)
		b.path = b.path[:len(b.path)-1]
		if err != nil {
			return nil, err
		}
		s.Properties[f.name] = fs
		s.PropertyOrder = append(s.PropertyOrder, f.name)
		if required {
			s.Required = append(s.Required, f.name)
		}
	}
	return s, nil
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name   string   // JSON name
	tagged bool     // whether the name came from the json tag
	index  []int    // for reflect.Value.FieldByIndex
	path   string   // Go path, through embedded structs, for errors
	opts   []string // json tag options, such as omitempty
	sf     reflect.StructField
}

// jsonFields lists the fields of struct t that encoding/json encodes, in
// its order, flattening embedded structs and dropping the fields that a
// shallower or tagged field of the same name hides.
func (b *builder) jsonFields(t reflect.Type) ([]jsonField, error) {
	type embedded struct {
		t     reflect.Type
		index []int
		path  string
	}
	var fields []jsonField
	next := []embedded{{t: t}}
	count, nextCount := map[reflect.Type]int{}, map[reflect.Type]int{}
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.t] {
				continue
			}
			visited[e.t] = true
			for i := range e.t.NumField() {
				sf := e.t.Field(i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && !(sf.Anonymous && ft.Kind() == reflect.Struct) {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validName(name) {
					name = ""
				}
				index := append(slices.Clone(e.index), i)
				path := sf.Name
				if e.path != "" {
					path = e.path + "." + sf.Name
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					if key := schemaTag(sf.Tag); key != "" {
						b.path = append(b.path, path)
						err := b.errorf("%s tag has no effect on an embedded struct", key)
						b.path = b.path[:len(b.path)-1]
						return nil, err
					}
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, embedded{t: ft, index: index, path: path})
					}
					continue
				}
				f := jsonField{
					name:   cmp.Or(name, sf.Name),
					tagged: name != "",
					index:  index,
					path:   path,
					opts:   strings.Split(opts, ","),
					sf:     sf,
				}
				fields = append(fields, f)
				if count[e.t] > 1 {
					// The same struct embedded twice at one depth:
					// the duplicate hides both, as in encoding/json.
					fields = append(fields, f)
				}
			}
		}
	}

	slices.SortFunc(fields, func(a, b jsonField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	var dominant []jsonField
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if j-i == 1 || len(fields[i].index) < len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			dominant = append(dominant, fields[i])
		}
		i = j
	}
	slices.SortFunc(dominant, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return dominant, nil
}

// validName reports whether encoding/json accepts name from a json tag.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}

// fieldSchema returns the schema of one struct field with its tags applied
// and whether the field is required.
func (b *builder) fieldSchema(f jsonField) (*jsonschema.Schema, bool, error) {
	t := indirect(f.sf.Type)
	if k := t.Kind(); slices.Contains(f.opts, "string") && (k >= reflect.Bool && k <= reflect.Float64 || k == reflect.String) {
		// The value would be quoted inside a JSON string.
		return nil, false, b.errorf(`json tag option "string" is not supported`)
	}
	s, err := b.typeSchema(t)
	if err != nil {
		return nil, false, err
	}
	_, hasDefault := f.sf.Tag.Lookup("default")
	required := !hasDefault && !slices.Contains(f.opts, "omitempty") && !slices.Contains(f.opts, "omitzero")
	if v, ok := f.sf.Tag.Lookup("required"); ok {
		r, err := strconv.ParseBool(v)
		if err != nil {
			return nil, false, b.errorf("required %q is not true or false", v)
		}
		if r && hasDefault {
			return nil, false, b.errorf("a required field cannot have a default")
		}
		required = r
	}
	if err := b.applyTags(s, t, f.sf.Tag); err != nil {
		return nil, false, err
	}
	return s, required, nil
}

// implements reports whether t or *t implements the interface it, as
// encoding/json finds methods on addressable values.
func implements(t, it reflect.Type) bool {
	return t.Implements(it) || reflect.PointerTo(t).Implements(it)
}

// isBytes reports whether encoding/json encodes slice type t as base64.
func isBytes(t reflect.Type) bool {
	e := t.Elem()
	return e.Kind() == reflect.Uint8 && !implements(e, jsonMarshalerType) && !implements(e, textMarshalerType)
}

// indirect returns the type that pointer type t eventually points to.
func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func ptr[T any](v T) *T { return &v }
