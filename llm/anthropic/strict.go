package anthropic

import (
	"fmt"
	"slices"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// The subset of JSON Schema strict tool use constrains, as the structured
// outputs guide lists it ("JSON Schema limitations",
// https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations):
// the basic types, enum of primitives, const, anyOf, allOf, local $ref and
// $defs, required, additionalProperties false (on every object), the
// listed string formats and minItems 0 or 1. Not: recursive schemas,
// numeric bounds, string lengths, other array bounds.
var (
	strictKeywords = []string{"type", "description", "title", "properties", "required", "additionalProperties",
		"items", "enum", "const", "anyOf", "allOf", "$ref", "$defs", "definitions", "default", "format", "pattern", "minItems"}
	strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)

// StrictProblems reports what keeps t's input schema out of strict tool
// use, each at its JSON pointer; none means [Strict] exports the tool.
func StrictProblems(t *wield.Tool) []llm.Problem {
	return strictProblems(Strict, t)
}

func strictProblems(d llm.Dialect, t *wield.Tool) []llm.Problem {
	w := strictWalk{d: d, tool: t, root: t.InputSchema}
	w.walk(t.InputSchema, "", nil)
	return w.ps
}

type strictWalk struct {
	d    llm.Dialect
	tool *wield.Tool
	root *jsonschema.Schema
	ps   []llm.Problem
	// steps bounds the walk: references are followed where they are used,
	// so a schema of shared definitions can be far larger walked than sent.
	steps int
}

// maxStrictSteps is the most subschemas one tool's check visits.
const maxStrictSteps = 10_000

func (w *strictWalk) problem(path, format string, args ...any) {
	if len(w.ps) >= 20 {
		return // enough to act on; a generated schema can repeat one fault everywhere
	}
	w.ps = append(w.ps, llm.Problem{Tool: w.tool.Name, Dialect: w.d.Name(), Path: path, Message: fmt.Sprintf(format, args...)})
}

// walk checks s at path; refs are the references being followed, to find
// a recursive schema.
func (w *strictWalk) walk(s *jsonschema.Schema, path string, refs []string) {
	if s == nil || llm.IsTrue(s) {
		return
	}
	if w.steps++; w.steps > maxStrictSteps {
		if w.steps == maxStrictSteps+1 {
			w.problem(path, "the schema is too large to check for strict tool use (more than %d subschemas with its references followed)", maxStrictSteps)
		}
		return
	}
	for _, k := range llm.Keywords(s) {
		if !slices.Contains(strictKeywords, k) {
			w.problem(path, "strict tool use does not support %q", k)
		}
	}
	if s.Format != "" && !slices.Contains(strictFormats, s.Format) {
		w.problem(path, "strict tool use does not support the format %q", s.Format)
	}
	if s.MinItems != nil && *s.MinItems > 1 {
		w.problem(path, "strict tool use supports minItems 0 or 1, not %d", *s.MinItems)
	}
	for _, v := range s.Enum {
		switch v.(type) {
		case map[string]any, []any:
			w.problem(path, "strict tool use supports enum values that are strings, numbers, booleans or null")
		}
	}
	if llm.HasType(s, "object") && !llm.IsFalse(s.AdditionalProperties) {
		w.problem(path, "strict tool use needs additionalProperties: false on every object")
	}
	if s.Ref != "" {
		switch target, ok := llm.ResolveRef(w.root, s.Ref); {
		case !ok:
			w.problem(path, "strict tool use needs a local $ref, not %q", s.Ref)
		case slices.Contains(refs, s.Ref):
			w.problem(path, "strict tool use does not support recursive schemas ($ref %q refers to itself)", s.Ref)
		default:
			w.walk(target, path, append(refs, s.Ref))
		}
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w.walk(s.Properties[n], llm.Pointer(path, "properties", n), refs)
	}
	w.walk(s.Items, llm.Pointer(path, "items"), refs)
	for i, x := range s.AnyOf {
		w.walk(x, llm.Pointer(path, "anyOf", fmt.Sprint(i)), refs)
	}
	for i, x := range s.AllOf {
		w.walk(x, llm.Pointer(path, "allOf", fmt.Sprint(i)), refs)
	}
}
