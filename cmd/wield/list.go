package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/llm"
)

// toolView is a tool as `wield list --json` shows it.
type toolView struct {
	Name         string             `json:"name"`
	Version      string             `json:"version,omitempty"`
	Description  string             `json:"description"`
	Category     wield.Category     `json:"category"`
	Tags         []string           `json:"tags,omitempty"`
	Permission   wield.Permission   `json:"permission"`
	Annotations  wield.Annotations  `json:"annotations"`
	TimeoutMS    int64              `json:"timeout_ms,omitempty"`
	MaxOutput    int                `json:"max_output,omitempty"` // the tool's own output budget, bytes
	Status       wield.Status       `json:"status"`
	Source       string             `json:"source,omitempty"`
	InputSchema  *jsonschema.Schema `json:"input_schema"`
	OutputSchema *jsonschema.Schema `json:"output_schema,omitempty"`
	// Examples and AllowedCallers as GET /v1/tools gives them.
	Examples       []json.RawMessage `json:"examples,omitempty"`
	AllowedCallers []string          `json:"allowed_callers"`
}

func viewOf(t *wield.Tool) toolView {
	st := t.Status
	if st == "" {
		st = wield.StatusActive
	}
	return toolView{
		Name: t.Name, Version: t.Version, Description: t.Description, Category: t.Category, Tags: t.Tags,
		Permission: t.EffectivePermission(), Annotations: t.Annotations, TimeoutMS: t.Timeout.Milliseconds(), MaxOutput: t.MaxOutput,
		Status: st, Source: t.Source, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Examples: t.Examples, AllowedCallers: t.EffectiveCallers(),
	}
}

func (a *app) listCommand() *cobra.Command {
	var asJSON, deferred, namespaces bool
	var category, format, toolset, agent string
	var tags, load []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tools, or export them for a model",
		Long: "List the registered tools, optionally only those of a category, carrying any of the given tags, of a toolset or of an agent's toolkit.\n\n" +
			"With --format, print instead the document GET /v1/tools?format= answers, byte for byte, to wire wield into an agent by hand: " +
			"the tools as a provider's or MCP's JSON (openai, openai-strict, responses, responses-strict, anthropic, anthropic-strict, gemini, gemini-json-schema, mcp), ready to be the request's tools, " +
			"or the prompt for a model without function calling (xml, json-prompt). Tools a provider would refuse are left out, with a warning on stderr. " +
			"--deferred (with anthropic, anthropic-strict, responses or responses-strict) writes the document for the provider's own tool search: its search tool first, every tool marked defer_loading but those --load names; --namespaces (responses) puts each toolset's deferred tools in a namespace. " +
			"--json prints wield's own description of the tools and cannot be combined with --format.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sel := httpapi.ToolSelection{Category: wield.Category(category), Tags: tags, Toolset: toolset, Agent: agent}
			if format == "" && (deferred || len(load) > 0 || namespaces) {
				return usagef("--deferred, --load and --namespaces apply to an export: add --format anthropic, anthropic-strict, responses or responses-strict")
			}
			if format != "" {
				if asJSON {
					return usagef("--json and --format exclude each other: --json prints wield's own description of the tools, --format a document for a model")
				}
				if err := httpapi.CheckExportFormat(format); err != nil {
					if format == "json" {
						err = fmt.Errorf("%w (for wield's own description of the tools, use --json)", err)
					}
					return usageError{err}
				}
				return a.export(cmd.Context(), format, sel, httpapi.ExportOptions{Deferred: deferred, Load: load}, namespaces)
			}
			tools, err := a.selectTools(cmd.Context(), sel)
			if err != nil {
				return err
			}
			a.sayOff(tools, sel)
			if asJSON {
				views := make([]toolView, len(tools))
				for i, t := range tools {
					views[i] = viewOf(t)
				}
				return a.printJSON(views)
			}
			if len(tools) == 0 {
				fmt.Fprintln(a.stdout, "no tools match")
				return nil
			}
			w := newTable(a.stdout)
			fmt.Fprintln(w, "NAME\tCATEGORY\tPERMISSION\tPARAMETERS\tDESCRIPTION")
			for _, t := range tools {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", safetext.Line(t.Name), safetext.Line(string(t.Category)), t.EffectivePermission(), safetext.Line(params(t.InputSchema)), safetext.Line(firstSentence(t.Description)))
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tools with their schemas as JSON (wield's own description; not with --format)")
	cmd.Flags().StringVar(&format, "format", "", "print the tools for a model instead: "+strings.Join(httpapi.ExportFormats, ", "))
	cmd.Flags().StringVar(&category, "category", "", "only tools of this category ("+categories()+")")
	cmd.Flags().StringSliceVar(&tags, "tag", nil, "only tools with any of these tags (repeatable)")
	cmd.Flags().StringVar(&toolset, "toolset", "", "only the tools of this toolset")
	cmd.Flags().StringVar(&agent, "agent", "", "only the tools of this agent's toolkit (its tools and those of its toolsets)")
	cmd.Flags().BoolVar(&deferred, "deferred", false, "with --format: mark the tools defer_loading, behind the provider's tool search")
	cmd.Flags().StringSliceVar(&load, "load", nil, "with --deferred: tools to keep loaded (repeatable)")
	cmd.Flags().BoolVar(&namespaces, "namespaces", false, "with --deferred and responses: each toolset's deferred tools in a namespace")
	return cmd
}

// selectTools returns the tools sel chooses, from --server or the local
// registry. An unknown toolset or agent is a usage error listing those
// there are.
func (a *app) selectTools(ctx context.Context, sel httpapi.ToolSelection) ([]*wield.Tool, error) {
	if c := a.client(); c != nil {
		infos, err := c.Tools(ctx, toolQuery(sel))
		if err != nil {
			return nil, selectionError(err, sel)
		}
		tools := make([]*wield.Tool, len(infos))
		for i, ti := range infos {
			tools[i] = &wield.Tool{Name: ti.Name, Version: ti.Version, Description: ti.Description, Category: ti.Category,
				Tags: ti.Tags, InputSchema: ti.InputSchema, OutputSchema: ti.OutputSchema, Annotations: ti.Annotations,
				Permission: ti.Permission, Timeout: time.Duration(ti.TimeoutMS) * time.Millisecond, Status: ti.Status, Source: ti.Source,
				Examples: ti.Examples, AllowedCallers: ti.AllowedCallers}
		}
		return tools, nil
	}
	reg, eng, err := a.setup(nil)
	if err != nil {
		return nil, err
	}
	tools, err := httpapi.SelectTools(reg, sel, a.agents)
	if err != nil {
		return nil, selectionError(err, sel)
	}
	// What the policies deny this command's caller is not listed, and
	// run_program lists the functions its programs would have.
	return wield.ListFor(ctx, eng.Policy(), reg, wield.Caller{}, agentKit(reg, sel.Agent), tools), nil
}

// export prints the export document of the chosen tools in format, as
// GET /v1/tools?format= answers it (from --server, that answer itself), and
// the tools the format left out as warnings on stderr.
func (a *app) export(ctx context.Context, format string, sel httpapi.ToolSelection, opts httpapi.ExportOptions, namespaces bool) error {
	var x *httpapi.Export
	if c := a.client(); c != nil {
		q := toolQuery(sel)
		q.Deferred, q.Load, q.Namespaces = opts.Deferred, opts.Load, namespaces
		var err error
		if x, err = c.Export(ctx, format, q); err != nil {
			var ae *httpapi.Error
			if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
				return usageError{err}
			}
			return selectionError(err, sel)
		}
	} else {
		reg, eng, err := a.setup(nil)
		if err != nil {
			return err
		}
		tools, err := httpapi.SelectTools(reg, sel, a.agents)
		if err != nil {
			return selectionError(err, sel)
		}
		// What the policies deny this command's caller is not exported,
		// as it is not listed (selectTools).
		tools = wield.ListFor(ctx, eng.Policy(), reg, wield.Caller{}, agentKit(reg, sel.Agent), tools)
		if namespaces {
			opts.Namespaces = llm.NamespacesOf(reg.Toolsets())
		}
		if x, err = httpapi.ExportToolsWith(format, tools, opts); err != nil {
			var oe *httpapi.OptionError
			if errors.As(err, &oe) || errors.Is(err, llm.ErrNoDeferredLoading) || errors.Is(err, llm.ErrNoNamespaces) || errors.Is(err, llm.ErrNamespaceName) {
				return usageError{err}
			}
			return err
		}
	}
	for _, p := range x.Problems {
		fmt.Fprintln(a.stderr, "warning:", safetext.Line(fmt.Sprint(p)))
	}
	_, err := a.stdout.Write(x.Body)
	return err
}

func toolQuery(sel httpapi.ToolSelection) httpapi.ToolQuery {
	return httpapi.ToolQuery{Category: string(sel.Category), Tags: sel.Tags, Toolset: sel.Toolset, Agent: sel.Agent}
}

// selectionError makes a usage error of an unknown toolset or agent, named
// locally or answered by the server (404 to a selection that names one).
func selectionError(err error, sel httpapi.ToolSelection) error {
	var ce *httpapi.ChoiceError
	var ae *httpapi.Error
	switch {
	case errors.As(err, &ce):
		return usageError{err}
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound && (sel.Toolset != "" || sel.Agent != ""):
		return usageError{err}
	}
	return err
}

func categories() string {
	names := make([]string, len(wield.Categories))
	for i, c := range wield.Categories {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// params shows a schema's properties as name, name? (optional).
func params(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	names := s.PropertyOrder
	if len(names) == 0 {
		for n := range s.Properties {
			names = append(names, n)
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if !contains(s.Required, n) {
			out[i] += "?"
		}
	}
	return strings.Join(out, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 80 {
		s = safetext.Clip(s, 79) // 80 columns with the "…"
	}
	return s
}

// agentKit is the toolkit of agent, nil for none ("").
func agentKit(reg *wield.Registry, agent string) *wield.Toolkit {
	if agent == "" {
		return nil
	}
	k, _ := reg.Toolkit(agent)
	return k
}
