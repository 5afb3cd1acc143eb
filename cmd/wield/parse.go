package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/spf13/cobra"
	"github.com/wieldhq/wield/llm"
)

func (a *app) parseCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "parse",
		Short: "Find the tool calls in a model's text (stdin)",
		Long: `Read a model's output on stdin and print the tool calls in it as a JSON array
[{"name","arguments"}], [] when there is none. Formats: ` + formatNames() + `.

Without --tools or --config no schema is used: XML values become booleans,
integers and floats where they look like them, else strings. With them, each
tool's schema decides (a string parameter keeps "007"). Nothing is validated:
that is the engine's job. A tool without parameters may be called with no
arguments at all: it gets {}. Calls written inside reasoning (<think>,
<thinking>, <reasoning>, [THINK], gpt-oss's analysis channel, or before a
lone </think>) are not calls.

A call cut off mid-way, a value whose end cannot be told (markup with no
closing tag, CDATA that never closes), or a call inside reasoning that is
never closed: what was recovered is printed, what was lost is said on
stderr, and the exit code is 1. A value is never given as "" in its place.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !validFormat(format) {
				return usagef("parse: unknown --format %q: use one of %s", format, formatNames())
			}
			text, err := io.ReadAll(io.LimitReader(interruptible(cmd.Context(), a.stdin), 64<<20))
			if err != nil {
				return fmt.Errorf("parse: read stdin: %w", err)
			}
			opts := &llm.ParseOptions{Format: llm.Format(format)}
			if len(a.tools) > 0 || a.cfg != nil {
				reg, _, err := a.setup(nil)
				if err != nil {
					return err
				}
				opts.Schema = func(name string) *jsonschema.Schema {
					if t, ok := reg.Tool(name); ok {
						return t.InputSchema
					}
					return nil
				}
			}
			calls, perr := llm.Parse(string(text), opts)
			var inc *llm.IncompleteError
			if perr != nil && !errors.As(perr, &inc) {
				return perr
			}
			if calls == nil {
				calls = []llm.ParsedCall{}
			}
			if err := a.printJSON(calls); err != nil {
				return err
			}
			if inc != nil {
				fmt.Fprintf(a.stderr, "wield: incomplete: %s\n", inc.Lost)
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "auto", "the format to read: "+formatNames())
	return cmd
}

func validFormat(f string) bool {
	for _, k := range llm.Formats {
		if string(k) == f {
			return true
		}
	}
	return false
}

func formatNames() string {
	names := make([]string, len(llm.Formats))
	for i, f := range llm.Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
