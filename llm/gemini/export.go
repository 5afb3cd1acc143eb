// Package gemini presents wield tools to Google's Gemini models as
// functionDeclarations, whose parameters are a subset of the OpenAPI 3.0
// schema object rather than JSON Schema. It builds plain values with the
// field names of the Gemini API reference; no SDK is needed to marshal them.
// [Client], an [llm.Model] on the Gemini API, speaks the same wire format
// over net/http, without Google's SDK and the Cloud libraries it brings.
package gemini

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// Tool is one entry of the "tools" of a generateContent request.
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations"`
}

// FunctionDeclaration describes one function. Parameters is nil for a tool
// that takes none, as the API asks. The [JSONSchema] dialect sets
// ParametersJSONSchema and ResponseJSONSchema instead (the API takes one
// form of each, never both).
type FunctionDeclaration struct {
	Name                 string             `json:"name"`
	Description          string             `json:"description,omitempty"`
	Parameters           *Schema            `json:"parameters,omitempty"`
	ParametersJSONSchema *jsonschema.Schema `json:"parametersJsonSchema,omitempty"`
	ResponseJSONSchema   *jsonschema.Schema `json:"responseJsonSchema,omitempty"`
}

// Schema is Gemini's schema object, with the fields the Gemini API accepts
// in function declarations. Type is one of STRING, NUMBER, INTEGER,
// BOOLEAN, ARRAY, OBJECT and NULL.
type Schema struct {
	Type             string             `json:"type,omitempty"`
	Format           string             `json:"format,omitempty"`
	Title            string             `json:"title,omitempty"`
	Description      string             `json:"description,omitempty"`
	Nullable         bool               `json:"nullable,omitempty"`
	Enum             []string           `json:"enum,omitempty"`
	Items            *Schema            `json:"items,omitempty"`
	MinItems         *int               `json:"minItems,omitempty"`
	MaxItems         *int               `json:"maxItems,omitempty"`
	Properties       map[string]*Schema `json:"properties,omitempty"`
	PropertyOrdering []string           `json:"propertyOrdering,omitempty"`
	Required         []string           `json:"required,omitempty"`
	MinProperties    *int               `json:"minProperties,omitempty"`
	MaxProperties    *int               `json:"maxProperties,omitempty"`
	MinLength        *int               `json:"minLength,omitempty"`
	MaxLength        *int               `json:"maxLength,omitempty"`
	Pattern          string             `json:"pattern,omitempty"`
	Minimum          *float64           `json:"minimum,omitempty"`
	Maximum          *float64           `json:"maximum,omitempty"`
	Default          json.RawMessage    `json:"default,omitempty"`
	Example          any                `json:"example,omitempty"`
	AnyOf            []*Schema          `json:"anyOf,omitempty"`
}

// Dialect is the Gemini dialect. Its values are [FunctionDeclaration]s; wrap
// them in one [Tool] (or use [Tools]).
var Dialect llm.Dialect = dialect{}

type dialect struct{}

func (dialect) Name() string { return "gemini" }

var (
	// The rules of FunctionDeclaration.name and of parameter names in
	// https://ai.google.dev/api/caching#FunctionDeclaration: a letter or _
	// first, then letters, digits, _ . : - (names) or _ (parameters), at
	// most 64. The 64-character limits are checked apart (see
	// llm.CheckName).
	nameRule  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:\-]*$`)
	paramRule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func (d dialect) ExportTool(t *wield.Tool) (any, []llm.Problem) {
	var ps []llm.Problem
	if p := llm.CheckName(d, t, nameRule, 64, "a letter or _ then letters, digits, _ . : or -, at most 64 characters"); p != nil {
		ps = append(ps, *p)
	}
	params, sps := ConvertSchema(t.InputSchema)
	for _, p := range sps {
		p.Tool, p.Dialect = t.Name, d.Name()
		ps = append(ps, p)
	}
	if params != nil {
		if params.Type != "OBJECT" {
			ps = append(ps, llm.Problem{Tool: t.Name, Dialect: d.Name(), Message: "function parameters must be an object schema"})
		}
		for _, name := range params.PropertyOrdering {
			if len(name) > 64 || !paramRule.MatchString(name) {
				ps = append(ps, llm.Problem{Tool: t.Name, Dialect: d.Name(), Path: llm.Pointer("", "properties", name),
					Message: fmt.Sprintf("parameter name %q is not accepted: Gemini requires a letter or _ then letters, digits or _, at most 64 characters", name)})
			}
		}
		if len(params.Properties) == 0 {
			params = nil // a function without parameters leaves them unset
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return FunctionDeclaration{Name: t.Name, Description: t.Description, Parameters: params}, nil
}

// Tools exports tools as one Gemini [Tool]; see [llm.Export].
func Tools(tools []*wield.Tool) (Tool, []llm.Problem) {
	decls, ps := llm.ExportAs[FunctionDeclaration](Dialect, tools)
	return Tool{FunctionDeclarations: decls}, ps
}

// ConvertSchema converts a JSON Schema to Gemini's schema and returns the
// problems that keep it from being used (their Tool and Dialect are left
// for the caller to fill). The input is not modified.
//
// The conversion keeps what the schema allows:
//   - references ($ref into $defs or definitions) are replaced by what they
//     refer to; a recursive one is a problem, since Gemini has no references;
//   - a type list or anyOf/oneOf with "null" becomes nullable, other type
//     lists become anyOf, and oneOf becomes anyOf (the engine still
//     validates the original schema);
//   - a string const becomes a one-value enum, a number const a minimum and
//     maximum of that value; enums of other types, which Gemini accepts only
//     on strings, go into the description ("Allowed values: 1, 2, 3"), as do
//     exclusiveMinimum, exclusiveMaximum, multipleOf, uniqueItems, the
//     content keywords and formats Gemini does not know;
//   - the first of examples becomes example; property order becomes
//     propertyOrdering;
//   - annotations with no meaning for the model ($schema, $id, $comment,
//     readOnly, writeOnly) and additionalProperties false or true are
//     dropped.
//
// It reports what cannot be kept: maps (additionalProperties with a
// schema), free-form objects, schemas that accept any value, arrays without
// items or with tuple items, allOf, not, if/then/else, patternProperties,
// dependent keywords and unresolvable references.
func ConvertSchema(in *jsonschema.Schema) (*Schema, []llm.Problem) {
	c := &conv{root: in}
	out := c.schema(in, "", true)
	return out, c.problems
}

type conv struct {
	root     *jsonschema.Schema
	problems []llm.Problem
	refs     []string // the references being expanded, to find cycles
	nodes    int
}

// maxNodes bounds the schemas a conversion writes, so that references that
// fan out cannot make a schema of any size.
const maxNodes = 100_000

func (c *conv) problem(path, msg string) {
	c.problems = append(c.problems, llm.Problem{Path: path, Message: msg})
}

var (
	dropped = map[string]bool{"$schema": true, "$id": true, "$comment": true, "readOnly": true, "writeOnly": true, "$vocabulary": true, "$defs": true, "definitions": true, "propertyNames": true, "additionalProperties": true}
	noted   = map[string]bool{"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true, "uniqueItems": true, "contentEncoding": true, "contentMediaType": true, "deprecated": true}
	kept    = map[string]bool{"$ref": true, "title": true, "description": true, "type": true, "enum": true, "const": true, "format": true, "items": true, "properties": true, "required": true, "anyOf": true, "oneOf": true, "minItems": true, "maxItems": true, "minLength": true, "maxLength": true, "pattern": true, "minimum": true, "maximum": true, "minProperties": true, "maxProperties": true, "default": true, "examples": true}
	formats = map[string][]string{"NUMBER": {"float", "double"}, "INTEGER": {"int32", "int64"}, "STRING": {"enum", "date-time"}}
)

func (c *conv) schema(s *jsonschema.Schema, path string, root bool) *Schema {
	if c.nodes++; c.nodes > maxNodes {
		if c.nodes == maxNodes+1 {
			c.problem(path, fmt.Sprintf("the schema grows beyond %d subschemas once references are expanded", maxNodes))
		}
		return &Schema{}
	}
	switch {
	case llm.IsTrue(s):
		c.problem(path, "the schema accepts any value; Gemini needs a type")
		return &Schema{}
	case llm.IsFalse(s):
		c.problem(path, "the schema accepts no value; Gemini cannot express it")
		return &Schema{}
	}
	if s.Ref != "" {
		return c.ref(s, path, root)
	}
	out := &Schema{
		Title: s.Title, Description: s.Description, Pattern: s.Pattern,
		MinItems: s.MinItems, MaxItems: s.MaxItems, MinLength: s.MinLength, MaxLength: s.MaxLength,
		MinProperties: s.MinProperties, MaxProperties: s.MaxProperties,
		Minimum: s.Minimum, Maximum: s.Maximum, Default: s.Default,
	}
	if len(s.Examples) > 0 {
		out.Example = s.Examples[0]
	}
	for _, k := range llm.Keywords(s) {
		switch {
		case kept[k], dropped[k]:
		case noted[k]:
			out.Description = llm.Note(out.Description, llm.KeywordNote(s, k))
		default:
			c.problem(path, fmt.Sprintf("keyword %q is not supported by Gemini", k))
		}
	}
	c.types(s, out, path)
	c.enum(s, out)
	if s.Format != "" {
		if slices.Contains(formats[out.Type], s.Format) {
			out.Format = s.Format
		} else {
			out.Description = llm.Note(out.Description, llm.KeywordNote(s, "format"))
		}
	}
	for i, b := range s.AnyOf {
		c.branch(out, b, llm.Pointer(path, "anyOf", fmt.Sprint(i)))
	}
	for i, b := range s.OneOf {
		c.branch(out, b, llm.Pointer(path, "oneOf", fmt.Sprint(i)))
	}
	if out.Type == "" && len(out.AnyOf) == 1 {
		out = merge(out, out.AnyOf[0])
	}
	if out.Type == "" && len(out.AnyOf) == 0 && !out.Nullable {
		c.problem(path, "the schema has no type; Gemini needs one")
	}
	if s.ItemsArray != nil {
		c.problem(llm.Pointer(path, "items"), "a tuple (items as a list) is not supported by Gemini")
	} else if out.Type == "ARRAY" || s.Items != nil {
		if s.Items == nil {
			c.problem(path, "the array does not say what its items are; Gemini needs items")
		} else {
			out.Items = c.schema(s.Items, llm.Pointer(path, "items"), false)
		}
	}
	if out.Type == "OBJECT" || s.Properties != nil {
		c.object(s, out, path, root)
	}
	return out
}

// jsonTypes are the types JSON Schema defines.
var jsonTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true, "null": true}

// types sets Type and Nullable from "type".
func (c *conv) types(s *jsonschema.Schema, out *Schema, path string) {
	var types []string
	for _, t := range llm.Types(s) {
		if t == "null" {
			out.Nullable = true
			continue
		}
		if !jsonTypes[t] {
			c.problem(path, fmt.Sprintf("type %q is not a JSON Schema type", t))
			continue
		}
		types = append(types, strings.ToUpper(t))
	}
	switch {
	case len(types) == 1:
		out.Type = types[0]
	case len(types) > 1:
		for _, t := range types {
			out.AnyOf = append(out.AnyOf, &Schema{Type: t})
		}
	case out.Nullable:
		out.Type, out.Nullable = "NULL", false
	case s.Properties != nil:
		out.Type = "OBJECT"
	case len(s.Enum) > 0 && allStrings(s.Enum), s.Const != nil && isString(*s.Const):
		out.Type = "STRING"
	}
}

// enum sets Enum, or the description, from enum and const.
func (c *conv) enum(s *jsonschema.Schema, out *Schema) {
	if s.Const != nil {
		switch v := (*s.Const).(type) {
		case string:
			out.Enum = []string{v}
		case float64:
			out.Minimum, out.Maximum = &v, &v
		default:
			out.Description = llm.Note(out.Description, "Value: "+llm.Value(v))
		}
	}
	if len(s.Enum) == 0 {
		return
	}
	if out.Type == "STRING" && allStrings(s.Enum) {
		for _, v := range s.Enum {
			if v == nil {
				out.Nullable = true
				continue
			}
			out.Enum = append(out.Enum, v.(string))
		}
		return
	}
	vs := make([]string, len(s.Enum))
	for i, v := range s.Enum {
		vs[i] = llm.Value(v)
	}
	out.Description = llm.Note(out.Description, "Allowed values: "+strings.Join(vs, ", "))
}

// branch adds one branch of anyOf or oneOf; a null branch makes out nullable.
func (c *conv) branch(out *Schema, b *jsonschema.Schema, path string) {
	if slices.Equal(llm.Types(b), []string{"null"}) && len(llm.Keywords(b)) == 1 {
		out.Nullable = true
		return
	}
	out.AnyOf = append(out.AnyOf, c.schema(b, path, false))
}

// merge folds the only branch of an anyOf into its parent.
func merge(parent, branch *Schema) *Schema {
	m := *branch
	m.Nullable = m.Nullable || parent.Nullable
	if parent.Description != "" {
		m.Description = llm.Note(parent.Description, m.Description)
	}
	if parent.Title != "" {
		m.Title = parent.Title
	}
	if parent.Default != nil {
		m.Default = parent.Default
	}
	if parent.Example != nil {
		m.Example = parent.Example
	}
	return &m
}

func (c *conv) object(s *jsonschema.Schema, out *Schema, path string, root bool) {
	if out.Type == "" {
		out.Type = "OBJECT"
	}
	switch {
	case !llm.IsTrue(s.AdditionalProperties) && !llm.IsFalse(s.AdditionalProperties):
		c.problem(llm.Pointer(path, "additionalProperties"), "a map (an object with additionalProperties) cannot be expressed: Gemini objects have named properties only")
	case len(s.Properties) == 0 && !root:
		c.problem(path, "a free-form object (no properties) cannot be expressed: Gemini objects need named properties")
	}
	names := llm.PropertyNames(s)
	if len(names) == 0 {
		return
	}
	out.Properties = make(map[string]*Schema, len(names))
	out.PropertyOrdering = names
	for _, name := range names {
		out.Properties[name] = c.schema(s.Properties[name], llm.Pointer(path, "properties", name), false)
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; ok && !slices.Contains(out.Required, r) {
			out.Required = append(out.Required, r)
		}
	}
}

// ref replaces a reference by its target, with sibling keywords applied.
func (c *conv) ref(s *jsonschema.Schema, path string, root bool) *Schema {
	if slices.Contains(c.refs, s.Ref) {
		c.problem(path, fmt.Sprintf("recursive reference %q: Gemini has no references, so a recursive schema cannot be expressed", s.Ref))
		return &Schema{}
	}
	target, ok := llm.ResolveRef(c.root, s.Ref)
	if !ok {
		c.problem(path, fmt.Sprintf("reference %q cannot be resolved; only #, #/$defs/... and #/definitions/... are", s.Ref))
		return &Schema{}
	}
	merged := *target
	src, dst := reflect.ValueOf(s).Elem(), reflect.ValueOf(&merged).Elem()
	for i := range src.NumField() {
		if name := src.Type().Field(i).Name; name != "Ref" && !src.Field(i).IsZero() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	if target == c.root {
		merged.Defs, merged.Definitions = nil, nil
	}
	c.refs = append(c.refs, s.Ref)
	out := c.schema(&merged, path, root)
	c.refs = c.refs[:len(c.refs)-1]
	return out
}

func allStrings(vs []any) bool {
	for _, v := range vs {
		if _, ok := v.(string); !ok && v != nil {
			return false
		}
	}
	return true
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}
