package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/openai"
)

// ExportFormats are the formats of GET /v1/tools?format= and of
// `wield list --format`, in the order they are listed to people: the
// provider dialects and MCP, whose documents are JSON lists of tools, then
// the prompts for models without function calling, which are text.
var ExportFormats = []string{"openai", "openai-strict", "responses", "responses-strict", "anthropic", "anthropic-strict", "gemini", "gemini-json-schema", "mcp", "xml", "json-prompt"}

// exportDialects are the formats of ExportFormats that are tool lists.
var exportDialects = map[string]llm.Dialect{
	"openai":             openai.Chat,
	"openai-strict":      openai.ChatStrict,
	"responses":          openai.Responses,
	"responses-strict":   openai.ResponsesStrict,
	"anthropic":          anthropic.Dialect,
	"anthropic-strict":   anthropic.Strict,
	"gemini":             gemini.Dialect,
	"gemini-json-schema": gemini.JSONSchema,
	"mcp":                llm.MCP,
}

// exportAliases are other names of formats: the names of the dialects as
// problems and `wield validate --dialect` give them. They are taken but not
// listed.
var exportAliases = map[string]string{
	"openai-responses":        "responses",
	"openai-responses-strict": "responses-strict",
}

// exportPrompts are the formats of ExportFormats that are prompts.
var exportPrompts = map[string]func([]*wield.Tool) string{
	"xml":         llm.XMLInstructions,
	"json-prompt": llm.JSONInstructions,
}

// Export is one export document: what GET /v1/tools?format= answers and
// `wield list --format` prints, byte for byte, so that a person wiring wield
// into an agent by hand can take either.
type Export struct {
	// Format is the format asked for, one of [ExportFormats].
	Format string
	// ContentType is the document's media type: application/json for a
	// tool list, text/plain for a prompt.
	ContentType string
	// Body is the document, ending with a newline: for a provider or MCP
	// the JSON array to put as the "tools" of its request (Gemini's holds
	// one tool of functionDeclarations); for xml and json-prompt the text
	// a model is given. Text for a model is never HTML-escaped: <, > and &
	// are written as they are.
	Body []byte
	// Problems are the tools the dialect left out and why (what the
	// provider would refuse). They are warnings: the document stands
	// without those tools. The API sends each as a [ProblemHeader].
	Problems []llm.Problem
}

// ProblemHeader is the response header of GET /v1/tools?format= that
// carries one of the export's problems as a JSON object (tool, dialect,
// path, message), repeated once per problem, so that the body stays the
// document itself.
const ProblemHeader = "Wield-Problem"

const textType = "text/plain; charset=utf-8"

// CheckExportFormat returns nil when format is one of [ExportFormats] (or
// another name of one, such as openai-responses), else a [*ChoiceError]
// listing them.
func CheckExportFormat(format string) error {
	if alias, ok := exportAliases[format]; ok {
		format = alias
	}
	if _, ok := exportDialects[format]; ok {
		return nil
	}
	if _, ok := exportPrompts[format]; ok {
		return nil
	}
	return &ChoiceError{Kind: "format", Name: format, Choices: ExportFormats}
}

// ExportOptions change an export document. The zero value is the plain
// export.
type ExportOptions struct {
	// Deferred writes the document for the provider's own tool search
	// ([llm.ExportDeferred]): its search tool first, then the tools marked
	// "defer_loading": true but those of Load. Only the formats whose
	// provider searches tools take it (anthropic, anthropic-strict,
	// responses, responses-strict); the others answer
	// [llm.ErrNoDeferredLoading].
	Deferred bool
	// Load names the tools sent loaded in a deferred document, those the
	// model needs from its first turn. A name that is not among the
	// exported tools is an error: a typo would otherwise defer the tool
	// it meant.
	Load []string
	// Namespaces groups the deferred tools of each namespace in the
	// Responses API's namespaces ([llm.ExportDeferredIn]); with another
	// format it is an error wrapping [llm.ErrNoNamespaces]. Without
	// Deferred it is an [*OptionError].
	Namespaces []llm.Namespace
}

// ExportTools writes tools, in order, in format. An unknown format is a
// [*ChoiceError] listing [ExportFormats].
func ExportTools(format string, tools []*wield.Tool) (*Export, error) {
	return ExportToolsWith(format, tools, ExportOptions{})
}

// ExportToolsWith is [ExportTools] with options. Deferred loading asked of
// a format without it is an error wrapping [llm.ErrNoDeferredLoading];
// Load without Deferred, or naming a tool not in tools, is an
// [*OptionError].
func ExportToolsWith(format string, tools []*wield.Tool, opts ExportOptions) (*Export, error) {
	if err := CheckExportFormat(format); err != nil {
		return nil, err
	}
	name := format
	if alias, ok := exportAliases[format]; ok {
		name = alias
	}
	if len(opts.Load) > 0 && !opts.Deferred {
		return nil, &OptionError{Message: "load names the tools a deferred export keeps loaded: ask for deferred too"}
	}
	if opts.Namespaces != nil && !opts.Deferred {
		return nil, &OptionError{Message: "namespaces group the tools of a deferred export: ask for deferred too"}
	}
	for _, n := range opts.Load {
		if !slices.ContainsFunc(tools, func(t *wield.Tool) bool { return t != nil && t.Name == n }) {
			return nil, &OptionError{Message: fmt.Sprintf("load: no tool %q among those exported", n)}
		}
	}
	if prompt, ok := exportPrompts[name]; ok {
		if opts.Deferred {
			return nil, fmt.Errorf("%w: %s is a prompt (deferred loading is for anthropic, anthropic-strict, responses and responses-strict)", llm.ErrNoDeferredLoading, format)
		}
		return &Export{Format: format, ContentType: textType, Body: []byte(prompt(tools))}, nil
	}
	if opts.Deferred {
		// Refused here, in the names a user gives: llm's own words name its
		// dialects (openai-responses), which no list of formats shows.
		if !slices.Contains(deferredFormats, name) {
			return nil, &formatError{err: llm.ErrNoDeferredLoading, msg: fmt.Sprintf("format %q has no deferred loading of tools (its provider has no tool search of its own): use %s", format, strings.Join(deferredFormats, ", "))}
		}
		if opts.Namespaces != nil && !slices.Contains(namespaceFormats, name) {
			return nil, &formatError{err: llm.ErrNoNamespaces, msg: fmt.Sprintf("format %q has no namespaces of tools: namespaces are the Responses API's, use %s", format, strings.Join(namespaceFormats, " or "))}
		}
		vs, ps, err := llm.ExportDeferredIn(exportDialects[name], tools, func(t *wield.Tool) bool { return slices.Contains(opts.Load, t.Name) }, opts.Namespaces)
		if err != nil {
			return nil, err
		}
		return exportDocument(format, vs, ps)
	}
	vs, ps := llm.Export(exportDialects[name], tools)
	if (name == "gemini" || name == "gemini-json-schema") && len(vs) > 0 {
		// Gemini's request takes its functions in one tool.
		decls := make([]gemini.FunctionDeclaration, len(vs))
		for i, v := range vs {
			decls[i] = v.(gemini.FunctionDeclaration)
		}
		vs = []any{gemini.Tool{FunctionDeclarations: decls}}
	}
	return exportDocument(format, vs, ps)
}

// exportDocument is the JSON document of exported values.
func exportDocument(format string, vs []any, ps []llm.Problem) (*Export, error) {
	body, err := llm.JSON(vs, "  ")
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", format, err)
	}
	return &Export{Format: format, ContentType: "application/json", Body: append(body, '\n'), Problems: ps}, nil
}

// deferredFormats are the formats whose provider runs a tool search of its
// own, and so take deferred loading; namespaceFormats those that also
// group deferred tools in namespaces.
var (
	deferredFormats  = []string{"anthropic", "anthropic-strict", "responses", "responses-strict"}
	namespaceFormats = []string{"responses", "responses-strict"}
)

// formatError is an option the format asked lacks, said in the names of
// the formats; it wraps llm's error for it.
type formatError struct {
	err error
	msg string
}

func (e *formatError) Error() string { return e.msg }
func (e *formatError) Unwrap() error { return e.err }

// OptionError is an export option that cannot apply: the client's mistake.
type OptionError struct{ Message string }

func (e *OptionError) Error() string { return e.Message }

// ToolSelection chooses tools from a registry, for GET /v1/tools and
// `wield list`; empty fields do not filter, and a tool must pass every
// filter that is set.
type ToolSelection struct {
	Category wield.Category
	// Tags keeps the tools with any of them.
	Tags []string
	// Toolset keeps the tools of a toolset.
	Toolset string
	// Agent keeps the tools of an agent's toolkit: its tools and the tools
	// of its toolsets.
	Agent string
}

// SelectTools returns the tools of reg that sel chooses, in the registry's
// order. An unknown toolset or agent is a [*ChoiceError] listing those
// there are; agents names the agents known to the caller (those of the
// tool files), which the registry cannot list.
func SelectTools(reg *wield.Registry, sel ToolSelection, agents []string) ([]*wield.Tool, error) {
	if sel.Toolset != "" {
		if _, ok := reg.Toolset(sel.Toolset); !ok {
			var names []string
			for _, ts := range reg.Toolsets() {
				names = append(names, ts.Name)
			}
			return nil, &ChoiceError{Kind: "toolset", Name: sel.Toolset, Choices: names}
		}
	}
	var k *wield.Toolkit
	if sel.Agent != "" {
		var ok bool
		if k, ok = reg.Toolkit(sel.Agent); !ok {
			return nil, &ChoiceError{Kind: "agent", Name: sel.Agent, Choices: agents}
		}
	}
	tools := reg.List(wield.Query{Category: sel.Category, Tags: sel.Tags, Toolset: sel.Toolset})
	if k != nil {
		tools = slices.DeleteFunc(tools, func(t *wield.Tool) bool { return !k.Has(t.Name) })
	}
	return tools, nil
}

// ChoiceError is a name that is not one of the choices: an export format,
// a toolset or an agent. Its message lists the choices.
type ChoiceError struct {
	// Kind is what was named: "format", "toolset" or "agent".
	Kind    string
	Name    string
	Choices []string
}

func (e *ChoiceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown %s %q: ", e.Kind, e.Name)
	if len(e.Choices) == 0 {
		fmt.Fprintf(&b, "there are no %ss", e.Kind)
		return b.String()
	}
	choices := slices.Clone(e.Choices)
	if e.Kind != "format" {
		slices.Sort(choices) // formats keep their order, the others are found faster sorted
	}
	fmt.Fprintf(&b, "the %ss are %s", e.Kind, strings.Join(choices, ", "))
	return b.String()
}

// writeExport answers with an export: its body as it is, its problems in
// headers.
func writeExport(w http.ResponseWriter, x *Export) {
	h := w.Header()
	h.Set("Content-Type", x.ContentType)
	h["X-Content-Type-Options"] = nosniff
	for _, p := range x.Problems {
		b, err := json.Marshal(p)
		if err != nil {
			continue // a Problem is strings only: this cannot happen
		}
		h.Add(ProblemHeader, string(b))
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(x.Body)
}

// exportProblems reads the problems of an export's answer.
func exportProblems(h http.Header) ([]llm.Problem, error) {
	var out []llm.Problem
	for _, v := range h.Values(ProblemHeader) {
		var p llm.Problem
		if err := json.Unmarshal([]byte(v), &p); err != nil {
			return nil, fmt.Errorf("read %s header: %w", ProblemHeader, err)
		}
		out = append(out, p)
	}
	return out, nil
}
