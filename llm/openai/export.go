// Package openai presents wield tools to OpenAI models: the "tools" of the
// Chat Completions and Responses APIs, in normal and strict mode. It builds
// plain values with the field names of OpenAI's API reference; no SDK is
// needed to marshal them. [Client], an [llm.Model] on Chat Completions,
// and [ResponsesClient], one on the Responses API, speak the same wire
// format over net/http: OpenAI's SDK, which links every OpenAI service,
// made 53.5 MB of a 127.6 MB wield binary.
package openai

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// Limits of strict mode, as OpenAI's Structured Outputs guide publishes them.
const (
	MaxProperties        = 5000    // object properties in one schema
	MaxNesting           = 10      // levels of nested objects
	MaxEnumValues        = 1000    // enum values across a schema
	MaxEnumStringLength  = 15000   // characters of one string enum with more than 250 values
	LargeEnum            = 250     // values from which MaxEnumStringLength applies
	MaxTotalStringLength = 120_000 // characters of property and definition names, enum and const values
)

// MaxDescription is the longest function description Chat Completions
// takes, in characters: a longer one fails the whole request with 400
// "Invalid 'tools[0].function.description': string too long. Expected a
// string with maximum length 1024" (code string_above_max_length; the
// field's limit in https://platform.openai.com/docs/api-reference/chat/create,
// met by every MCP client that forwards long descriptions, e.g.
// https://github.com/getsentry/sentry-mcp/issues/106). The Responses API
// publishes no such limit and is not held to it.
const MaxDescription = 1024

// API names an OpenAI API whose tool format a [Dialect] writes.
type API string

// The APIs.
const (
	ChatAPI      API = "chat"      // Chat Completions: {"type":"function","function":{...}}
	ResponsesAPI API = "responses" // Responses: {"type":"function","name",...}
)

// Dialect is an OpenAI tool format. In strict mode the input schema is
// rewritten to the subset Structured Outputs accepts without changing what
// it allows (see [StrictSchema]); a tool that cannot be rewritten is
// reported and left out.
type Dialect struct {
	API    API
	Strict bool
}

// The four OpenAI dialects.
var (
	Chat            = Dialect{API: ChatAPI}
	ChatStrict      = Dialect{API: ChatAPI, Strict: true}
	Responses       = Dialect{API: ResponsesAPI}
	ResponsesStrict = Dialect{API: ResponsesAPI, Strict: true}
)

// Name is "openai", "openai-strict", "openai-responses" or
// "openai-responses-strict".
func (d Dialect) Name() string {
	name := "openai"
	if d.API == ResponsesAPI {
		name += "-responses"
	}
	if d.Strict {
		name += "-strict"
	}
	return name
}

// ChatTool is one entry of the "tools" of a Chat Completions request.
type ChatTool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is the function of a [ChatTool].
type Function struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Parameters  *jsonschema.Schema `json:"parameters"`
	Strict      bool               `json:"strict,omitempty"`
}

// ResponsesTool is one entry of the "tools" of a Responses request. Strict
// is always written: the Responses API defaults it to true.
type ResponsesTool struct {
	Type        string             `json:"type"`
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Parameters  *jsonschema.Schema `json:"parameters"`
	Strict      bool               `json:"strict"`
	// AllowedCallers is written only when the tool says who may call it
	// ([wield.Tool].AllowedCallers): "direct", and [ProgramCaller] for a
	// program, the values of Programmatic Tool Calling
	// (https://developers.openai.com/api/docs/guides/tools-programmatic-tool-calling;
	// the request also carries the tool {"type": "programmatic_tool_calling"}).
	// Left out, the API's default is direct only.
	AllowedCallers []string `json:"allowed_callers,omitempty"`
}

// ProgramCaller is the Responses API's allowed_callers value by which a
// function is callable from a program the model writes (Programmatic Tool
// Calling).
const ProgramCaller = "programmatic"

// nameRule is OpenAI's rule for function names: "a-z, A-Z, 0-9, or
// underscores and dashes, with a maximum length of 64" (function.name in
// https://platform.openai.com/docs/api-reference/chat/create; the length
// is checked apart, see llm.CheckName).
var nameRule = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ExportTool returns a [ChatTool] or a [ResponsesTool].
func (d Dialect) ExportTool(t *wield.Tool) (any, []llm.Problem) {
	var ps []llm.Problem
	if p := llm.CheckName(d, t, nameRule, 64, "1-64 letters, digits, _ or -"); p != nil {
		ps = append(ps, *p)
	}
	if n := utf8.RuneCountInString(t.Description); d.API == ChatAPI && n > MaxDescription {
		ps = append(ps, llm.Problem{Tool: t.Name, Dialect: d.Name(), Message: fmt.Sprintf("the description has %d characters; Chat Completions refuses more than %d (string_above_max_length): shorten it", n, MaxDescription)})
	}
	params := t.InputSchema
	if d.Strict {
		var sps []llm.Problem
		params, sps = StrictSchema(t.InputSchema)
		for _, p := range sps {
			p.Tool, p.Dialect = t.Name, d.Name()
			ps = append(ps, p)
		}
	} else {
		if !llm.HasType(params, "object") {
			ps = append(ps, llm.Problem{Tool: t.Name, Dialect: d.Name(), Message: "function parameters must be a JSON Schema of type object"})
		}
		if kw := topLevelRefused(params); len(kw) > 0 {
			// OpenAI answers 400 "schema must have type 'object' and not
			// have 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top
			// level", for the whole request.
			ps = append(ps, llm.Problem{Tool: t.Name, Dialect: d.Name(), Message: "function parameters cannot have " + strings.Join(kw, ", ") + " at the top level: OpenAI refuses it"})
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	if d.API == ResponsesAPI {
		out := ResponsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params, Strict: d.Strict}
		for _, c := range t.AllowedCallers {
			switch c {
			case wield.AllowDirect:
				out.AllowedCallers = append(out.AllowedCallers, "direct")
			case wield.AllowProgram:
				out.AllowedCallers = append(out.AllowedCallers, ProgramCaller)
			}
		}
		return out, nil
	}
	return ChatTool{Type: "function", Function: Function{Name: t.Name, Description: t.Description, Parameters: params, Strict: d.Strict}}, nil
}

// ChatTools exports tools for Chat Completions, typed; see [llm.Export].
func ChatTools(tools []*wield.Tool, strict bool) ([]ChatTool, []llm.Problem) {
	return llm.ExportAs[ChatTool](Dialect{API: ChatAPI, Strict: strict}, tools)
}

// ResponsesTools exports tools for the Responses API, typed; see [llm.Export].
func ResponsesTools(tools []*wield.Tool, strict bool) ([]ResponsesTool, []llm.Problem) {
	return llm.ExportAs[ResponsesTool](Dialect{API: ResponsesAPI, Strict: strict}, tools)
}

// topLevelRefused are the keywords of s that OpenAI refuses at the top of
// function parameters.
func topLevelRefused(s *jsonschema.Schema) []string {
	if s == nil {
		return nil
	}
	var kw []string
	for _, k := range []struct {
		name string
		set  bool
	}{{"oneOf", len(s.OneOf) > 0}, {"anyOf", len(s.AnyOf) > 0}, {"allOf", len(s.AllOf) > 0}, {"enum", s.Enum != nil}, {"const", s.Const != nil}, {"not", s.Not != nil}} {
		if k.set {
			kw = append(kw, k.name)
		}
	}
	return kw
}

// strictFormats are the string formats strict mode accepts.
var strictFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "ipv4": true, "ipv6": true, "uuid": true,
}

// jsonTypes are the types JSON Schema defines.
var jsonTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true, "null": true}

// StrictSchema rewrites an input schema for OpenAI's strict mode and returns
// the problems that keep it from being used (their Tool and Dialect are left
// for the caller to fill). The input is not modified.
//
// The rewrite keeps what the schema allows:
//   - every object gets additionalProperties false and lists all of its
//     properties as required; an optional property becomes nullable
//     (type [T, "null"], or anyOf with {"type":"null"}), and the engine's
//     validator reads a null for an optional property as "not given";
//   - an object that declares properties and leaves additionalProperties
//     open is closed: the model cannot know of properties it is not told of;
//     so are parameters of just {"type":"object"}, which is how tools say
//     they take none;
//   - "definitions" become "$defs"; a $ref with sibling keywords is replaced
//     by what it refers to, with the siblings applied, since strict mode
//     refuses keywords beside $ref; oneOf becomes anyOf (the engine still
//     validates the original schema);
//   - keywords strict mode lacks that only narrow a value (minLength,
//     maxLength, default, examples, uniqueItems, minProperties,
//     maxProperties, formats it does not know, ...) are moved into the
//     description, as wield's inference writes defaults: "Name;maxLength: 64";
//   - annotations with no meaning for the model ($schema, $id, $comment,
//     readOnly, writeOnly) are dropped.
//
// It reports what cannot be kept: maps and free-form objects, schemas that
// accept any value, patternProperties, allOf, not, if/then/else, dependent
// keywords, tuples, contains, unresolvable references, a root that is not an
// object, and the published limits (see the constants).
func StrictSchema(in *jsonschema.Schema) (*jsonschema.Schema, []llm.Problem) {
	c := &strictConv{root: in}
	if !llm.HasType(in, "object") {
		c.problem("", "strict mode requires the parameters to be an object schema (not anyOf or another type)")
	}
	out := c.schema(in, "", 1)
	if out == nil {
		return nil, c.problems
	}
	defs := in.Defs
	if defs == nil {
		defs = in.Definitions
	}
	if len(defs) > 0 {
		out.Defs = make(map[string]*jsonschema.Schema, len(defs))
		out.Definitions = nil
		for name, d := range defs {
			c.strLen += len(name)
			key := "$defs"
			if in.Defs == nil {
				key = "definitions"
			}
			out.Defs[name] = c.schema(d, llm.Pointer("", key, name), 1)
		}
	}
	if c.props > MaxProperties {
		c.problem("", fmt.Sprintf("%d object properties in all; strict mode allows at most %d", c.props, MaxProperties))
	}
	if c.enums > MaxEnumValues {
		c.problem("", fmt.Sprintf("%d enum values in all; strict mode allows at most %d", c.enums, MaxEnumValues))
	}
	if c.strLen > MaxTotalStringLength {
		c.problem("", fmt.Sprintf("property names, definition names, enum and const values add up to %d characters; strict mode allows at most %d", c.strLen, MaxTotalStringLength))
	}
	return out, c.problems
}

type strictConv struct {
	root     *jsonschema.Schema
	problems []llm.Problem
	props    int
	enums    int
	strLen   int
	inlining []string // references with siblings being inlined
	nodes    int
}

// maxNodes bounds the schemas a conversion writes, so that references that
// fan out cannot make a schema of any size.
const maxNodes = 100_000

func (c *strictConv) problem(path, msg string) {
	c.problems = append(c.problems, llm.Problem{Path: path, Message: msg})
}

// strictDropped are annotations left out silently; strictNoted are
// narrowing keywords moved into the description.
var (
	strictDropped = map[string]bool{"$schema": true, "$id": true, "$comment": true, "readOnly": true, "writeOnly": true, "$vocabulary": true, "$defs": true, "definitions": true, "propertyNames": true}
	strictNoted   = map[string]bool{"minLength": true, "maxLength": true, "default": true, "examples": true, "uniqueItems": true, "minProperties": true, "maxProperties": true, "contentEncoding": true, "contentMediaType": true, "deprecated": true}
	strictKept    = map[string]bool{"$ref": true, "title": true, "description": true, "type": true, "enum": true, "const": true, "pattern": true, "format": true, "multipleOf": true, "minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "minItems": true, "maxItems": true, "items": true, "required": true, "properties": true, "additionalProperties": true, "anyOf": true, "oneOf": true}
)

// schema converts s found at path; level counts the objects around it.
func (c *strictConv) schema(s *jsonschema.Schema, path string, level int) *jsonschema.Schema {
	if c.nodes++; c.nodes > maxNodes {
		if c.nodes == maxNodes+1 {
			c.problem(path, fmt.Sprintf("the schema grows beyond %d subschemas once references with sibling keywords are inlined", maxNodes))
		}
		return &jsonschema.Schema{}
	}
	switch {
	case llm.IsTrue(s):
		c.problem(path, "the schema accepts any value; strict mode needs a type")
		return &jsonschema.Schema{}
	case llm.IsFalse(s):
		c.problem(path, "the schema accepts no value; strict mode cannot express it")
		return &jsonschema.Schema{}
	}
	if s.Ref != "" {
		return c.ref(s, path, level)
	}
	out := &jsonschema.Schema{
		Title: s.Title, Description: s.Description, Type: s.Type, Types: s.Types,
		Enum: s.Enum, Const: s.Const, Pattern: s.Pattern,
		MultipleOf: s.MultipleOf, Minimum: s.Minimum, Maximum: s.Maximum,
		ExclusiveMinimum: s.ExclusiveMinimum, ExclusiveMaximum: s.ExclusiveMaximum,
		MinItems: s.MinItems, MaxItems: s.MaxItems,
	}
	for _, k := range llm.Keywords(s) {
		switch {
		case strictKept[k], strictDropped[k]:
		case strictNoted[k]:
			out.Description = llm.Note(out.Description, llm.KeywordNote(s, k))
		default:
			c.problem(path, fmt.Sprintf("keyword %q is not supported in strict mode", k))
		}
	}
	if s.Format != "" {
		if strictFormats[s.Format] {
			out.Format = s.Format
		} else {
			out.Description = llm.Note(out.Description, llm.KeywordNote(s, "format"))
		}
	}
	for _, t := range llm.Types(s) {
		if !jsonTypes[t] {
			c.problem(path, fmt.Sprintf("type %q is not a JSON Schema type", t))
		}
	}
	if len(llm.Types(s)) == 0 && s.Enum == nil && s.Const == nil && len(s.AnyOf) == 0 && len(s.OneOf) == 0 && s.Properties == nil {
		c.problem(path, "the schema has no type; strict mode needs one")
	}
	c.countEnum(s, path)
	for i, b := range s.AnyOf {
		out.AnyOf = append(out.AnyOf, c.schema(b, llm.Pointer(path, "anyOf", fmt.Sprint(i)), level))
	}
	for i, b := range s.OneOf {
		out.AnyOf = append(out.AnyOf, c.schema(b, llm.Pointer(path, "oneOf", fmt.Sprint(i)), level))
	}
	if path == "" && len(out.AnyOf) > 0 {
		c.problem(path, "strict mode does not accept anyOf at the root")
	}
	if s.ItemsArray != nil {
		c.problem(llm.Pointer(path, "items"), "a tuple (items as a list) is not supported in strict mode")
	} else if llm.HasType(s, "array") || s.Items != nil {
		if s.Items == nil {
			c.problem(path, "the array does not say what its items are; strict mode needs items")
		} else {
			out.Items = c.schema(s.Items, llm.Pointer(path, "items"), level)
		}
	}
	if llm.HasType(s, "object") || s.Properties != nil {
		c.object(s, out, path, level)
	}
	return out
}

func (c *strictConv) object(s, out *jsonschema.Schema, path string, level int) {
	if level > MaxNesting {
		c.problem(path, fmt.Sprintf("objects nest %d levels deep here; strict mode allows at most %d", level, MaxNesting))
	}
	switch {
	case !llm.IsTrue(s.AdditionalProperties) && !llm.IsFalse(s.AdditionalProperties):
		c.problem(llm.Pointer(path, "additionalProperties"), "a map (an object with additionalProperties) cannot be expressed in strict mode, where every property must be named")
	case len(s.Properties) == 0 && path == "" && s.AdditionalProperties == nil:
		// {"type":"object"} as the parameters is how tools say they take
		// none (MCP servers write it so): closed, it says the same.
	case len(s.Properties) == 0 && !llm.IsFalse(s.AdditionalProperties):
		c.problem(path, "a free-form object (no properties, additional ones allowed) cannot be expressed in strict mode, where every property must be named")
	}
	if out.Type == "" && out.Types == nil {
		out.Type = "object"
	}
	names := llm.PropertyNames(s)
	out.Properties = make(map[string]*jsonschema.Schema, len(names))
	out.PropertyOrder = names
	out.Required = names
	out.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	for _, name := range names {
		c.props++
		c.strLen += len(name)
		p := c.schema(s.Properties[name], llm.Pointer(path, "properties", name), level+1)
		if !slices.Contains(s.Required, name) {
			p = nullable(p)
		}
		out.Properties[name] = p
	}
}

// ref converts a reference: kept when it stands alone, replaced by its
// target with the siblings applied otherwise.
func (c *strictConv) ref(s *jsonschema.Schema, path string, level int) *jsonschema.Schema {
	target, ok := llm.ResolveRef(c.root, s.Ref)
	if !ok {
		c.problem(path, fmt.Sprintf("reference %q cannot be resolved; only #, #/$defs/... and #/definitions/... are", s.Ref))
		return &jsonschema.Schema{}
	}
	if kw := llm.Keywords(s); len(kw) == 1 {
		return &jsonschema.Schema{Ref: strings.Replace(s.Ref, "#/definitions/", "#/$defs/", 1)}
	}
	if slices.Contains(c.inlining, s.Ref) {
		// A cycle: strict mode takes a recursive reference when it stands
		// alone, so it stays one; only its annotations are not repeated.
		return &jsonschema.Schema{Ref: strings.Replace(s.Ref, "#/definitions/", "#/$defs/", 1)}
	}
	c.inlining = append(c.inlining, s.Ref)
	defer func() { c.inlining = c.inlining[:len(c.inlining)-1] }()
	merged := *target
	src, dst := reflect.ValueOf(s).Elem(), reflect.ValueOf(&merged).Elem()
	for i := range src.NumField() {
		if name := src.Type().Field(i).Name; name != "Ref" && name != "Defs" && name != "Definitions" && !src.Field(i).IsZero() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	if s.Description == "" {
		merged.Description = target.Description
	}
	return c.schema(&merged, path, level)
}

func (c *strictConv) countEnum(s *jsonschema.Schema, path string) {
	c.enums += len(s.Enum)
	total := 0
	for _, v := range s.Enum {
		if str, ok := v.(string); ok {
			total += len(str)
		}
	}
	c.strLen += total
	if s.Const != nil {
		if str, ok := (*s.Const).(string); ok {
			c.strLen += len(str)
		}
	}
	if len(s.Enum) > LargeEnum && total > MaxEnumStringLength {
		c.problem(path, fmt.Sprintf("the enum has %d values of %d characters in all; strict mode allows at most %d characters for more than %d values", len(s.Enum), total, MaxEnumStringLength, LargeEnum))
	}
}

// nullable makes s also accept null.
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	types := llm.Types(s)
	switch {
	case slices.Contains(types, "null"):
		return s
	case len(s.AnyOf) > 0:
		for _, b := range s.AnyOf {
			if slices.Equal(llm.Types(b), []string{"null"}) {
				return s
			}
		}
		s.AnyOf = append(s.AnyOf, &jsonschema.Schema{Type: "null"})
		return s
	case len(types) == 0 || s.Const != nil:
		// The annotations go on the union, where a model reads them.
		w := &jsonschema.Schema{Title: s.Title, Description: s.Description, AnyOf: []*jsonschema.Schema{s, {Type: "null"}}}
		s.Title, s.Description = "", ""
		return w
	}
	s.Types = append(append([]string(nil), types...), "null")
	s.Type = ""
	if s.Enum != nil && !slices.Contains(s.Enum, nil) {
		s.Enum = append(append([]any(nil), s.Enum...), nil)
	}
	return s
}
