// Package anthropic presents wield tools to Anthropic's Claude models: the
// "tools" of the Messages API. It builds plain values with the field names
// of Anthropic's API reference; no SDK is needed to marshal them.
// [Client], an [llm.Model] on the Messages API, speaks the same wire format
// over net/http: Anthropic's SDK made 11.8 MB of a 127.6 MB wield binary.
package anthropic

import (
	"encoding/json"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// Tool is one entry of the "tools" of a Messages request, with the optional
// fields of a custom tool that wield fills (the tool reference,
// https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-reference).
// The input schema is JSON Schema, sent as it is ($ref, $defs,
// additionalProperties and oneOf below the top level included: the
// Messages API takes them), but for the rules the API enforces at the top:
// an object, and no oneOf, anyOf or allOf there.
type Tool struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	InputSchema *jsonschema.Schema `json:"input_schema"`
	// InputExamples are the tool's [wield.Tool.Examples].
	InputExamples []json.RawMessage `json:"input_examples,omitempty"`
	// AllowedCallers is written only when the tool says who may call it
	// ([wield.Tool].AllowedCallers): "direct", and [ProgramCaller] for a
	// program.
	// Left out, the API's default is direct only, which is what a request
	// without the code execution tool needs.
	AllowedCallers []string `json:"allowed_callers,omitempty"`
	// Strict asks for grammar-constrained sampling of the input; only the
	// [Strict] dialect sets it, on the schemas it can constrain.
	Strict bool `json:"strict,omitempty"`
}

// ProgramCaller is the allowed_callers value by which a tool is callable
// from a program Claude writes in its code execution tool (programmatic
// tool calling, https://platform.claude.com/docs/en/agents-and-tools/tool-use/programmatic-tool-calling):
// the code execution tool's version, which the request must also carry.
// Set it to the version a model needs (code_execution_20250825 for the
// models of 2025) before exporting.
var ProgramCaller = "code_execution_20260120"

// The Anthropic dialects. Their values are [Tool]s.
var (
	// Dialect is the Messages API's tool format.
	Dialect llm.Dialect = dialect{}
	// Strict is Dialect with "strict": true on every tool (strict tool use,
	// https://platform.claude.com/docs/en/agents-and-tools/tool-use/strict-tool-use),
	// the input schema rewritten by [StrictSchema]. A tool whose schema
	// strict mode cannot express is reported and left out rather than sent
	// loose.
	Strict llm.Dialect = dialect{strict: true}
)

type dialect struct{ strict bool }

func (d dialect) Name() string {
	if d.strict {
		return "anthropic-strict"
	}
	return "anthropic"
}

// nameRule is the Messages API's rule for tool names, ^[a-zA-Z0-9_-]{1,64}$
// (the name field of the tool reference above; the length is checked
// apart, see llm.CheckName).
var nameRule = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func (d dialect) ExportTool(t *wield.Tool) (any, []llm.Problem) {
	var ps []llm.Problem
	if p := llm.CheckName(d, t, nameRule, 64, "1-64 letters, digits, _ or -"); p != nil {
		ps = append(ps, *p)
	}
	if !llm.HasType(t.InputSchema, "object") {
		ps = append(ps, llm.Problem{Tool: t.Name, Dialect: d.Name(), Message: `input_schema must be a JSON Schema of type "object"`})
	}
	if s := t.InputSchema; s != nil && (len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0) {
		// The Messages API answers 400 "input_schema does not support
		// oneOf, allOf, or anyOf at the top level", for the whole request.
		ps = append(ps, llm.Problem{Tool: t.Name, Dialect: d.Name(), Message: "input_schema cannot have oneOf, anyOf or allOf at the top level: the Messages API refuses it"})
	}
	schema := t.InputSchema
	if d.strict && len(ps) == 0 {
		schema, ps = strictProblems(d, t)
		if len(ps) == 0 {
			ps = strictExamples(d, t, schema)
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	out := Tool{Name: t.Name, Description: t.Description, InputSchema: schema, InputExamples: t.Examples, Strict: d.strict}
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

// Tools exports tools for the Messages API, typed; see [llm.Export].
func Tools(tools []*wield.Tool) ([]Tool, []llm.Problem) {
	return llm.ExportAs[Tool](Dialect, tools)
}
