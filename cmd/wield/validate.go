package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
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
	"github.com/wieldhq/wield/policy"
	"github.com/wieldhq/wield/program"
	"github.com/wieldhq/wield/toolfile"
)

func (a *app) validateCommand() *cobra.Command {
	var dialects []string
	cmd := &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Check tool files, toolsets and agents",
		Long: `Check tool files, toolsets and agent files (folders are searched recursively) and
print every problem as file:line:col: message, warnings marked "warning:" and
notes (a file re-declaring a built-in tool) "info:". Exit code 1 if there is an
error, 0 otherwise: warnings and notes do not count; the count on stderr is of
the errors and warnings printed. Without paths, the folders of --tools and of
--config are checked; the --config file's own problems are printed and counted
with the others. A file named wield.yaml, wield.yml, config.yml or config.yaml (without a
name or kind), or any YAML file of configuration keys without a name
(engine.yaml), given or found in a folder, is checked as configuration. Toolsets
and agents may name the built-in tools.

The tools are also exported to the model dialects (openai, anthropic, gemini and
mcp), and what a dialect cannot express (a name it refuses, a schema keyword it
lacks whose loss would change the tool's meaning, a published limit) is listed at
the tool's line: that tool would be left out of that dialect's tool list. It is a
warning, unless --dialect names that dialect: then it is an error.`,
		Annotations: map[string]string{tellsConfigProblems: "yes"},
		RunE: func(cmd *cobra.Command, paths []string) error {
			if len(paths) == 0 {
				paths = a.tools
			}
			if len(paths) == 0 && a.config == "" {
				return usagef("validate: name the files or folders to check (or give --tools or --config)")
			}
			defaults, err := builtin.All(a.builtinOptions(nil))
			if err != nil {
				return fmt.Errorf("built-in tools: %w", err)
			}
			programs, err := a.programsMode()
			if err != nil {
				return err
			}
			l := toolfile.Loader{Builtins: toolfile.HandlersOf(defaults...), Kinds: a.fileKinds(), MCPServerURLs: a.mcpServerURLs(), AgentTools: a.agentTools(),
				// What the program offers beside the files, as setup does.
				Known:        func(name string) bool { return programs != "" && name == program.Name },
				KnownToolset: func(name string) bool { return programs != "" && name == programsToolset }, Off: a.offSetting,
				// Configuration files among the paths are checked as
				// such; --config's own problems are told below.
				CheckConfigs: true, ConfigFile: a.config, DirAt: a.toolDirAt(),
				Importable: func(name string, toolset bool) bool {
					if toolset {
						return programs != "" && name == programsToolset
					}
					return a.importable(name)
				}}
			problems, notes := slices.Clone(a.configProblems), []toolfile.Problem(nil)
			if len(paths) > 0 {
				set, _ := l.LoadDirs(cmd.Context(), paths...) // the error is set.Problems'
				problems, notes = append(problems, set.Problems...), set.Notes
				ps, err := dialectProblems(set, dialects, cmd.Flags().Changed("dialect"))
				if err != nil {
					return err
				}
				problems = append(problems, ps...)
			}
			// Cedar policy files (*.cedar) beside the tool files; a path
			// that cannot be read is the loader's problem, told above.
			var policyPaths []string
			for _, p := range paths {
				if _, err := os.Stat(p); err == nil {
					policyPaths = append(policyPaths, p)
				}
			}
			_, pps, err := policy.Check(policyPaths...)
			if err != nil {
				return err
			}
			for _, p := range pps {
				line, col := max(p.Line, 1), max(p.Col, 1)
				problems = append(problems, toolfile.Problem{File: p.File, Line: line, Col: col, Message: "policy: " + p.Message})
			}
			errs, warnings := writeProblems(a.stdout, problems, notes)
			if errs > 0 {
				fmt.Fprintf(a.stderr, "%s, %s\n", countOf(errs, "error"), countOf(warnings, "warning"))
				return exitError{1}
			}
			if warnings > 0 {
				fmt.Fprintf(a.stderr, "%s\n", countOf(warnings, "warning"))
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
	"anthropic-strict":        anthropic.Strict,
	"gemini":                  gemini.Dialect,
	"gemini-json-schema":      gemini.JSONSchema,
	"mcp":                     llm.MCP,
}

// dialectProblems exports the tools that loaded to each dialect and returns
// what a dialect refused, at the tool's definition: warnings, or errors when
// the user named the dialects (--dialect).
func dialectProblems(set *toolfile.Set, names []string, asked bool) ([]toolfile.Problem, error) {
	var ds []llm.Dialect
	for _, n := range names {
		d, ok := dialectsByName[n]
		if !ok {
			return nil, usagef("validate: unknown --dialect %q: use %s", n, strings.Join(slices.Sorted(maps.Keys(dialectsByName)), ", "))
		}
		ds = append(ds, d)
	}
	// The tools a command would have: the first of a name (the others are
	// shadowed, and said so), not two of a name that no dialect takes.
	var tools []*wield.Tool
	var defs []*toolfile.Def
	for i, t := range set.Tools {
		if !slices.ContainsFunc(tools, func(u *wield.Tool) bool { return u.Name == t.Name }) {
			tools, defs = append(tools, t), append(defs, set.Defs[i])
		}
	}
	var out []toolfile.Problem
	for _, d := range ds {
		_, ps := llm.Export(d, tools)
		for _, p := range ps {
			pr := toolfile.Problem{Line: 1, Col: 1, Warning: !asked, Message: p.String()}
			for i, t := range tools {
				if t.Name == p.Tool {
					pr.File, pr.Line, pr.Col = defs[i].File, defs[i].Line, defs[i].Col
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
// countOf writes n and a noun that takes an s: "1 error", "2 errors".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// importable says whether name may be a tool imported from an enabled MCP
// server of the configuration (server__tool): validate cannot connect to
// know, so a toolset or agent naming one is warned about; any other name no
// one defines stops list, call, serve and mcp, and is an error.
func (a *app) importable(name string) bool {
	if a.cfg == nil {
		return false
	}
	for _, s := range a.cfg.MCPServers {
		if s.Enabled && strings.HasPrefix(name, s.Name+"__") {
			return true
		}
	}
	return false
}

// mcpServerURLs maps the configured MCP servers' URLs to their names, for
// tool files' mcp_server_url; nil without a configuration.
func (a *app) mcpServerURLs() map[string]string {
	if a.cfg == nil {
		return nil
	}
	urls := map[string]string{}
	for _, s := range a.cfg.MCPServers {
		if s.URL != "" {
			urls[strings.TrimSuffix(s.URL, "/")] = s.Name
		}
	}
	return urls
}

func (a *app) fileKinds() map[string]toolfile.Kind {
	guard := &httptool.Guard{}
	var secretNames []string
	if a.cfg != nil {
		guard, secretNames = a.cfg.Guard(), a.cfg.SecretNames
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
	return map[string]toolfile.Kind{"http": toolfile.HTTPKind(guard, secretNames...), "remote": toolfile.RemoteKind(), "mcp": mcpKind,
		// Tools that return MCP content, and that talk to the MCP client.
		"content": mcpbridge.ContentKind(), "mcp_client": mcpbridge.ClientKind()}
}

// tellsConfigProblems annotates a command that tells the --config file's
// problems with its own (see app.configProblems).
const tellsConfigProblems = "tells-config-problems"
