package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/internal/safetext"
)

// parseSince reads --since: a duration back from now (1h, 30m) or a time
// (RFC 3339).
func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, usagef("--since %s is negative", s)
		}
		return time.Now().Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("--since %q is neither a duration (1h, 30m) nor a time (2026-11-21T10:00:00Z)", s)
}

func (a *app) callsCommand() *cobra.Command {
	var q wield.CallQuery
	var since string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "calls",
		Short: "List recorded calls, newest first",
		Example: `  wield calls --conversation c1
  wield calls --tool calculator --status error --since 1h --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch q.Status {
			case "", "ok", "error":
			default:
				return usagef("--status %q: use ok or error", q.Status)
			}
			if q.Limit < 1 || q.Limit > 1000 {
				return usagef("--limit %d: use 1 to 1000", q.Limit)
			}
			t, err := parseSince(since)
			if err != nil {
				return err
			}
			q.Since = t
			return a.withRecords(cmd.Context(), func(s records) error {
				page, err := s.Calls(cmd.Context(), q)
				if err != nil {
					return err
				}
				if asJSON {
					return a.printJSON(page)
				}
				if len(page.Records) == 0 {
					fmt.Fprintln(a.stdout, "no calls match")
					return nil
				}
				w := newTable(a.stdout)
				fmt.Fprintln(w, "TIME\tCALL ID\tTOOL\tRESULT\tDURATION\tCONVERSATION")
				for _, r := range page.Records {
					status := "ok"
					if !r.Result.OK {
						status = string(r.Result.ErrorType)
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.QueuedAt.Local().Format("2006-01-02 15:04:05"), safetext.Line(r.Call.ID), safetext.Line(r.Call.Tool),
						status, r.Result.Duration.Round(time.Microsecond), safetext.Line(r.Call.Caller.ConversationID))
				}
				if err := w.Flush(); err != nil {
					return err
				}
				if page.Next != "" {
					fmt.Fprintf(a.stdout, "(more: --cursor %s)\n", page.Next)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.ConversationID, "conversation", "", "only calls of this conversation")
	f.StringVar(&q.Tool, "tool", "", "only calls of this tool")
	f.StringVar(&q.CallerID, "caller", "", "only calls of this caller (a sub-agent, or a program's call ID: its inner calls)")
	f.StringVar(&q.Status, "status", "", "only ok or error calls")
	f.StringVar(&since, "since", "", "only calls since a duration ago (1h) or a time (RFC 3339)")
	f.IntVar(&q.Limit, "limit", 20, "how many calls (1 to 1000)")
	f.StringVar(&q.Cursor, "cursor", "", "continue after a previous page")
	f.BoolVar(&asJSON, "json", false, "print the records as JSON")
	return cmd
}

func (a *app) statsCommand() *cobra.Command {
	var conversation, caller string
	var asJSON, brief bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Statistics of recorded calls, or the summary of one conversation or one caller (a sub-agent)",
		Long: `Statistics of recorded calls: counts, success rates and latencies per tool.

With --conversation, the summary of one conversation's calls. With --caller,
the execution summary of one caller's calls (a sub-agent's: the calls whose
caller.id is ID), read from the records as GET /v1/callers/{id}/summary
answers it: its newest 1000 calls, oldest first, with --conversation keeping
one conversation's; --brief prints the totals only.`,
		Example: `  wield stats
  wield stats --conversation conv_001 --json
  wield stats --caller tool_sub_agent_001
  wield stats --caller tool_sub_agent_001 --brief --json --server http://127.0.0.1:7420`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if brief && caller == "" {
				return usagef("--brief goes with --caller ID")
			}
			if caller != "" {
				return a.callerStats(cmd.Context(), caller, conversation, brief, asJSON)
			}
			return a.withRecords(cmd.Context(), func(s records) error {
				if conversation != "" {
					sum, err := s.Summary(cmd.Context(), conversation)
					if err != nil {
						return err
					}
					if asJSON {
						return a.printJSON(sum)
					}
					if sum.TotalCalls == 0 {
						fmt.Fprintf(a.stdout, "conversation %s: no calls recorded\n", safetext.Line(conversation))
						return nil
					}
					fmt.Fprintf(a.stdout, "conversation %s: %d calls, %d ok, %d failed (%.1f%% success)\n",
						safetext.Line(conversation), sum.TotalCalls, sum.SuccessfulCalls, sum.FailedCalls, sum.SuccessRate)
					for _, tool := range sortedKeys(sum.ToolUsage) {
						fmt.Fprintf(a.stdout, "  %-24s %d\n", safetext.Line(tool), sum.ToolUsage[tool])
					}
					return nil
				}
				st, err := s.Statistics(cmd.Context(), wield.StatsQuery{})
				if err != nil {
					return err
				}
				if asJSON {
					return a.printJSON(st)
				}
				w := newTable(a.stdout)
				fmt.Fprintln(w, "TOOL\tCALLS\tFAILED\tSUCCESS\tP50\tP95\tMAX")
				row := func(name string, l wield.LatencyStats) {
					fmt.Fprintf(w, "%s\t%d\t%d\t%.1f%%\t%s\t%s\t%s\n", safetext.Line(name), l.Count, l.Failures, l.SuccessRate,
						l.P50.Round(time.Microsecond), l.P95.Round(time.Microsecond), l.Max.Round(time.Microsecond))
				}
				for _, tool := range sortedKeys(st.Tools) {
					row(tool, st.Tools[tool])
				}
				row("(all)", st.Overall)
				return w.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&conversation, "conversation", "", "summarise one conversation (with --caller: keep that conversation's calls)")
	cmd.Flags().StringVar(&caller, "caller", "", "the execution summary of one caller's calls (a sub-agent's ID)")
	cmd.Flags().BoolVar(&brief, "brief", false, "with --caller: the totals only")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// callerStats prints the execution summary of a caller's recorded calls,
// from --server's GET /v1/callers/{id}/summary or from the local store with
// the same agent.RecordedSummary, so both print the same.
func (a *app) callerStats(ctx context.Context, caller, conversation string, brief, asJSON bool) error {
	var sum agent.ExecutionSummary
	if c := a.client(); c != nil {
		s, err := c.CallerSummary(ctx, caller, conversation)
		if err != nil {
			return err
		}
		sum = *s
	} else if err := a.withStore(ctx, func(st wield.Storage) error {
		var err error
		sum, err = agent.RecordedSummary(ctx, st, agent.SummaryQuery{CallerID: caller, ConversationID: conversation})
		return err
	}); err != nil {
		return err
	}
	if asJSON {
		if brief {
			return a.printJSON(sum.Brief())
		}
		return a.printJSON(sum)
	}
	who := "caller " + caller
	if sum.ParentAgentID != "" {
		who += " (parent " + sum.ParentAgentID + ")"
	}
	if sum.TotalCalls == 0 {
		fmt.Fprintf(a.stdout, "%s: no calls recorded\n", safetext.Line(who))
		return nil
	}
	if brief {
		b := sum.Brief()
		errs := "no errors"
		if b.HasErrors {
			errs = "some failed"
		}
		fmt.Fprintf(a.stdout, "%s: %d calls (%.1f%% success), %s\n", safetext.Line(who), b.TotalCalls, b.SuccessRate, errs)
	} else {
		fmt.Fprintf(a.stdout, "%s: %d calls, %d ok, %d failed (%.1f%% success)\n",
			safetext.Line(who), sum.TotalCalls, sum.SuccessfulCalls, sum.FailedCalls, sum.SuccessRate)
	}
	for _, tool := range sortedKeys(sum.ToolUsage) {
		fmt.Fprintf(a.stdout, "  %-24s %d\n", safetext.Line(tool), sum.ToolUsage[tool])
	}
	if sum.Truncated {
		fmt.Fprintf(a.stdout, "(the newest %d calls; older ones are left out)\n", agent.MaxSummaryRecords)
	}
	if brief || len(sum.CallDetails) == 0 {
		return nil
	}
	fmt.Fprintln(a.stdout, "calls, oldest first:")
	w := newTable(a.stdout)
	fmt.Fprintln(w, "  CALL ID\tTOOL\tRESULT\tDURATION")
	for _, d := range sum.CallDetails {
		status := "ok"
		if !d.OK {
			status = string(d.ErrorType)
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%.3fms\n", safetext.Line(d.CallID), safetext.Line(d.Tool), status, d.DurationMS)
	}
	return w.Flush()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
