package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/toolfile"
)

// chatStrategy is how `wield chat` offers tools: the agent file's
// output_strategy, --prompt-format over it, and the one line on stderr
// when a model refuses native tools and they go in the prompt instead.
type chatStrategy struct {
	promptFormat string
	format       llm.PromptFormat
}

func (s *chatStrategy) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.promptFormat, "prompt-format", "", "how tools are described in the prompt for a model without native function calling: xml (the XML call format) or json (JSON objects); default the agent's output_strategy prompt_format, else xml")
}

// check reads --prompt-format; a name other than xml or json is a usage
// error.
func (s *chatStrategy) check() error {
	if s.promptFormat == "" {
		return nil
	}
	f, err := llm.ParsePromptFormat(s.promptFormat)
	if err != nil {
		return usagef("--prompt-format: %v", err)
	}
	s.format = f
	return nil
}

// apply gives ag the output strategy of its agent file (nil when there is
// none) with --prompt-format over it. The flag alone keeps the default
// strategy (native function calling, the prompt when the model has none)
// and chooses the prompt's format.
func (s *chatStrategy) apply(ag *agent.Agent, file *toolfile.OutputStrategy) {
	if file != nil {
		ag.Strategy = llm.OutputStrategy{
			FunctionCalling:            file.FunctionCalling,
			FallbackToStructuredOutput: file.FallbackToStructuredOutput,
			PromptFormat:               llm.PromptFormat(file.PromptFormat),
		}
	}
	if s.format == "" {
		return
	}
	ag.Strategy = ag.Strategy.OrDefault()
	ag.Strategy.PromptFormat = s.format
}

// onFallback is the loop's OnFallback: it says once, on stderr, that the
// model refused native tools and what the chat does instead, in the format
// of the agent that fell back (the lead or one of agents, its sub-agents).
func (s *chatStrategy) onFallback(w io.Writer, lead *agent.Agent, agents map[string]*agent.Agent) func(string, error) {
	return func(name string, err error) {
		format := "the XML call format"
		ag := agents[name]
		if name == lead.Name {
			ag = lead
		}
		if ag != nil && ag.Strategy.OrDefault().PromptFormat == llm.PromptJSON {
			format = "JSON"
		}
		fmt.Fprintf(w, "wield: agent %s: the model refused native tools (%s); its tools are described in the prompt (%s) from now on\n",
			safetext.Line(name), safetext.Line(err.Error()), format)
	}
}
