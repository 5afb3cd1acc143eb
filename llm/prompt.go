package llm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// PromptFormat is how a model without native function calling is asked to
// write its calls: the format of the tool list in its system prompt and of
// the results it reads back. The zero value is [PromptXML].
type PromptFormat string

// The prompt formats.
const (
	// PromptXML lists the tools with [XMLInstructions] and answers with
	// [XMLResult]: <tool_call> blocks with CDATA values, the XML call format.
	PromptXML PromptFormat = "xml"
	// PromptJSON lists the tools with [JSONInstructions] and answers with
	// [JSONResult]: {"name": ..., "parameters": {...}} objects, the JSON
	// structured output.
	PromptJSON PromptFormat = "json"
)

// ParsePromptFormat reads a prompt format's name ("xml" or "json"; "" is
// xml). Any other name is an error that lists the valid ones.
func ParsePromptFormat(name string) (PromptFormat, error) {
	switch f := PromptFormat(strings.ToLower(strings.TrimSpace(name))); f {
	case "", PromptXML:
		return PromptXML, nil
	case PromptJSON:
		return PromptJSON, nil
	}
	return "", fmt.Errorf("prompt format %q is not one of xml, json", name)
}

// Instructions is the system prompt's description of tools in format f:
// [XMLInstructions] for xml (and the zero value), [JSONInstructions] for
// json.
func (f PromptFormat) Instructions(tools []*wield.Tool) string {
	if f == PromptJSON {
		return JSONInstructions(tools)
	}
	return XMLInstructions(tools)
}

// Result is a call's result as the model reads it in format f:
// [XMLResult] or [JSONResult].
func (f PromptFormat) Result(r *wield.Result) string {
	if f == PromptJSON {
		return JSONResult(r)
	}
	return XMLResult(r)
}

// XMLInstructions tells a model without native function calling which tools
// it has and how to call them with XML whose values are wrapped in CDATA:
// a "## Available Tools" section with one block per tool, in the exact
// layout of the architecture's tool prompt generator (ToolPromptGenerator),
// then how to write a <tool_call> and the rules for it. Each block reads:
//
//	### web_search
//	Description: Search the web for information
//	Parameters:
//	  - query: string (required) - Search query using keywords.
//	  - count: integer (optional) - Number of results to return (1-50)
//	    Default: 10
//	Example:
//	<tool_call>
//	  <name>web_search</name>
//	  <params>
//	    <query><![CDATA[your_query_here]]></query>
//	    <count><![CDATA[10]]></count>
//	  </params>
//	</tool_call>
//
// The parameters are the top-level properties of the input schema, in
// order. The note "Default: x" that wield's schema inference appends to a
// description is shown on its own line instead, as the generator does.
// Beyond what the generator's parameters can carry, a parameter with an
// enum gets an "Allowed values:" line and an object or array parameter a
// "Schema:" line with its JSON Schema (and the definitions it refers to). The example call
// gives the required parameters and the optional ones that have a default
// or an example; a value is the parameter's default, else its first
// example, else its first allowed value, else "your_<name>_here" for a
// string and a placeholder of its type otherwise. Values that are not
// strings are written as JSON (true, not Python's True), which is what the
// parser reads back.
func XMLInstructions(tools []*wield.Tool) string {
	var b strings.Builder
	b.WriteString("## Available Tools\n\n")
	n := 0
	for _, t := range tools {
		if t == nil || t.InputSchema == nil {
			continue
		}
		if n > 0 {
			b.WriteString("\n")
		}
		n++
		promptXMLTool(&b, t)
	}
	if n == 0 {
		b.WriteString("(no tools are available)\n")
	}
	b.WriteString(promptXMLRules)
	return b.String()
}

const promptXMLRules = `
## How to Call Tools

To call a tool, write a <tool_call> block with the tool's name and its parameters, each value wrapped in CDATA:

<tool_call>
  <name>tool_name</name>
  <params>
    <param_name><![CDATA[value]]></param_name>
  </params>
</tool_call>

Notes:
- Use only the tools listed above, with their exact tool and parameter names.
- Wrap every value in <![CDATA[...]]>, so that <, > and & need no escaping and values may span several lines.
- Give required parameters; leave out optional ones you do not need.
- Write numbers and true/false as they are; write arrays and objects as JSON.
- You may write several <tool_call> blocks in one reply. Each result comes back in a <tool_result> block; wait for it before relying on it.
`

// promptXMLTool writes one tool's block.
func promptXMLTool(b *strings.Builder, t *wield.Tool) {
	root := t.InputSchema
	params := promptParams(root)
	b.WriteString("### ")
	b.WriteString(t.Name)
	b.WriteString("\nDescription: ")
	b.WriteString(t.Description)
	b.WriteString("\nParameters:\n")
	if len(params) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, p := range params {
		b.WriteString("  - ")
		b.WriteString(p.name)
		b.WriteString(": ")
		b.WriteString(p.typ)
		if p.required {
			b.WriteString(" (required)")
		} else {
			b.WriteString(" (optional)")
		}
		if p.desc != "" {
			b.WriteString(" - ")
			b.WriteString(p.desc)
		}
		b.WriteString("\n")
		if p.s.Default != nil {
			b.WriteString("    Default: ")
			b.WriteString(Value(p.s.Default))
			b.WriteString("\n")
		}
		if len(p.s.Enum) > 0 {
			vs := make([]string, len(p.s.Enum))
			for i, v := range p.s.Enum {
				vs[i] = Value(v)
			}
			b.WriteString("    Allowed values: ")
			b.WriteString(strings.Join(vs, ", "))
			b.WriteString("\n")
		}
		if p.typ == "object" || p.typ == "array" {
			if raw, err := JSON(promptWithDefs(root, p.s), ""); err == nil {
				b.WriteString("    Schema: ")
				b.Write(raw)
				b.WriteString("\n")
			}
		}
	}
	b.WriteString("Example:\n<tool_call>\n  <name>")
	b.WriteString(t.Name)
	b.WriteString("</name>\n  <params>\n")
	writeParam := func(name string, v json.RawMessage) {
		b.WriteString("    <")
		b.WriteString(name)
		b.WriteString(">")
		b.WriteString(CDATA(Value(v)))
		b.WriteString("</")
		b.WriteString(name)
		b.WriteString(">\n")
	}
	if names, values, ok := promptExample(t, params); ok {
		for i, n := range names {
			writeParam(n, values[i])
		}
	} else {
		for _, p := range params {
			if p.inExample() {
				writeParam(p.name, promptSample(root, p.s, p.name, 0))
			}
		}
	}
	b.WriteString("  </params>\n</tool_call>\n")
	promptMoreExamples(b, t)
}

// maxPromptExamples is how many of a tool's own examples a prompt shows:
// the first as the example call, the others on one line each.
const maxPromptExamples = 3

// promptExample is the tool's first own example ([wield.Tool.Examples]) as
// parameter names and values, the parameters in the order they are listed
// and any others after them sorted; ok is false when the tool has none.
func promptExample(t *wield.Tool, params []promptParam) (names []string, values []json.RawMessage, ok bool) {
	if len(t.Examples) == 0 {
		return nil, nil, false
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(t.Examples[0], &args) != nil || args == nil {
		return nil, nil, false
	}
	for _, p := range params {
		if v, in := args[p.name]; in {
			names = append(names, p.name)
			values = append(values, v)
			delete(args, p.name)
		}
	}
	rest := make([]string, 0, len(args))
	for n := range args {
		rest = append(rest, n)
	}
	slices.Sort(rest)
	for _, n := range rest {
		names = append(names, n)
		values = append(values, args[n])
	}
	return names, values, true
}

// promptMoreExamples lists the tool's other examples, in the short form of
// their arguments as compact JSON.
func promptMoreExamples(b *strings.Builder, t *wield.Tool) {
	if len(t.Examples) < 2 {
		return
	}
	b.WriteString("More examples (arguments as JSON):\n")
	for _, ex := range t.Examples[1:min(len(t.Examples), maxPromptExamples)] {
		raw, err := JSON(ex, "")
		if err != nil {
			continue
		}
		b.WriteString("  ")
		b.Write(raw)
		b.WriteString("\n")
	}
}

// promptParam is one top-level parameter, with references resolved.
type promptParam struct {
	name     string
	typ      string
	desc     string
	required bool
	s        *jsonschema.Schema
}

// inExample reports whether the parameter appears in example calls: the
// required ones, and the optional ones with a default or an example, as in
// the generator's example where both optional parameters have defaults.
func (p promptParam) inExample() bool {
	return p.required || p.s.Default != nil || len(p.s.Examples) > 0
}

// promptSample is an example value of s as JSON: its default, its first
// example, its first allowed value or its const, else a placeholder of its
// type: "your_<name>_here" for a string (as the generator writes), a sample of
// its format for dates, e-mail addresses and URLs, the minimum or 1 for a
// number, true, one sample item for an array, and the required properties
// for an object.
func promptSample(root, s *jsonschema.Schema, name string, depth int) json.RawMessage {
	budget := 200
	return promptSampleAt(root, s, name, depth, &budget)
}

// promptSampleAt is promptSample with a budget of values, so that a schema
// whose references fan out cannot make an example of any size.
func promptSampleAt(root, s *jsonschema.Schema, name string, depth int, budget *int) json.RawMessage {
	if *budget--; *budget < 0 {
		depth = 99
	}
	s = promptDeref(root, s)
	var v any
	switch {
	case s.Default != nil:
		if json.Unmarshal(s.Default, &v) == nil {
			return promptMust(v)
		}
	case len(s.Examples) > 0:
		return promptMust(s.Examples[0])
	case len(s.Enum) > 0:
		return promptMust(s.Enum[0])
	case s.Const != nil:
		return promptMust(*s.Const)
	}
	typ, _, _ := strings.Cut(promptType(root, s), " | ")
	switch typ {
	case "integer", "number":
		switch {
		case s.Minimum != nil:
			return promptMust(*s.Minimum)
		case typ == "integer":
			return json.RawMessage("1")
		}
		return json.RawMessage("1.5")
	case "boolean":
		return json.RawMessage("true")
	case "array":
		if s.Items == nil || depth > 4 {
			return json.RawMessage("[]")
		}
		return json.RawMessage("[" + string(promptSampleAt(root, s.Items, name, depth+1, budget)) + "]")
	case "object":
		var b strings.Builder
		b.WriteString("{")
		if depth <= 4 {
			for _, n := range PropertyNames(s) {
				if !promptContains(s.Required, n) {
					continue
				}
				if b.Len() > 1 {
					b.WriteString(",")
				}
				b.Write(promptMust(n))
				b.WriteString(":")
				b.Write(promptSampleAt(root, s.Properties[n], n, depth+1, budget))
			}
		}
		b.WriteString("}")
		return json.RawMessage(b.String())
	}
	switch s.Format {
	case "date-time":
		return promptMust("2025-01-02T15:04:05Z")
	case "date":
		return promptMust("2025-01-02")
	case "email":
		return promptMust("name@example.com")
	case "uri", "url":
		return promptMust("https://example.com")
	}
	return promptMust("your_" + name + "_here")
}

func promptMust(v any) json.RawMessage {
	raw, err := JSON(v, "")
	if err != nil {
		return json.RawMessage("null")
	}
	return raw
}

// promptParams lists the top-level properties of an input schema.
func promptParams(root *jsonschema.Schema) []promptParam {
	s := promptDeref(root, root)
	names := PropertyNames(s)
	out := make([]promptParam, 0, len(names))
	for _, name := range names {
		ps := promptDeref(root, s.Properties[name])
		p := promptParam{name: name, typ: promptType(root, ps), s: ps, required: promptContains(s.Required, name)}
		p.desc = ps.Description
		if ps.Default != nil {
			note := "Default: " + Value(ps.Default)
			p.desc = strings.TrimSuffix(strings.TrimSuffix(p.desc, note), ";")
		}
		out = append(out, p)
	}
	return out
}

// promptDeref follows references (a bounded number of times) and keeps the
// referring schema's description when it has one.
func promptDeref(root, s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return &jsonschema.Schema{}
	}
	for range 32 {
		if s.Ref == "" {
			return s
		}
		t, ok := ResolveRef(root, s.Ref)
		if !ok {
			return s
		}
		if s.Description != "" || s.Default != nil {
			c := *t
			if s.Description != "" {
				c.Description = s.Description
			}
			if s.Default != nil {
				c.Default = s.Default
			}
			t = &c
		}
		s = t
	}
	return s
}

// promptType names a parameter's type as the generator does: "string",
// "integer", ...; several as "string | null"; none as "any".
func promptType(root, s *jsonschema.Schema) string {
	return promptTypeDepth(root, s, 0)
}

func promptTypeDepth(root, s *jsonschema.Schema, depth int) string {
	types := Types(s)
	if len(types) == 0 {
		var alts []string
		for _, b := range append(append([]*jsonschema.Schema(nil), s.AnyOf...), s.OneOf...) {
			if depth > 8 {
				break
			}
			t := promptTypeDepth(root, promptDeref(root, b), depth+1)
			if t != "null" && !promptContains(alts, t) {
				alts = append(alts, t)
			}
		}
		switch {
		case len(alts) > 0:
			return strings.Join(alts, " | ")
		case s.Properties != nil:
			return "object"
		case s.Const != nil:
			return promptValueType(*s.Const)
		case len(s.Enum) > 0:
			return promptValueType(s.Enum[0])
		}
		return "any"
	}
	var nonNull []string
	for _, t := range types {
		if t != "null" {
			nonNull = append(nonNull, t)
		}
	}
	if len(nonNull) == 1 {
		return nonNull[0]
	}
	return strings.Join(types, " | ")
}

// promptValueType is the JSON type of a value.
func promptValueType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return "any"
}

func promptContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// promptWithDefs returns s with the root's definitions attached when s
// refers to them, so that a parameter's schema can be read on its own.
func promptWithDefs(root, s *jsonschema.Schema) *jsonschema.Schema {
	if len(root.Defs) == 0 && len(root.Definitions) == 0 {
		return s
	}
	raw, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(raw), `"$ref"`) {
		return s
	}
	c := *s
	c.Defs, c.Definitions = root.Defs, root.Definitions
	return &c
}

// CDATA wraps s in a CDATA section, splitting any "]]>" in it across two
// sections so that the text comes back unchanged.
func CDATA(s string) string {
	return "<![CDATA[" + strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>") + "]]>"
}

// JSONInstructions tells a model without native function calling which tools
// it has and how to call them with JSON: the structured-output fallback of
// the architecture's output strategy (fallback_to_structured_output), whose
// call is {"name": ..., "parameters": {...}}. Each tool is listed with its
// description, its input schema and an example call; the parameter values
// of the example are chosen as in [XMLInstructions].
func JSONInstructions(tools []*wield.Tool) string {
	var b strings.Builder
	b.WriteString("## Available Tools\n\n")
	n := 0
	for _, t := range tools {
		if t == nil || t.InputSchema == nil {
			continue
		}
		if n > 0 {
			b.WriteString("\n")
		}
		n++
		b.WriteString("### ")
		b.WriteString(t.Name)
		b.WriteString("\nDescription: ")
		b.WriteString(t.Description)
		b.WriteString("\nParameters (JSON Schema):\n")
		raw, err := JSON(t.InputSchema, "  ")
		if err != nil {
			raw = []byte(`{"type": "object"}`)
		}
		b.Write(raw)
		b.WriteString("\nExample:\n")
		b.WriteString(promptJSONExample(t))
		b.WriteString("\n")
		promptMoreExamples(&b, t)
	}
	if n == 0 {
		b.WriteString("(no tools are available)\n")
	}
	b.WriteString(promptJSONRules)
	return b.String()
}

const promptJSONRules = `
## How to Call Tools

To call a tool, reply with a JSON object in this format:
{
  "name": "tool_name",
  "parameters": {
    "param1": "value1",
    "param2": "value2"
  }
}

Notes:
- Use only the tools listed above, with their exact tool and parameter names.
- The parameters must match the tool's JSON Schema: give required parameters, leave out optional ones you do not need, and use JSON types (numbers, true/false, arrays, objects) as the schema says.
- Write the JSON object alone, with no text around it; to call several tools, write a JSON array of such objects.
- Each result comes back in a later message; wait for it before relying on it.
`

// promptJSONExample is an example call of t, indented as the structured
// output's template.
func promptJSONExample(t *wield.Tool) string {
	var b strings.Builder
	b.WriteString("{\n  \"name\": ")
	b.Write(jsonenc.AppendString(nil, t.Name))
	b.WriteString(",\n  \"parameters\": {")
	n := 0
	writeParam := func(name string, v json.RawMessage) {
		if n++; n > 1 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		b.Write(jsonenc.AppendString(nil, name))
		b.WriteString(": ")
		if raw, err := JSON(v, ""); err == nil {
			b.Write(raw)
		} else {
			b.Write(v)
		}
	}
	params := promptParams(t.InputSchema)
	if names, values, ok := promptExample(t, params); ok {
		for i, name := range names {
			writeParam(name, values[i])
		}
	} else {
		for _, p := range params {
			if p.inExample() {
				writeParam(p.name, promptSample(t.InputSchema, p.s, p.name, 0))
			}
		}
	}
	b.WriteString("\n  }\n}")
	return b.String()
}
