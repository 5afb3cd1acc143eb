package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/toolfile"
)

func (a *app) chatCommand() *cobra.Command {
	var agentFile, system, conv string
	var cm chatModel
	var maxSteps, maxTurns, maxCalls int
	var maxHistory string
	var strat chatStrategy
	cmd := &cobra.Command{
		Use:   "chat --model [URL/]NAME [--provider P] [--agent FILE]",
		Short: "Talk to a model that uses the tools, from the terminal",
		Long: `Run an agent loop against a model: each line of stdin is a user message; the
model's calls run through the engine (and are recorded), and its answer is printed.

--provider is openai (any OpenAI-compatible server: OpenAI, vLLM, Ollama,
llama.cpp, LM Studio), anthropic or gemini. Without it the model decides: a URL
on api.anthropic.com or generativelanguage.googleapis.com, else a name claude-*
or gemini-*, else openai. Each provider reads its SDK's usual variables:

  openai      OPENAI_API_KEY (none for a server of your own), OPENAI_BASE_URL
              (default https://api.openai.com/v1, which needs the key)
  anthropic   ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL
  gemini      GEMINI_API_KEY or GOOGLE_API_KEY (GOOGLE_API_KEY wins, as in
              Google's SDKs), GOOGLE_GEMINI_BASE_URL

--api-key-env names another variable for the key. --model is a name
(gpt-4.1, claude-sonnet-4-5, gemini-2.5-flash) or URL/NAME to name the
endpoint too: http://localhost:11434/v1/qwen2.5:7b (openai: the name is what
follows /v1/, else the last path segment), https://api.anthropic.com/v1/NAME,
https://generativelanguage.googleapis.com/v1beta/models/NAME. --api responses
talks to OpenAI's Responses API (POST /v1/responses) instead of Chat Completions;
--strict sends OpenAI's tools in strict mode (wield list --format openai-strict) and Anthropic's
for strict tool use (anthropic-strict); --json-schema sends Gemini's as JSON Schema
(gemini-json-schema).

Tools go to the provider as ` + "`wield list --format`" + ` exports them; a tool the provider
cannot take (a schema it refuses) is named on stderr and left out of the chat.

--agent names an agent file (tools, tool_sets, output_strategy), or an agent that
the tool files of --tools define; without one the agent has every tool. The
agents of --tools are its sub-agents: a call_subagent hands its instruction to
the named one, which runs on the same model with its own toolkit and output
strategy, and its answer is the call's result. --max-steps bounds the model turns
of each agent, --max-turns those of a whole line, every agent's (a sub-agent
that finds them spent is not asked: its call_subagent fails, saying so, and
the lead may still answer with what it has). --max-calls-per-reply bounds the
calls one reply may have run (64): each call past it is answered "not run",
without running, and stderr says how many.

--max-history bounds the conversation each request sends the model (256KiB by
default, about 64k tokens; 0 for no bound): the oldest turns are left out, and
the chat keeps no more than that in memory, said on stderr for each line that
leaves some out. The system prompt and the latest line's turn (its calls and
their results) are always sent, and a call never goes without its result.

Models without function calling get the tools in the prompt (the XML call
format, docs/call-formats.md) when the agent's output_strategy allows the
fallback, or always with --no-function-calling; --prompt-format json asks for
JSON calls instead.
A server that refuses the tools it is sent (Ollama's "does not support tools",
vLLM without a tool parser) gets them in the prompt from then on, said once on
stderr, unless the agent's output_strategy forbids the fallback.

Each call the model makes shows once on stderr, in either mode: → the tool and
its arguments as it starts, ← its outcome (a sub-agent's calls begin with its
name), each clipped to a line's worth. What the model wrote reaches the
terminal with its control characters and bidi overrides escaped (\x1b,
\u202e), the answer's line breaks and tabs kept. Exit code 0 when every line got an answer, 1 when one did not (the
model could not be reached, the step limit or the line's turns ran out): stderr names those lines.`,
		Example: `  wield chat --model http://127.0.0.1:11434/v1/qwen2.5:7b --agent agents/helper.yaml
  ANTHROPIC_API_KEY=... wield chat --model claude-sonnet-4-5
  GEMINI_API_KEY=... wield chat --model gemini-2.5-flash
  OPENAI_API_KEY=... wield chat --model gpt-4.1 --api responses`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client, dialect, err := cm.newModel(cmd.Context(), a.stderr)
			if err != nil {
				return err
			}
			if err := strat.check(); err != nil {
				return err
			}
			if maxSteps < 1 {
				return usagef("--max-steps %d: give at least 1", maxSteps)
			}
			if maxTurns < 0 {
				return usagef("--max-turns %d: give at least 1, or 0 for --max-steps × 3", maxTurns)
			}
			if maxCalls < 1 {
				return usagef("--max-calls-per-reply %d: give at least 1", maxCalls)
			}
			historyBytes, err := maxHistoryBytes(maxHistory)
			if err != nil {
				return err
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
				// The toolkits of the tool files' agents, taken before the
				// lead's is made: a lead of another's name (chat, without
				// --agent; an agent file's) takes that name in the registry.
				kits := map[string]*wield.Toolkit{}
				for _, doc := range a.agentDocs {
					if kit, ok := reg.Toolkit(doc.Name); ok {
						kits[doc.Name] = kit
					}
				}
				var af *toolfile.Agent
				var kit *wield.Toolkit
				if agentFile != "" {
					if af, err = a.chatAgent(cmd.Context(), agentFile); err != nil {
						return err
					}
					ag.Name = af.Name
					strat.apply(ag, &af.OutputStrategy)
					// A tool the registry does not hold is told where the
					// file names it, once.
					if err := af.CreateToolkit(reg); err != nil {
						var undef *toolfile.UndefinedError
						if errors.As(err, &undef) {
							return loadError{"agent " + af.Name + ": load the tool files that define its tools with --tools DIR", undef.Problems}
						}
						return err
					}
					kit, _ = reg.Toolkit(af.Name)
				} else {
					strat.apply(ag, nil)
					names := []string{}
					for _, t := range reg.List(wield.Query{}) {
						names = append(names, t.Name)
					}
					if kit, err = reg.CreateToolkit(ag.Name, names...); err != nil {
						return fmt.Errorf("agent %s: %w", ag.Name, err)
					}
				}
				if kit, err = offerable(reg, kit, nativeDialect(client, ag.Strategy, dialect), a.stderr); err != nil {
					return fmt.Errorf("agent %s: %w", ag.Name, err)
				}
				ag.Toolkit = kit
				subs, err := a.subagents(reg, kits, ag, af, client, dialect, &strat)
				if err != nil {
					return err
				}
				// Each call shows once, in either strategy: → as it starts
				// (a confirm tool may wait for its approval), ← with its result.
				// A sub-agent's calls are marked with its name.
				loop := agent.NewLoop(eng, &agent.LoopOptions{MaxSteps: maxSteps, MaxTurns: maxTurns, MaxHistory: historyBytes, MaxCallsPerReply: maxCalls, OnCall: func(by string, c llm.ToolCall, r *wield.Result) {
					who := ""
					if by != ag.Name {
						who = shown(by, shownName) + " "
					}
					if r == nil {
						fmt.Fprintf(a.stderr, "%s→ %s %s\n", who, shown(c.Name, shownName), shown(string(c.Arguments), shownText))
						return
					}
					status := "ok"
					if !r.OK {
						status = string(r.ErrorType) + ": " + r.Error
					}
					fmt.Fprintf(a.stderr, "%s← %s %s\n", who, shown(c.Name, shownName), shown(status, shownText))
				}, OnFallback: strat.onFallback(a.stderr, ag, subs), Agents: subs})
				if conv == "" {
					conv = "chat_" + wield.NewID()
				}
				fmt.Fprintf(a.stderr, "conversation %s (wield calls --conversation %s)\n", conv, conv)
				var history []llm.Message
				var failed []string
				// Ctrl-C or SIGTERM while waiting for a line ends the chat as
				// the end of stdin does.
				in := bufio.NewScanner(interruptible(cmd.Context(), a.stdin))
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
						if out.Dropped > 0 {
							fmt.Fprintf(a.stderr, "wield: line %d: the conversation is over --max-history %s: its %d oldest messages are no longer sent to the model\n", n, shown(maxHistory, shownName), out.Dropped)
						}
						if out.Unrun > 0 {
							fmt.Fprintf(a.stderr, "wield: line %d: %d calls were not run, past the %d one reply may ask for (--max-calls-per-reply); the model was told\n", n, out.Unrun, maxCalls)
						}
					}
					if err != nil {
						failed = append(failed, fmt.Sprint(n))
						fmt.Fprintf(a.stderr, "wield: line %d: %s\n", n, shown(err.Error(), shownError))
						continue
					}
					// The model's words, its line breaks (CR LF as LF) and tabs
					// kept: an escape sequence in them (a clear screen, a
					// clipboard write, a bidi override) is shown, not obeyed by
					// the terminal.
					fmt.Fprintln(a.stdout, safetext.Text(strings.ReplaceAll(out.Answer, "\r\n", "\n")))
				}
				if err := in.Err(); err != nil && !errors.Is(err, errInterrupted) {
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
	cmd.Flags().StringVar(&cm.model, "model", "", "the model: NAME, or URL/NAME such as http://127.0.0.1:8000/v1/my-model (required)")
	cmd.Flags().StringVar(&cm.provider, "provider", "", "openai, anthropic or gemini (default: from the model's URL or name, else openai)")
	cmd.Flags().StringVar(&cm.api, "api", apiChat, "OpenAI's API: chat (Chat Completions) or responses")
	cmd.Flags().BoolVar(&cm.strict, "strict", false, "OpenAI's strict mode, Anthropic's strict tool use: schemas rewritten so the model's arguments always match them")
	cmd.Flags().BoolVar(&cm.jsonSchema, "json-schema", false, "Gemini: send the tools' schemas as JSON Schema (parametersJsonSchema), for the models that take it")
	cmd.Flags().StringVar(&agentFile, "agent", "", "an agent file (its tools, tool_sets and output_strategy), or the name of an agent of --tools")
	cmd.Flags().StringVar(&system, "system", "", "the system prompt")
	cmd.Flags().StringVar(&cm.keyEnv, "api-key-env", "", "environment variable that holds the API key (default: the provider's usual ones)")
	cmd.Flags().BoolVar(&cm.noFC, "no-function-calling", false, "the model has no native function calling: describe tools in the prompt")
	cmd.Flags().IntVar(&maxSteps, "max-steps", 10, "model turns per message at most, of each agent (the lead, each sub-agent)")
	cmd.Flags().StringVar(&maxHistory, "max-history", defaultMaxHistory, "the conversation sent to the model at most, in bytes (256KiB, 2MB, 100000; about 4 bytes a token): the oldest turns are left out, the system prompt and the latest line's turn kept; 0 for no bound")
	cmd.Flags().IntVar(&maxCalls, "max-calls-per-reply", agent.DefaultMaxCallsPerReply, "calls one model reply may have run; each one past them is answered \"not run\"")
	cmd.Flags().IntVar(&maxTurns, "max-turns", 0, "model turns per message at most, every agent's together (default --max-steps × 3, the agents of one chain of hand-offs)")
	strat.flags(cmd)
	cmd.Flags().StringVar(&conv, "conversation", "", "the conversation the calls are recorded under (default: a new chat_ID, printed on stderr)")
	return cmd
}

// What a chat shows of a call on stderr: a model's tool name (registered
// names are at most 128 bytes) and its arguments or a result's error, at
// most this many bytes each, so that a reply of 50 MB of arguments, or a
// name of 10 KB, is not a terminal's worth of text.
const (
	shownName = 200
	shownText = 1000
	// shownError bounds a line's error: a provider's message is its own
	// words, of any length (a failed Responses answer's, read from the
	// answer itself).
	shownError = 4000
)

// shown is s as a chat shows it on one line: at most n bytes of it (see
// [safetext.Clip]), its control characters and bidi overrides escaped.
func shown(s string, n int) string { return safetext.Line(safetext.Clip(s, n)) }

// chatAgent is the agent --agent names: the one agent of a file, or,
// when no such file exists, the agent of that name the tool files of
// --tools define.
func (a *app) chatAgent(ctx context.Context, arg string) (*toolfile.Agent, error) {
	if _, err := os.Stat(arg); errors.Is(err, fs.ErrNotExist) {
		for _, doc := range a.agentDocs {
			if doc.Name == arg {
				return doc, nil
			}
		}
		if len(a.agents) == 0 {
			return nil, usagef("--agent %s: no such file, and --tools defines no agents", arg)
		}
		return nil, usagef("--agent %s: no such file, and no agent of --tools has that name (%s)", arg, strings.Join(a.agents, ", "))
	}
	l := toolfile.Loader{Builtins: toolfile.HandlersOf(builtin.Defaults()...), Kinds: a.fileKinds(), MCPServerURLs: a.mcpServerURLs(), AgentTools: a.agentTools()}
	set, err := l.LoadDirs(ctx, arg)
	if err != nil {
		return nil, loadError{"agent " + arg, err}
	}
	if len(set.Agents) != 1 {
		return nil, usagef("agent %s: the file holds %d agents; name a file with exactly one, or one of them by name with --tools", arg, len(set.Agents))
	}
	return set.Agents[0], nil
}

// subagents are the agents a call_subagent of the chat may hand work to:
// every agent of the tool files whose toolkit exists (kits, taken before
// the lead's was made), each on the chat's model with its own toolkit (less
// the tools the provider cannot take) and output strategy (--prompt-format
// over it). The lead is among them when it is one of them (--agent NAME);
// a lead of another's name (chat without --agent, an agent file's) is not
// what that name hands work to: it may have every tool.
func (a *app) subagents(reg *wield.Registry, kits map[string]*wield.Toolkit, lead *agent.Agent, leadDoc *toolfile.Agent, client llm.Model, dialect llm.Dialect, strat *chatStrategy) (map[string]*agent.Agent, error) {
	subs := map[string]*agent.Agent{}
	for _, doc := range a.agentDocs {
		kit, ok := kits[doc.Name]
		if _, taken := subs[doc.Name]; taken || !ok {
			continue
		}
		if doc == leadDoc {
			subs[doc.Name] = lead
			continue
		}
		sa := &agent.Agent{Name: doc.Name, Model: client}
		strat.apply(sa, &doc.OutputStrategy)
		kit, err := offerable(reg, kit, nativeDialect(client, sa.Strategy, dialect), a.stderr)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", doc.Name, err)
		}
		sa.Toolkit = kit
		subs[doc.Name] = sa
	}
	return subs, nil
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
