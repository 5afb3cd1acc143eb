package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/policy"
)

// policies loads the Cedar policy files (*.cedar) of the tool folders, or
// returns nil when there are none (the tools' own permissions decide, as
// without policies). serve with reload configured watches them like the
// tool files: a file that does not parse is logged and published as a
// load_error event with its file:line:col, and the policies in force stay.
func (a *app) policies(reg *wield.Registry) (wield.Policy, error) {
	mode := policy.Enforce
	if a.cfg != nil {
		m, err := policy.ParseMode(a.cfg.PolicyMode)
		if err != nil {
			return nil, err
		}
		mode = m
	}
	set, err := policy.Load(mode, a.tools...)
	if err != nil {
		return nil, fmt.Errorf("load policies: %w", err)
	}
	if len(set.Files()) == 0 {
		return nil, nil
	}
	if c := a.cfg; a.serving && c != nil && (c.Reload.Watch || c.Reload.Interval > 0) {
		log := slog.New(slog.NewTextHandler(a.stderr, nil))
		stop, err := set.Watch(c.Reload.Interval, func(err error) {
			if err != nil {
				log.Error("policy files not reloaded: the last good policies stay in force", "err", err)
				src := "policies"
				var fe *policy.FileError
				if errors.As(err, &fe) {
					src = fe.File
				}
				reg.Bus().Publish(wield.Event{Type: wield.EventLoadError, Source: src, Message: "policies not reloaded, the last good ones stay in force: " + err.Error()})
				return
			}
			log.Info("policies reloaded", "policies", set.Len(), "files", len(set.Files()))
			reg.Bus().Publish(wield.Event{Type: wield.EventReloadCompleted, Source: "policies", Message: fmt.Sprintf("%d policies from %d files", set.Len(), len(set.Files()))})
		})
		if err != nil {
			return nil, fmt.Errorf("watch policies: %w", err)
		}
		a.closers = append(a.closers, func() error { stop(); return nil })
	}
	return set, nil
}

func (a *app) policyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Explain the Cedar policies' decisions",
		Long: `Cedar policy files (*.cedar) in the tool folders decide every call before its
permission: see README's "Policies" and docs/configuration.md.`,
	}
	cmd.AddCommand(a.policyCheckCommand(), a.policySchemaCommand())
	return cmd
}

func (a *app) policySchemaCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the Cedar schema every policy is checked against",
		Long: `Print wield's entity model as a Cedar schema: the principals (Key, User, Agent,
Anonymous), the action call, the resource Tool with its attributes and its
toolsets, and the context. A policy file whose policy names anything else is
refused when it loads, with its file and line (on reload the last good set
stays). The arguments (context.args) differ per tool and are not checked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(a.stdout, policy.Schema)
			return err
		},
	}
}

func (a *app) policyCheckCommand() *cobra.Command {
	var key, tool, args, agent, user, conversation string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check --tool NAME [--key ID] [--args JSON]",
		Short: "Say whether the policies let a caller call a tool, and why",
		Long: `Decide one call as the server would, without running it: allow or deny, the
policies that decided (their @id, else FILE:LINE), the policies that could not
be evaluated, and the tool's own permission, which applies after an allow.
The principal is Key::"ID" with --key, else User::"ID" with --user, else
Agent::"ID" with --agent. Without --args, the decision is whether lists show
the tool. Exit code 0 for allow, 1 for deny.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tool == "" {
				return usagef("policy check: name the tool with --tool")
			}
			reg, eng, err := a.setup(nil)
			if err != nil {
				return err
			}
			defer eng.Close(context.WithoutCancel(cmd.Context()))
			t, ok := reg.Tool(tool)
			if !ok {
				return usagef("policy check: no tool %q", tool)
			}
			ctx := cmd.Context()
			if key != "" {
				ctx = wield.WithRequester(ctx, "key:"+key)
			}
			caller := wield.Caller{ID: agent, UserID: user, ConversationID: conversation}
			var raw json.RawMessage
			if args != "" {
				if !json.Valid([]byte(args)) || !strings.HasPrefix(strings.TrimSpace(args), "{") {
					return usagef("policy check: --args is not a JSON object: %s", safetext.Line(args))
				}
				raw = json.RawMessage(args)
				// The arguments as the call would have them: coerced, defaults filled.
				if d, err := eng.DryRun(ctx, wield.Call{Tool: tool, Arguments: raw, Caller: caller}); err == nil && d.Arguments != nil {
					raw = d.Arguments
				}
			}
			p := eng.Policy()
			if p == nil {
				fmt.Fprintln(a.stdout, "allow: no policy files (*.cedar) in the tool folders; the tool's own permission decides:", t.EffectivePermission())
				return nil
			}
			d := p.Decide(ctx, wield.NewPolicyRequest(ctx, reg, t, caller, raw))
			if asJSON {
				if err := a.printJSON(d); err != nil {
					return err
				}
			} else {
				writeDecision(a, t, d)
			}
			if !d.Allow {
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the API key's ID the call is made with (principal Key::\"ID\")")
	cmd.Flags().StringVar(&tool, "tool", "", "the tool called")
	cmd.Flags().StringVar(&args, "args", "", "the call's arguments, a JSON object (context.args); none asks whether lists show the tool")
	cmd.Flags().StringVar(&agent, "agent", "", "the caller's ID (context.agent; principal Agent::\"ID\" without --key and --user)")
	cmd.Flags().StringVar(&user, "user", "", "the caller's user ID (context.user; principal User::\"ID\" without --key)")
	cmd.Flags().StringVar(&conversation, "conversation", "", "the conversation ID (context.conversation)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the decision as JSON")
	return cmd
}

// writeDecision explains d for a person; every text from the files goes
// through safetext.
func writeDecision(a *app, t *wield.Tool, d wield.PolicyDecision) {
	w := a.stdout
	switch {
	case d.Monitor:
		fmt.Fprintln(w, "allow (monitor mode): the policies would deny this call; it runs and its record says would_deny")
	case d.Allow:
		fmt.Fprintln(w, "allow")
	default:
		fmt.Fprintln(w, "deny")
	}
	switch {
	case len(d.Policies) > 0 && d.Allow && !d.Monitor:
		fmt.Fprintln(w, "permitted by:", safetext.Line(strings.Join(d.Policies, ", ")))
	case len(d.Policies) > 0:
		fmt.Fprintln(w, "forbidden by:", safetext.Line(strings.Join(d.Policies, ", ")))
	default:
		fmt.Fprintln(w, "no policy permits it (with policy files, a call needs a permit and no forbid)")
	}
	for _, e := range d.Errors {
		fmt.Fprintln(w, "not evaluated (skipped):", safetext.Line(e))
	}
	if d.Allow {
		fmt.Fprintf(w, "then the tool's own permission: %s\n", t.EffectivePermission())
	}
}
