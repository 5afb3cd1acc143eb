package llm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// Dialect is one way of presenting tools to a model: a provider's function
// calling format (packages openai, anthropic and gemini) or MCP's tools/list
// ([MCP]). A dialect converts one tool at a time; [Export] runs it over a
// list and applies the rules common to every dialect.
type Dialect interface {
	// Name identifies the dialect in problems: "openai", "openai-strict",
	// "anthropic", "gemini", "mcp", ...
	Name() string
	// ExportTool returns the tool in the dialect's JSON form (a value that
	// encoding/json marshals to what the provider documents), or the
	// problems that keep the tool out of the dialect. A non-nil value comes
	// with no problems.
	ExportTool(t *wield.Tool) (any, []Problem)
}

// Problem is something a dialect cannot express about a tool: a name the
// provider rejects, a schema keyword it does not support and whose loss would
// change what the tool accepts, a limit it publishes. A tool with a problem is
// left out of that dialect's export rather than sent with a different meaning;
// the other dialects are not affected.
type Problem struct {
	Tool    string `json:"tool"`
	Dialect string `json:"dialect"`
	// Path is a JSON pointer into the tool's input schema ("" for the tool
	// itself, "/properties/tags/items" for a nested schema).
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String formats the problem as "dialect: tool "name" at /path: message".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Dialect)
	b.WriteString(": tool ")
	b.WriteString(strconv.Quote(p.Tool))
	if p.Path != "" {
		b.WriteString(" at ")
		b.WriteString(p.Path)
	}
	b.WriteString(": ")
	b.WriteString(p.Message)
	return b.String()
}

// Export converts tools, in order, to dialect d. Pass [wield.Registry.List],
// a toolset's tools or [wield.Toolkit.Tools]. It returns one JSON-ready value
// per exported tool and the problems of the tools it left out: a nil tool, a
// tool without an input schema, a second tool of the same name (providers
// reject duplicates; the first one wins, as in the registry), and whatever the
// dialect reports.
func Export(d Dialect, tools []*wield.Tool) ([]any, []Problem) {
	out := make([]any, 0, len(tools))
	var problems []Problem
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if p := checkListed(d, tools, i, seen); p != nil {
			problems = append(problems, *p)
			continue
		}
		v, ps := d.ExportTool(t)
		if len(ps) > 0 || v == nil {
			problems = append(problems, ps...)
			continue
		}
		out = append(out, v)
	}
	return out, problems
}

// ExportAs is [Export] for a dialect whose values are all of type T, so a
// provider package can offer its tools typed. It panics if a value is not a
// T, which is a bug in the dialect.
func ExportAs[T any](d Dialect, tools []*wield.Tool) ([]T, []Problem) {
	vs, ps := Export(d, tools)
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = v.(T)
	}
	return out, ps
}

// MCPTool is one entry of the result of MCP's tools/list, with the field
// names of the MCP specification. Title, a display name, is left empty by
// [MCP]: wield tools have none; set it on the value to show one.
type MCPTool struct {
	Name         string             `json:"name"`
	Title        string             `json:"title,omitempty"`
	Description  string             `json:"description,omitempty"`
	InputSchema  *jsonschema.Schema `json:"inputSchema"`
	OutputSchema *jsonschema.Schema `json:"outputSchema,omitempty"`
	Annotations  MCPAnnotations     `json:"annotations"`
	// Meta is the tool's _meta: wield writes the tool's examples under
	// [MCPExamplesKey] and an explicit allowed_callers under
	// [MCPCallersKey], which MCP has no field for.
	Meta map[string]any `json:"_meta,omitempty"`
}

// The _meta keys of an [MCPTool], under wield's prefix as MCP asks of keys
// that are not its own (the prefix of mcpbridge's wield/permission and
// wield/tags).
const (
	// MCPExamplesKey holds the tool's examples: a list of argument objects.
	MCPExamplesKey = "wield/input_examples"
	// MCPCallersKey holds the tool's allowed_callers: "direct", "program".
	MCPCallersKey = "wield/allowed_callers"
)

// MCPAnnotations are MCP's tool annotations. All four hints are always
// written: MCP's defaults (destructive and open-world when absent) are the
// opposite of wield's zero values, so leaving a false one out would change
// its meaning.
type MCPAnnotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// MCP is the dialect of MCP's tools/list. Its values are [MCPTool]s. The
// input schema goes as it is (MCP speaks JSON Schema 2020-12) but must
// describe an object; an output schema is listed only when it describes an
// object, as MCP requires, and is otherwise left out without a problem (the
// result then carries no structuredContent, see [MCPResult]).
var MCP Dialect = mcpDialect{}

type mcpDialect struct{}

func (mcpDialect) Name() string { return "mcp" }

// mcpName is the specification's rule for tool names: 1-128 characters of
// A-Z a-z 0-9 _ - . (Tool names,
// https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names).
var mcpName = regexp.MustCompile(`^[A-Za-z0-9_.\-]+$`)

func (d mcpDialect) ExportTool(t *wield.Tool) (any, []Problem) {
	var ps []Problem
	if p := CheckName(d, t, mcpName, 128, "1-128 letters, digits, _ . -"); p != nil {
		ps = append(ps, *p)
	}
	if !HasType(t.InputSchema, "object") {
		ps = append(ps, Problem{Tool: t.Name, Dialect: d.Name(), Message: "MCP requires the input schema to describe an object"})
	}
	if len(ps) > 0 {
		return nil, ps
	}
	mt := MCPTool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: MCPAnnotations{
			ReadOnlyHint:    t.Annotations.ReadOnly,
			DestructiveHint: t.Annotations.Destructive,
			IdempotentHint:  t.Annotations.Idempotent,
			OpenWorldHint:   t.Annotations.OpenWorld,
		},
	}
	if HasType(t.OutputSchema, "object") {
		mt.OutputSchema = t.OutputSchema
	}
	if len(t.Examples) > 0 {
		mt.Meta = map[string]any{MCPExamplesKey: t.Examples}
	}
	if len(t.AllowedCallers) > 0 {
		if mt.Meta == nil {
			mt.Meta = map[string]any{}
		}
		mt.Meta[MCPCallersKey] = t.AllowedCallers
	}
	return mt, nil
}

// MCPTools is [Export] to [MCP] with the values typed, ready to be the
// "tools" of a tools/list result.
func MCPTools(tools []*wield.Tool) ([]MCPTool, []Problem) {
	vs, ps := Export(MCP, tools)
	out := make([]MCPTool, len(vs))
	for i, v := range vs {
		out[i] = v.(MCPTool)
	}
	return out, ps
}

// CheckName returns a problem when the tool's name does not match re or is
// longer than maxLen bytes: the provider's published rule, which rule
// describes in words for the message. The length is apart from re because
// a counted repetition ({1,64}) compiles into one state per count: each
// such rule cost 60-100 KB of allocations at start-up and 25-52 KB held
// for the life of the process, in every program that imports a dialect.
func CheckName(d Dialect, t *wield.Tool, re *regexp.Regexp, maxLen int, rule string) *Problem {
	if len(t.Name) <= maxLen && re.MatchString(t.Name) {
		return nil
	}
	return &Problem{Tool: t.Name, Dialect: d.Name(), Message: fmt.Sprintf("name %q is not accepted: the provider requires %s", t.Name, rule)}
}

// Pointer appends tokens to the JSON pointer base, escaping "~" and "/" as
// RFC 6901 requires.
func Pointer(base string, tokens ...string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, t := range tokens {
		b.WriteByte('/')
		if strings.ContainsAny(t, "~/") {
			t = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
		}
		b.WriteString(t)
	}
	return b.String()
}

// ResolveRef returns the schema that a local reference names within root:
// "#", "#/$defs/Name" or "#/definitions/Name". Other references (remote
// ones, anchors, deeper pointers) are not resolved: ok is false.
func ResolveRef(root *jsonschema.Schema, ref string) (s *jsonschema.Schema, ok bool) {
	switch {
	case ref == "#":
		return root, true
	case strings.HasPrefix(ref, "#/$defs/"):
		s, ok = root.Defs[unescapeToken(ref[len("#/$defs/"):])]
	case strings.HasPrefix(ref, "#/definitions/"):
		s, ok = root.Definitions[unescapeToken(ref[len("#/definitions/"):])]
	}
	return s, ok && s != nil
}

func unescapeToken(t string) string {
	if !strings.Contains(t, "~") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}

// Types returns the types a schema names, from "type" as a string or a list.
func Types(s *jsonschema.Schema) []string {
	if s == nil {
		return nil
	}
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// HasType reports whether s names type typ.
func HasType(s *jsonschema.Schema, typ string) bool {
	return slices.Contains(Types(s), typ)
}

// PropertyNames returns the names of s's properties in their declared order
// (PropertyOrder), then the others sorted, as jsonschema marshals them.
func PropertyNames(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == len(s.Properties) {
		return names
	}
	var rest []string
	for n := range s.Properties {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// IsTrue reports whether s accepts every value: nil, or the empty schema
// (JSON true).
func IsTrue(s *jsonschema.Schema) bool {
	switch {
	case s == nil:
		return true
	case s.Type != "" || s.Ref != "" || s.Properties != nil || s.Description != "" || s.Items != nil:
		return false // the common keywords first, before reflection
	}
	return reflect.ValueOf(*s).IsZero()
}

// IsFalse reports whether s is the schema that accepts nothing (JSON false),
// as jsonschema writes it: {"not": {}}.
func IsFalse(s *jsonschema.Schema) bool {
	if s == nil || s.Not == nil || !IsTrue(s.Not) {
		return false
	}
	c := *s
	c.Not = nil
	return reflect.ValueOf(c).IsZero()
}

// Keywords returns the JSON keywords present on s itself (not its
// subschemas), in the order of the jsonschema.Schema fields, with any extra
// keywords last in sorted order. Dialects compare them with what the
// provider accepts.
func Keywords(s *jsonschema.Schema) []string {
	if s == nil {
		return nil
	}
	v := reflect.ValueOf(s).Elem()
	var out []string
	for _, f := range schemaFields {
		if v.Field(f.index).IsZero() {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != f.name {
			out = append(out, f.name)
		}
	}
	if len(s.Extra) > 0 {
		extra := make([]string, 0, len(s.Extra))
		for k := range s.Extra {
			extra = append(extra, k)
		}
		slices.Sort(extra)
		out = append(out, extra...)
	}
	return out
}

type schemaField struct {
	index int
	name  string
}

// schemaFields maps the fields of jsonschema.Schema to their keywords; the
// untagged ones are those its MarshalJSON writes under another name.
var schemaFields = func() []schemaField {
	special := map[string]string{
		"Type": "type", "Types": "type", "Items": "items", "ItemsArray": "items",
		"DependencySchemas": "dependencies", "DependencyStrings": "dependencies",
	}
	t := reflect.TypeFor[jsonschema.Schema]()
	var out []schemaField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || name == "" {
			name = special[f.Name]
		}
		if name != "" {
			out = append(out, schemaField{i, name})
		}
	}
	return out
}()

// Note appends a note to a description, joined by ";" as wield's schema
// inference joins its own notes ("City name;Default: Paris"). A note the
// description already holds is not repeated.
func Note(desc, note string) string {
	switch {
	case note == "" || strings.Contains(desc, note):
		return desc
	case desc == "":
		return note
	}
	return desc + ";" + note
}

// KeywordNote is keyword k of s written for a description, where a strict
// dialect moves a keyword it cannot send but the engine still enforces
// ("maxLength: 64", "Default: 10"), joined to it with [Note].
func KeywordNote(s *jsonschema.Schema, k string) string {
	switch k {
	case "minLength":
		return fmt.Sprintf("minLength: %d", *s.MinLength)
	case "maxLength":
		return fmt.Sprintf("maxLength: %d", *s.MaxLength)
	case "minItems":
		return fmt.Sprintf("minItems: %d", *s.MinItems)
	case "maxItems":
		return fmt.Sprintf("maxItems: %d", *s.MaxItems)
	case "minProperties":
		return fmt.Sprintf("minProperties: %d", *s.MinProperties)
	case "maxProperties":
		return fmt.Sprintf("maxProperties: %d", *s.MaxProperties)
	case "minimum":
		return "minimum: " + Value(*s.Minimum)
	case "maximum":
		return "maximum: " + Value(*s.Maximum)
	case "exclusiveMinimum":
		return "exclusiveMinimum: " + Value(*s.ExclusiveMinimum)
	case "exclusiveMaximum":
		return "exclusiveMaximum: " + Value(*s.ExclusiveMaximum)
	case "multipleOf":
		return "multipleOf: " + Value(*s.MultipleOf)
	case "format":
		return "format: " + s.Format
	case "default":
		return "Default: " + Value(s.Default)
	case "examples":
		vs := make([]string, len(s.Examples))
		for i, v := range s.Examples {
			vs[i] = Value(v)
		}
		return "Examples: " + strings.Join(vs, ", ")
	case "uniqueItems":
		return "items must be unique"
	case "contentEncoding":
		return "encoding: " + s.ContentEncoding
	case "contentMediaType":
		return "media type: " + s.ContentMediaType
	case "deprecated":
		return "deprecated"
	}
	return k
}

// Value formats a JSON value for a person or a model: a string as it is,
// anything else as compact JSON.
func Value(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.RawMessage:
		var s string
		if json.Unmarshal(x, &s) == nil {
			return s
		}
		return string(jsonenc.Unescape(x))
	}
	b, err := jsonenc.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// JSON marshals v as a model should read it, indented by indent ("" for
// compact): with <, > and & written as they are, also where a value's own
// MarshalJSON escaped them (jsonschema.Schema marshals itself with
// json.Marshal). It is internal/jsonenc's, which every JSON wield writes
// for a model or a person goes through. The result has no final newline.
func JSON(v any, indent string) ([]byte, error) {
	if indent == "" {
		return jsonenc.Marshal(v)
	}
	return jsonenc.MarshalIndent(v, indent)
}
