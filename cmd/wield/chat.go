package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
	"github.com/wieldhq/wield/toolfile"
)

func (a *app) chatCommand() *cobra.Command {
	var model, agentFile, system, apiKeyEnv, conv string
	var noFC bool
	var maxSteps int
	cmd := &cobra.Command{
		Use:   "chat --model URL/NAME [--agent FILE]",
		Short: "Talk to a model that uses the tools, from the terminal",
		Long: `Run an agent loop against any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama,
llama.cpp, LM Studio): each line of stdin is a user message; the model's calls
run through the engine (and are recorded), and its answer is printed.

--model is the endpoint and the model name: http://localhost:11434/v1/qwen2.5:7b
(the name is what follows /v1/, or else the last path segment). The API key is
read from the variable --api-key-env names (OPENAI_API_KEY by default).

--agent names an agent file (tools, tool_sets, output_strategy); without one the
agent has every tool. Models without function calling get the tools in the
prompt (the XML call format, docs/call-formats.md) when the agent's output_strategy allows the fallback,
or always with --no-function-calling.

Each call the model makes shows once on stderr, in either mode: → the tool and
its arguments as it starts, ← its outcome. Exit code 0 when every line got an
answer, 1 when one did not (the model could not be reached, the step limit ran
out): stderr names those lines.`,
		Example: `  wield chat --model http://127.0.0.1:11434/v1/qwen2.5:7b --agent agents/helper.yaml`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			base, name, err := splitModel(model)
			if err != nil {
				return err
			}
			client, err := openai.NewClient(openai.ClientOptions{Model: name, BaseURL: base, APIKey: os.Getenv(apiKeyEnv), NoFunctionCalling: noFC})
			if err != nil {
				return usagef("%v", err)
			}
			// stdin is the conversation: a confirm call is announced with
			// how to decide it from another terminal, never asked here.
			a.askApprovals(false)
			return a.withStore(cmd.Context(), func(store wield.Storage) error {
				reg, eng, err := a.setup(store)
				if err != nil {
					return err
				}
				defer eng.Close(context.WithoutCancel(cmd.Context()))
				ag := &agent.Agent{Name: "chat", Instructions: system, Model: client}
				names := []string{}
				for _, t := range reg.List(wield.Query{}) {
					names = append(names, t.Name)
				}
				if agentFile != "" {
					l := toolfile.Loader{Builtins: toolfile.HandlersOf(builtin.Defaults()...), Kinds: a.fileKinds(), MCPServerURLs: a.mcpServerURLs()}
					set, err := l.LoadDirs(cmd.Context(), agentFile)
					if err != nil {
						return fmt.Errorf("agent %s:\n%w", agentFile, err)
					}
					if len(set.Agents) != 1 {
						return usagef("agent %s: the file holds %d agents; name a file with exactly one", agentFile, len(set.Agents))
					}
					af := set.Agents[0]
					ag.Name = af.Name
					ag.Strategy = llm.OutputStrategy(af.OutputStrategy)
					names = af.Toolkit()
				}
				kit, err := reg.CreateToolkit(ag.Name, names...)
				if errors.Is(err, wield.ErrNotFound) && agentFile != "" {
					return fmt.Errorf("agent %s (%s): %w: load the tool files that define them with --tools DIR", ag.Name, agentFile, err)
				}
				if err != nil {
					return fmt.Errorf("agent %s: %w", ag.Name, err)
				}
				ag.Toolkit = kit
				// Each call shows once, in either strategy: → as it starts
				// (a confirm tool may wait for its approval), ← with its result.
				loop := agent.NewLoop(eng, &agent.LoopOptions{MaxSteps: maxSteps, OnCall: func(_ string, c llm.ToolCall, r *wield.Result) {
					if r == nil {
						fmt.Fprintf(a.stderr, "→ %s %s\n", safetext.Line(c.Name), safetext.Line(string(c.Arguments)))
						return
					}
					status := "ok"
					if !r.OK {
						status = string(r.ErrorType) + ": " + r.Error
					}
					fmt.Fprintf(a.stderr, "← %s %s\n", safetext.Line(c.Name), safetext.Line(status))
				}})
				if conv == "" {
					conv = "chat_" + wield.NewID()
				}
				fmt.Fprintf(a.stderr, "conversation %s (wield calls --conversation %s)\n", conv, conv)
				var history []llm.Message
				var failed []string
				in := bufio.NewScanner(a.stdin)
				in.Buffer(make([]byte, 64<<10), 4<<20)
				for n := 1; in.Scan(); n++ {
					line := strings.TrimSpace(in.Text())
					if line == "" {
						continue
					}
					history = append(history, llm.Message{Role: llm.RoleUser, Content: line})
					out, err := loop.Run(cmd.Context(), ag, conv, history)
					if out != nil {
						history = out.Messages
					}
					if err != nil {
						failed = append(failed, fmt.Sprint(n))
						fmt.Fprintf(a.stderr, "wield: line %d: %s\n", n, safetext.Line(err.Error()))
						continue
					}
					fmt.Fprintln(a.stdout, out.Answer)
				}
				if err := in.Err(); err != nil {
					return err
				}
				if len(failed) > 0 {
					// A script piping lines in learns that some got no answer,
					// and which.
					fmt.Fprintf(a.stderr, "wield: no answer to line %s\n", strings.Join(failed, ", "))
					return exitError{1}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "endpoint and model: URL/NAME, e.g. http://127.0.0.1:8000/v1/my-model (required)")
	cmd.Flags().StringVar(&agentFile, "agent", "", "an agent file: its tools, tool_sets and output_strategy")
	cmd.Flags().StringVar(&system, "system", "", "the system prompt")
	cmd.Flags().StringVar(&apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable that holds the API key")
	cmd.Flags().BoolVar(&noFC, "no-function-calling", false, "the model has no native function calling: describe tools in the prompt")
	cmd.Flags().IntVar(&maxSteps, "max-steps", 10, "model turns per message at most")
	cmd.Flags().StringVar(&conv, "conversation", "", "the conversation the calls are recorded under (default: a new chat_ID, printed on stderr)")
	_ = cmd.MarkFlagRequired("model")
	return cmd
}

// splitModel splits URL/NAME into the API base and the model name.
func splitModel(s string) (base, name string, err error) {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return "", "", usagef("--model %q: want URL/NAME, such as http://127.0.0.1:11434/v1/qwen2.5:7b", s)
	}
	if i := strings.Index(s, "/v1/"); i >= 0 {
		base, name = s[:i+3], s[i+4:]
	} else if i := strings.LastIndex(s, "/"); i > len("https://") {
		base, name = s[:i], s[i+1:]
	}
	if name == "" || base == "" {
		return "", "", usagef("--model %q: no model name after the URL", s)
	}
	return base, name, nil
}
