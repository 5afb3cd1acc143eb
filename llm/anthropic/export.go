// Package anthropic presents wield tools to Anthropic's Claude models: the
// "tools" of the Messages API. It builds plain values with the field names
// of Anthropic's API reference; no SDK is needed to marshal them.
// [Client], an [llm.Model] on the Messages API, speaks the same wire format
// over net/http: Anthropic's SDK made 11.8 MB of a 127.6 MB wield binary.
package anthropic

import (
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// Tool is one entry of the "tools" of a Messages request. The input schema
// is JSON Schema, sent as it is ($ref, $defs, additionalProperties and
// oneOf below the top level included: the Messages API takes them), but
// for the rules the API enforces at the top: an object, and no oneOf,
// anyOf or allOf there.
type Tool struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	InputSchema *jsonschema.Schema `json:"input_schema"`
}

// Dialect is the Anthropic dialect. Its values are [Tool]s.
var Dialect llm.Dialect = dialect{}

type dialect struct{}

func (dialect) Name() string { return "anthropic" }

// nameRule is the Messages API's rule for tool names.
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
	if len(ps) > 0 {
		return nil, ps
	}
	return Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}, nil
}

// Tools exports tools for the Messages API, typed; see [llm.Export].
func Tools(tools []*wield.Tool) ([]Tool, []llm.Problem) {
	return llm.ExportAs[Tool](Dialect, tools)
}
