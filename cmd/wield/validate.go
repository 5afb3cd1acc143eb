package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/openai"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/toolfile"
)

func (a *app) validateCommand() *cobra.Command {
	var dialects []string
	cmd := &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Check tool files, toolsets and agents",
		Long: `Check tool files, toolsets and agent files (folders are searched recursively) and
print every problem as file:line:col: message. Exit code 1 if there is any problem
(warnings included), 0 otherwise. Without paths, the folders of --tools are checked.
A file named wield.yaml, wield.yml, config.yml or config.yaml is checked as configuration.

The tools are also exported to each model dialect of --dialect, and what a
dialect cannot express (a name it refuses, a schema keyword it lacks whose loss
would change the tool's meaning, a published limit) is listed as a warning at
the tool's line: that tool would be left out of that dialect's tool list.`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			if len(paths) == 0 {
				paths = a.tools
			}
			if len(paths) == 0 {
				return usagef("validate: name the files or folders to check (or give --tools)")
			}
			l := toolfile.Loader{Builtins: toolfile.HandlersOf(builtin.Defaults()...), Kinds: a.fileKinds()}
			var problems []toolfile.Problem
			var toolPaths []string
			for _, p := range paths {
				if !isConfigFile(p) {
					toolPaths = append(toolPaths, p)
					continue
				}
				if _, err := toolfile.LoadConfig(p); err != nil {
					var ps toolfile.Problems
					if !errors.As(err, &ps) {
						return err
					}
					problems = append(problems, ps...)
				}
			}
			if len(toolPaths) > 0 {
				problems = append(problems, l.Lint(toolPaths...)...)
				ps, err := dialectProblems(cmd.Context(), &l, toolPaths, dialects)
				if err != nil {
					return err
				}
				problems = append(problems, ps...)
			}
			for _, p := range problems {
				kind := ""
				if p.Warning {
					kind = "warning: "
				}
				fmt.Fprintf(a.stdout, "%s:%d:%d: %s%s\n", p.File, p.Line, p.Col, kind, p.Message)
			}
			if len(problems) > 0 {
				fmt.Fprintf(a.stderr, "%d problem(s)\n", len(problems))
				return exitError{1}
			}
			fmt.Fprintln(a.stdout, "ok")
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&dialects, "dialect", []string{"openai", "anthropic", "gemini", "mcp"},
		"model dialects to check the tools against: "+strings.Join(slices.Sorted(maps.Keys(dialectsByName)), ", "))
	return cmd
}

// dialectsByName are the dialects --dialect names.
var dialectsByName = map[string]llm.Dialect{
	"openai":                  openai.Chat,
	"openai-strict":           openai.ChatStrict,
	"openai-responses":        openai.Responses,
	"openai-responses-strict": openai.ResponsesStrict,
	"anthropic":               anthropic.Dialect,
	"gemini":                  gemini.Dialect,
	"mcp":                     llm.MCP,
}

// dialectProblems exports the tools that load to each dialect and returns
// what a dialect refused, as warnings at the tool's definition.
func dialectProblems(ctx context.Context, l *toolfile.Loader, paths, names []string) ([]toolfile.Problem, error) {
	var ds []llm.Dialect
	for _, n := range names {
		d, ok := dialectsByName[n]
		if !ok {
			return nil, usagef("validate: unknown --dialect %q: use %s", n, strings.Join(slices.Sorted(maps.Keys(dialectsByName)), ", "))
		}
		ds = append(ds, d)
	}
	set, _ := l.LoadDirs(ctx, paths...) // its problems were listed by Lint
	var out []toolfile.Problem
	for _, d := range ds {
		_, ps := llm.Export(d, set.Tools)
		for _, p := range ps {
			pr := toolfile.Problem{Line: 1, Col: 1, Warning: true, Message: p.String()}
			for i, t := range set.Tools {
				if t.Name == p.Tool {
					pr.File, pr.Line, pr.Col = set.Defs[i].File, set.Defs[i].Line, set.Defs[i].Col
					break
				}
			}
			out = append(out, pr)
		}
	}
	return out, nil
}

// fileKinds are the entry types tool files may use beside builtin and
// command. HTTP tools go through the SSRF guard: every internal address is
// refused unless the configuration's http_allow lets it through.
func (a *app) fileKinds() map[string]toolfile.Kind {
	guard := &httptool.Guard{}
	if a.cfg != nil {
		guard = a.cfg.Guard()
	}
	// mcp entries are checked against the configured servers here; setup
	// replaces this with the importer's kind, which runs them.
	mcpKind := toolfile.KindFunc(func(_ context.Context, def *toolfile.Def) (wield.Handler, error) {
		server, _ := def.Entry.Values["server"].(string)
		if server == "" {
			return nil, errors.New("mcp entry: missing server (one of mcp_servers)")
		}
		if a.cfg != nil {
			for _, s := range a.cfg.MCPServers {
				if s.Name == server {
					return nil, nil
				}
			}
		}
		return nil, fmt.Errorf("mcp entry: MCP server %q is not configured (mcp_servers)", server)
	})
	return map[string]toolfile.Kind{"http": toolfile.HTTPKind(guard), "remote": toolfile.RemoteKind(), "mcp": mcpKind,
		// Tools that return MCP content, and that talk to the MCP client.
		"content": mcpbridge.ContentKind(), "mcp_client": mcpbridge.ClientKind()}
}

// isConfigFile tells configuration from tool files by name.
func isConfigFile(path string) bool {
	switch filepath.Base(path) {
	case "wield.yaml", "wield.yml", "config.yml", "config.yaml":
		return true
	}
	return false
}
