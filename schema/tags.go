package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// tagKeys are the struct tag keys that refine a property.
var tagKeys = []string{
	"description", "jsonschema", "title", "enum", "default", "examples", "required",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems",
}

// schemaTag returns the first schema tag key present in tag, or "".
func schemaTag(tag reflect.StructTag) string {
	for _, key := range tagKeys {
		if _, ok := tag.Lookup(key); ok {
			return key
		}
	}
	return ""
}

// applyTags refines s, the schema of a field of type t, with the field's
// tags, and checks that they fit its type and one another.
func (b *builder) applyTags(s *jsonschema.Schema, t reflect.Type, tag reflect.StructTag) error {
	desc, err := b.description(tag)
	if err != nil {
		return err
	}
	if desc != "" {
		s.Description = desc
	}
	if v, ok := tag.Lookup("title"); ok {
		s.Title = v
	}

	// The keywords about single values constrain the items of a list.
	item, itemType, where := s, t, "type "+typeName(s)
	if (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && s.Type == "array" && s.Items != nil {
		item, itemType, where = s.Items, indirect(t.Elem()), "items of type "+typeName(s.Items)
	}
	if err := b.numberTags(item, where, tag); err != nil {
		return err
	}
	if err := b.stringTags(item, where, tag); err != nil {
		return err
	}
	if err := b.arrayTags(s, t, tag); err != nil {
		return err
	}
	if v, ok := tag.Lookup("enum"); ok {
		if !slices.Contains([]string{"string", "integer", "number", "boolean"}, item.Type) {
			return b.errorf("enum does not apply to %s", where)
		}
		raws, err := b.values("enum", v, item, itemType)
		if err != nil {
			return err
		}
		for _, raw := range raws {
			item.Enum = append(item.Enum, plain(raw))
		}
		if err := b.check("enum value", raws, item); err != nil {
			return err
		}
	}
	if v, ok := tag.Lookup("default"); ok {
		raw, err := b.convert("default", v, false, s, t)
		if err != nil {
			return err
		}
		if err := b.check("default", []json.RawMessage{raw}, s); err != nil {
			return err
		}
		s.Default = raw
		shown := string(raw)
		if s.Type == "string" {
			shown = v
		}
		s.Description = annotate(s.Description, "Default: "+shown)
	}
	if v, ok := tag.Lookup("examples"); ok {
		raws, err := b.values("examples", v, s, t)
		if err != nil {
			return err
		}
		if err := b.check("example", raws, s); err != nil {
			return err
		}
		for _, raw := range raws {
			s.Examples = append(s.Examples, plain(raw))
		}
	}
	return nil
}

// annotate appends note to desc, joining annotations with ";" as the
// tool manager of seed 001 (§3) does.
func annotate(desc, note string) string {
	if desc == "" {
		return note
	}
	return desc + ";" + note
}

// jsonschemaOptionRe matches the "key=value" tags of other schema
// libraries, which the MCP Go SDK also rejects as descriptions.
var jsonschemaOptionRe = regexp.MustCompile(`^[^ \t\n]*=`)

// description returns the description from the description tag or, as in
// the MCP Go SDK, the jsonschema tag.
func (b *builder) description(tag reflect.StructTag) (string, error) {
	desc, hasDesc := tag.Lookup("description")
	js, ok := tag.Lookup("jsonschema")
	if !ok {
		return desc, nil
	}
	if jsonschemaOptionRe.MatchString(js) {
		return "", b.errorf("jsonschema tag %q is a description, not key=value options: use separate tags such as minimum:\"1\"", js)
	}
	if hasDesc && desc != js {
		return "", b.errorf("description and jsonschema tags differ")
	}
	return js, nil
}

func typeName(s *jsonschema.Schema) string {
	switch {
	case s.Ref != "":
		return s.Ref
	case s.Type == "":
		return "any"
	}
	return s.Type
}

// numberTags applies the number keywords. A bound may narrow the range of
// a sized integer type but not widen it.
func (b *builder) numberTags(s *jsonschema.Schema, where string, tag reflect.StructTag) error {
	var n [5]*float64
	for i, key := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		v, ok := tag.Lookup(key)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return b.errorf("%s %q is not a number", key, v)
		}
		if s.Type != "integer" && s.Type != "number" {
			return b.errorf("%s does not apply to %s", key, where)
		}
		n[i] = &f
	}
	minimum, maximum, exclMin, exclMax, multipleOf := n[0], n[1], n[2], n[3], n[4]
	typeMin, typeMax := s.Minimum, s.Maximum
	for _, lo := range []struct {
		key string
		v   *float64
	}{{"minimum", minimum}, {"exclusiveMinimum", exclMin}} {
		if lo.v != nil && typeMin != nil && *lo.v < *typeMin {
			return b.errorf("%s %v is below the type's minimum %v", lo.key, *lo.v, *typeMin)
		}
	}
	for _, hi := range []struct {
		key string
		v   *float64
	}{{"maximum", maximum}, {"exclusiveMaximum", exclMax}} {
		if hi.v != nil && typeMax != nil && *hi.v > *typeMax {
			return b.errorf("%s %v is above the type's maximum %v", hi.key, *hi.v, *typeMax)
		}
	}
	if minimum != nil || exclMin != nil {
		s.Minimum, s.ExclusiveMinimum = minimum, exclMin
	}
	if maximum != nil || exclMax != nil {
		s.Maximum, s.ExclusiveMaximum = maximum, exclMax
	}
	if multipleOf != nil {
		if *multipleOf <= 0 {
			return b.errorf("multipleOf %v is not greater than 0", *multipleOf)
		}
		s.MultipleOf = multipleOf
	}
	switch {
	case s.Minimum != nil && s.Maximum != nil && *s.Minimum > *s.Maximum:
		return b.errorf("minimum %v is greater than maximum %v", *s.Minimum, *s.Maximum)
	case s.ExclusiveMinimum != nil && s.Maximum != nil && *s.ExclusiveMinimum >= *s.Maximum:
		return b.errorf("exclusiveMinimum %v is not less than maximum %v", *s.ExclusiveMinimum, *s.Maximum)
	case s.Minimum != nil && s.ExclusiveMaximum != nil && *s.Minimum >= *s.ExclusiveMaximum:
		return b.errorf("minimum %v is not less than exclusiveMaximum %v", *s.Minimum, *s.ExclusiveMaximum)
	case s.ExclusiveMinimum != nil && s.ExclusiveMaximum != nil && *s.ExclusiveMinimum >= *s.ExclusiveMaximum:
		return b.errorf("exclusiveMinimum %v is not less than exclusiveMaximum %v", *s.ExclusiveMinimum, *s.ExclusiveMaximum)
	}
	return nil
}

// stringTags applies the string keywords and format.
func (b *builder) stringTags(s *jsonschema.Schema, where string, tag reflect.StructTag) error {
	isString := s.Type == "string"
	for _, kw := range []struct {
		key string
		dst **int
	}{{"minLength", &s.MinLength}, {"maxLength", &s.MaxLength}} {
		v, ok := tag.Lookup(kw.key)
		if !ok {
			continue
		}
		n, err := count(kw.key, v)
		if err != nil {
			return b.errorf("%w", err)
		}
		if !isString {
			return b.errorf("%s does not apply to %s", kw.key, where)
		}
		*kw.dst = &n
	}
	if s.MinLength != nil && s.MaxLength != nil && *s.MinLength > *s.MaxLength {
		return b.errorf("minLength %d is greater than maxLength %d", *s.MinLength, *s.MaxLength)
	}
	if v, ok := tag.Lookup("pattern"); ok {
		if _, err := regexp.Compile(v); err != nil {
			return b.errorf("pattern %q does not compile: %w", v, err)
		}
		if !isString {
			return b.errorf("pattern does not apply to %s", where)
		}
		s.Pattern = v
	}
	if v, ok := tag.Lookup("format"); ok {
		if !isString && s.Type != "integer" && s.Type != "number" {
			return b.errorf("format does not apply to %s", where)
		}
		s.Format = v
	}
	return nil
}

// arrayTags applies the array keywords to s, the schema of a field of type t.
func (b *builder) arrayTags(s *jsonschema.Schema, t reflect.Type, tag reflect.StructTag) error {
	for _, kw := range []struct {
		key string
		dst **int
	}{{"minItems", &s.MinItems}, {"maxItems", &s.MaxItems}} {
		v, ok := tag.Lookup(kw.key)
		if !ok {
			continue
		}
		n, err := count(kw.key, v)
		if err != nil {
			return b.errorf("%w", err)
		}
		if s.Type != "array" {
			return b.errorf("%s does not apply to type %s", kw.key, typeName(s))
		}
		if t.Kind() == reflect.Array && n != t.Len() {
			return b.errorf("%s %d differs from the array length %d", kw.key, n, t.Len())
		}
		*kw.dst = &n
	}
	if s.MinItems != nil && s.MaxItems != nil && *s.MinItems > *s.MaxItems {
		return b.errorf("minItems %d is greater than maxItems %d", *s.MinItems, *s.MaxItems)
	}
	if v, ok := tag.Lookup("uniqueItems"); ok {
		u, err := strconv.ParseBool(v)
		if err != nil {
			return b.errorf("uniqueItems %q is not true or false", v)
		}
		if s.Type != "array" {
			return b.errorf("uniqueItems does not apply to type %s", typeName(s))
		}
		s.UniqueItems = u
	}
	return nil
}

// count parses the value of a tag that counts characters or items.
func count(key, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not a non-negative integer", key, v)
	}
	return n, nil
}

// values converts the list in the tag key, comma-separated or a JSON array,
// to JSON values of type t described by s.
func (b *builder) values(key, v string, s *jsonschema.Schema, t reflect.Type) ([]json.RawMessage, error) {
	if strings.TrimSpace(v) == "" {
		return nil, b.errorf("%s tag is empty", key)
	}
	var raws []json.RawMessage
	if strings.HasPrefix(strings.TrimSpace(v), "[") {
		if err := json.Unmarshal([]byte(v), &raws); err != nil {
			return nil, b.errorf("%s %q is not a JSON array: %w", key, v, err)
		}
		for i, raw := range raws {
			r, err := b.convert(key+" value", string(raw), true, s, t)
			if err != nil {
				return nil, err
			}
			raws[i] = r
		}
		return raws, nil
	}
	for item := range strings.SplitSeq(v, ",") {
		raw, err := b.convert(key+" value", strings.TrimSpace(item), false, s, t)
		if err != nil {
			return nil, err
		}
		raws = append(raws, raw)
	}
	return raws, nil
}

// convert returns v as compact JSON for a value of type t described by s,
// checking that encoding/json decodes it into t. Unless isJSON, v is the
// text of a string when s is a string schema, and JSON otherwise.
func (b *builder) convert(what, v string, isJSON bool, s *jsonschema.Schema, t reflect.Type) (json.RawMessage, error) {
	raw := []byte(v)
	if !isJSON && s.Type == "string" {
		raw, _ = json.Marshal(v)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(reflect.New(t).Interface())
	if err == nil {
		if _, tokErr := dec.Token(); tokErr != io.EOF {
			err = errors.New("unexpected data after the value")
		}
	}
	if err != nil {
		shown := v
		if !isJSON && (s.Type == "string" || !json.Valid(raw)) {
			shown = strconv.Quote(v)
		}
		return nil, b.errorf("%s %s is not a valid %s: %w", what, shown, t, err)
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, raw) // cannot fail: raw decoded
	return buf.Bytes(), nil
}

// check rejects each value that s rejects, so that a tag cannot offer a
// value that the validator would refuse.
func (b *builder) check(what string, raws []json.RawMessage, s *jsonschema.Schema) error {
	for _, raw := range raws {
		if at, why := violation(s, plain(raw)); why != "" {
			if at != "" {
				return b.errorf("%s %s: %s %s", what, raw, at, why)
			}
			return b.errorf("%s %s %s", what, raw, why)
		}
	}
	return nil
}

// violation returns why s rejects v, and where in v, or "" if it does not.
// v is JSON decoded by plain, whose type convert has checked by decoding it
// into the Go type, so violation checks only the keywords that tags and types set,
// and follows no references.
func violation(s *jsonschema.Schema, v any) (at, why string) {
	if s == nil || s.Ref != "" {
		return "", ""
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonschema.Equal(e, v) }) {
		return "", "is not one of the enum values"
	}
	switch v := v.(type) {
	case nil:
		// encoding/json decodes null into any type, as the zero value.
		if s.Type != "" && s.Type != "null" {
			return "", "is not of type " + s.Type
		}
	case int64:
		return "", numberViolation(s, float64(v))
	case uint64:
		return "", numberViolation(s, float64(v))
	case float64:
		return "", numberViolation(s, v)
	case string:
		n := utf8.RuneCountInString(v)
		switch {
		case s.MinLength != nil && n < *s.MinLength:
			return "", fmt.Sprintf("is shorter than minLength %d", *s.MinLength)
		case s.MaxLength != nil && n > *s.MaxLength:
			return "", fmt.Sprintf("is longer than maxLength %d", *s.MaxLength)
		}
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(v) {
			return "", fmt.Sprintf("does not match pattern %q", s.Pattern)
		}
	case []any:
		switch {
		case s.MinItems != nil && len(v) < *s.MinItems:
			return "", fmt.Sprintf("has fewer items than minItems %d", *s.MinItems)
		case s.MaxItems != nil && len(v) > *s.MaxItems:
			return "", fmt.Sprintf("has more items than maxItems %d", *s.MaxItems)
		}
		for i, item := range v {
			if s.UniqueItems && slices.ContainsFunc(v[:i], func(e any) bool { return jsonschema.Equal(e, item) }) {
				return "", fmt.Sprintf("has a duplicate item %d", i)
			}
			if at, why := violation(s.Items, item); why != "" {
				return fmt.Sprintf("[%d]%s", i, at), why
			}
		}
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := v[name]; !ok {
				return "", fmt.Sprintf("lacks required property %q", name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(v)) {
			sub, ok := s.Properties[name]
			if !ok {
				sub = s.AdditionalProperties
				if sub != nil && sub.Not != nil {
					return "", fmt.Sprintf("has unknown property %q", name)
				}
			}
			if at, why := violation(sub, v[name]); why != "" {
				return strings.TrimPrefix("."+name+at, "."), why
			}
		}
	}
	return "", ""
}

func numberViolation(s *jsonschema.Schema, v float64) string {
	switch {
	case s.Minimum != nil && v < *s.Minimum:
		return fmt.Sprintf("is less than minimum %v", *s.Minimum)
	case s.ExclusiveMinimum != nil && v <= *s.ExclusiveMinimum:
		return fmt.Sprintf("is not greater than exclusiveMinimum %v", *s.ExclusiveMinimum)
	case s.Maximum != nil && v > *s.Maximum:
		return fmt.Sprintf("is greater than maximum %v", *s.Maximum)
	case s.ExclusiveMaximum != nil && v >= *s.ExclusiveMaximum:
		return fmt.Sprintf("is not less than exclusiveMaximum %v", *s.ExclusiveMaximum)
	}
	if s.MultipleOf != nil {
		// Tolerate the rounding of decimal fractions such as 0.1.
		if q := v / *s.MultipleOf; math.Abs(q-math.Round(q)) > 1e-9 {
			return fmt.Sprintf("is not a multiple of %v", *s.MultipleOf)
		}
	}
	return ""
}

// plain decodes JSON into the values that enum and examples hold, keeping
// integers exact.
func plain(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil // unreachable: raw was compacted by convert
	}
	return exact(v)
}

func exact(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			return u
		}
		f, _ := v.Float64()
		return f
	case []any:
		for i := range v {
			v[i] = exact(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = exact(v[k])
		}
	}
	return v
}
