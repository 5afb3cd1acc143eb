package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/toolfile"
)

func (a *app) validateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Check tool files, toolsets and agents",
		Long: `Check tool files, toolsets and agent files (folders are searched recursively) and
print every problem as file:line:col: message. Exit code 1 if there is any problem
(warnings included), 0 otherwise. Without paths, the folders of --tools are checked.
A file named wield.yaml, wield.yml, config.yml or config.yaml is checked as configuration.`,
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
}

// fileKinds are the entry types tool files may use beside builtin and
// command. HTTP tools go through the SSRF guard: every internal address is
// refused unless the configuration's http_allow lets it through.
func (a *app) fileKinds() map[string]toolfile.Kind {
	guard := &httptool.Guard{}
	if a.cfg != nil {
		guard = a.cfg.Guard()
	}
	return map[string]toolfile.Kind{"http": toolfile.HTTPKind(guard)}
}

// isConfigFile tells configuration from tool files by name.
func isConfigFile(path string) bool {
	switch filepath.Base(path) {
	case "wield.yaml", "wield.yml", "config.yml", "config.yaml":
		return true
	}
	return false
}
