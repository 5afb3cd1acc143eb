package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
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
			if q.Limit < 0 || q.Limit > 1000 {
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
					enc := json.NewEncoder(a.stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(page)
				}
				if len(page.Records) == 0 {
					fmt.Fprintln(a.stdout, "no calls match")
					return nil
				}
				w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "TIME\tCALL ID\tTOOL\tRESULT\tDURATION\tCONVERSATION")
				for _, r := range page.Records {
					status := "ok"
					if !r.Result.OK {
						status = string(r.Result.ErrorType)
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.QueuedAt.Local().Format("2006-01-02 15:04:05"), r.Call.ID, r.Call.Tool,
						status, r.Result.Duration.Round(time.Microsecond), r.Call.Caller.ConversationID)
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
	f.StringVar(&q.Status, "status", "", "only ok or error calls")
	f.StringVar(&since, "since", "", "only calls since a duration ago (1h) or a time (RFC 3339)")
	f.IntVar(&q.Limit, "limit", 20, "how many calls (1 to 1000)")
	f.StringVar(&q.Cursor, "cursor", "", "continue after a previous page")
	f.BoolVar(&asJSON, "json", false, "print the records as JSON")
	return cmd
}

func (a *app) statsCommand() *cobra.Command {
	var conversation string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Statistics of recorded calls, or the summary of one conversation",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withRecords(cmd.Context(), func(s records) error {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if conversation != "" {
					sum, err := s.Summary(cmd.Context(), conversation)
					if err != nil {
						return err
					}
					if asJSON {
						return enc.Encode(sum)
					}
					fmt.Fprintf(a.stdout, "conversation %s: %d calls, %d ok, %d failed (%.1f%% success)\n",
						conversation, sum.TotalCalls, sum.SuccessfulCalls, sum.FailedCalls, sum.SuccessRate)
					for _, tool := range sortedKeys(sum.ToolUsage) {
						fmt.Fprintf(a.stdout, "  %-24s %d\n", tool, sum.ToolUsage[tool])
					}
					return nil
				}
				st, err := s.Statistics(cmd.Context(), wield.StatsQuery{})
				if err != nil {
					return err
				}
				if asJSON {
					return enc.Encode(st)
				}
				w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "TOOL\tCALLS\tFAILED\tSUCCESS\tP50\tP95\tMAX\t")
				row := func(name string, l wield.LatencyStats) {
					fmt.Fprintf(w, "%s\t%d\t%d\t%.1f%%\t%s\t%s\t%s\t\n", name, l.Count, l.Failures, l.SuccessRate,
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
	cmd.Flags().StringVar(&conversation, "conversation", "", "summarise one conversation (seed 004's summary)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
