package anthropic

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/schema"
)

// The subset of JSON Schema strict tool use constrains, as the structured
// outputs guide lists it ("JSON Schema limitations",
// https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations):
// the basic types, enum of primitives, const, anyOf, allOf, local $ref and
// $defs, required (optional properties are allowed, unlike OpenAI's strict
// mode), additionalProperties false on every object, the listed string
// formats, simple patterns and minItems 0 or 1. Not: recursive schemas,
// numeric bounds, string lengths, other array bounds.
var (
	strictKept = []string{"type", "description", "title", "properties", "required", "additionalProperties",
		"items", "enum", "const", "anyOf", "allOf", "$ref", "pattern"}
	// strictNoted narrow a value without changing its shape: moved into the
	// description, as wield's inference writes defaults; the engine still
	// validates the tool's own schema.
	strictNoted = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
		"minLength", "maxLength", "maxItems", "uniqueItems", "minProperties", "maxProperties",
		"default", "examples", "contentEncoding", "contentMediaType", "deprecated"}
	strictDropped = []string{"$schema", "$id", "$comment", "readOnly", "writeOnly", "$defs", "definitions", "format", "minItems", "oneOf"}
	jsonTypes     = []string{"string", "number", "integer", "boolean", "object", "array", "null"}
	strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)

// StrictSchema rewrites an input schema for strict tool use without
// changing what the model may send beyond what the tool accepts: keywords
// that only narrow a value (bounds, lengths, uniqueness, defaults,
// examples, other formats, minItems above 1) move into the description;
// oneOf becomes anyOf; an object with named properties and no word on
// others gets additionalProperties false, which the model then keeps to.
// It reports, at their JSON pointers, what cannot be kept: maps and
// free-form objects, recursive references, and keywords with no strict
// form (patternProperties, not, if/then/else, tuples, ...).
func StrictSchema(in *jsonschema.Schema) (*jsonschema.Schema, []llm.Problem) {
	c := &strictConv{root: in}
	out := c.schema(in, "")
	defs, key := in.Defs, "$defs"
	if defs == nil {
		defs, key = in.Definitions, "definitions"
	}
	for name, d := range defs {
		if out.Defs == nil {
			out.Defs = map[string]*jsonschema.Schema{}
		}
		out.Defs[name] = c.schema(d, llm.Pointer("", key, name))
		if r := "#/" + key + "/" + name; c.recursive(d, []string{r}) {
			c.problem(llm.Pointer("", key, name), "strict tool use does not support recursive schemas (%s refers to itself)", r)
		}
	}
	if key == "definitions" && out.Defs != nil {
		renameRefs(out)
	}
	return out, c.problems
}

type strictConv struct {
	root     *jsonschema.Schema
	problems []llm.Problem
	nodes    int
}

// maxStrictProblems is enough to act on: a generated schema can repeat one
// fault everywhere.
const maxStrictProblems = 20

// maxStrictNodes bounds the subschemas a conversion visits.
const maxStrictNodes = 100_000

func (c *strictConv) problem(path, format string, args ...any) {
	if len(c.problems) < maxStrictProblems {
		c.problems = append(c.problems, llm.Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
}

func (c *strictConv) schema(s *jsonschema.Schema, path string) *jsonschema.Schema {
	if c.nodes++; c.nodes > maxStrictNodes {
		if c.nodes == maxStrictNodes+1 {
			c.problem(path, "the schema has more than %d subschemas", maxStrictNodes)
		}
		return &jsonschema.Schema{}
	}
	switch {
	case llm.IsTrue(s):
		c.problem(path, "the schema accepts any value; strict tool use needs a type")
		return &jsonschema.Schema{}
	case llm.IsFalse(s):
		c.problem(path, "the schema accepts no value; strict tool use cannot express it")
		return &jsonschema.Schema{}
	}
	out := &jsonschema.Schema{Title: s.Title, Description: s.Description, Type: s.Type, Types: s.Types,
		Enum: s.Enum, Const: s.Const, Pattern: s.Pattern, Ref: s.Ref, Required: s.Required, PropertyOrder: s.PropertyOrder}
	for _, k := range llm.Keywords(s) {
		switch {
		case slices.Contains(strictKept, k), slices.Contains(strictDropped, k):
		case slices.Contains(strictNoted, k):
			out.Description = llm.Note(out.Description, llm.KeywordNote(s, k))
		default:
			c.problem(path, "strict tool use does not support %q", k)
		}
	}
	switch {
	case s.Format == "":
	case slices.Contains(strictFormats, s.Format):
		out.Format = s.Format
	default:
		out.Description = llm.Note(out.Description, llm.KeywordNote(s, "format"))
	}
	if s.MinItems != nil {
		if *s.MinItems <= 1 {
			out.MinItems = s.MinItems
		} else {
			out.Description = llm.Note(out.Description, llm.KeywordNote(s, "minItems"))
		}
	}
	for _, t := range llm.Types(s) {
		if !slices.Contains(jsonTypes, t) {
			c.problem(path, "type %q is not a JSON Schema type", t)
		}
	}
	for _, v := range s.Enum {
		switch v.(type) {
		case map[string]any, []any:
			c.problem(path, "strict tool use supports enum values that are strings, numbers, booleans or null")
		}
	}
	if s.Ref != "" {
		if _, ok := llm.ResolveRef(c.root, s.Ref); !ok {
			c.problem(path, "strict tool use needs a local $ref to $defs, not %q", s.Ref)
		} else if s.Ref == "#" {
			c.problem(path, "strict tool use does not support recursive schemas ($ref to the root)")
		}
	}
	if s.ItemsArray != nil {
		c.problem(llm.Pointer(path, "items"), "a tuple (items as a list) is not supported in strict tool use")
	}
	if s.Items != nil {
		out.Items = c.schema(s.Items, llm.Pointer(path, "items"))
	}
	for i, b := range s.AnyOf {
		out.AnyOf = append(out.AnyOf, c.schema(b, llm.Pointer(path, "anyOf", fmt.Sprint(i))))
	}
	for i, b := range s.OneOf {
		out.AnyOf = append(out.AnyOf, c.schema(b, llm.Pointer(path, "oneOf", fmt.Sprint(i))))
	}
	for i, b := range s.AllOf {
		out.AllOf = append(out.AllOf, c.schema(b, llm.Pointer(path, "allOf", fmt.Sprint(i))))
	}
	if llm.HasType(s, "object") || s.Properties != nil {
		switch {
		case s.AdditionalProperties != nil && !llm.IsFalse(s.AdditionalProperties):
			c.problem(llm.Pointer(path, "additionalProperties"), "a map (an object with additionalProperties) cannot be expressed in strict tool use, where every object has additionalProperties false")
		case len(s.Properties) == 0 && s.AdditionalProperties == nil:
			c.problem(path, "a free-form object (no properties, others allowed) cannot be expressed in strict tool use, where every object has additionalProperties false")
		}
		out.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		if s.Properties != nil {
			out.Properties = make(map[string]*jsonschema.Schema, len(s.Properties))
			for _, n := range llm.PropertyNames(s) {
				out.Properties[n] = c.schema(s.Properties[n], llm.Pointer(path, "properties", n))
			}
		}
	}
	return out
}

// recursive reports whether s, reached through the references in stack,
// refers back to one of them.
func (c *strictConv) recursive(s *jsonschema.Schema, stack []string) bool {
	if s == nil || len(stack) > 64 {
		return len(stack) > 64
	}
	if s.Ref != "" {
		if slices.Contains(stack, s.Ref) || s.Ref == "#" {
			return true
		}
		if t, ok := llm.ResolveRef(c.root, s.Ref); ok && c.recursive(t, append(stack, s.Ref)) {
			return true
		}
	}
	subs := []*jsonschema.Schema{s.Items}
	subs = append(subs, s.AnyOf...)
	subs = append(subs, s.OneOf...)
	subs = append(subs, s.AllOf...)
	for _, p := range s.Properties {
		subs = append(subs, p)
	}
	for _, x := range subs {
		if c.nodes++; c.nodes > maxStrictNodes {
			return false
		}
		if c.recursive(x, stack) {
			return true
		}
	}
	return false
}

// renameRefs writes references to #/definitions/ as #/$defs/, where the
// converted definitions are.
func renameRefs(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if after, ok := strings.CutPrefix(s.Ref, "#/definitions/"); ok {
		s.Ref = "#/$defs/" + after
	}
	renameRefs(s.Items)
	for _, x := range s.AnyOf {
		renameRefs(x)
	}
	for _, x := range s.AllOf {
		renameRefs(x)
	}
	for _, x := range s.Properties {
		renameRefs(x)
	}
	for _, x := range s.Defs {
		renameRefs(x)
	}
}

// strictProblems converts t's schema for [Strict]: the schema to send, or
// the problems that keep the tool out.
func strictProblems(d llm.Dialect, t *wield.Tool) (*jsonschema.Schema, []llm.Problem) {
	s, ps := StrictSchema(t.InputSchema)
	for i := range ps {
		ps[i].Tool, ps[i].Dialect = t.Name, d.Name()
	}
	return s, ps
}

// strictExamples checks the tool's examples against the schema strict
// tool use is given: the API checks input_examples against it, and one it
// refuses fails the whole request. The rewrite closes objects the tool
// left open, so an example with a property the tool accepts but does not
// name is refused here, at its index.
func strictExamples(d llm.Dialect, t *wield.Tool, s *jsonschema.Schema) []llm.Problem {
	if len(t.Examples) == 0 {
		return nil
	}
	v, err := schema.Compile(s)
	if err != nil {
		return []llm.Problem{{Tool: t.Name, Dialect: d.Name(), Message: "the strict schema does not compile: " + err.Error()}}
	}
	var ps []llm.Problem
	for i, ex := range t.Examples {
		if _, errs := v.NormalizeStrict(ex); len(errs) > 0 {
			ps = append(ps, llm.Problem{Tool: t.Name, Dialect: d.Name(),
				Message: fmt.Sprintf("input_examples[%d] does not match the schema strict tool use is given: %s", i, errs[0])})
		}
	}
	return ps
}
