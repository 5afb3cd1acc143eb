package main

import (
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/internal/safetext"
)

func (a *app) approvalsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List and decide the calls that wait for a person's approval",
		Long: `List and decide the calls that wait for a person's approval, in the store of
--db. A server sharing the store sees the decision and runs (or refuses) the
call.`,
	}
	var status string
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List approvals (pending by default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var st wield.ApprovalStatus
			switch status {
			case "pending", "approved", "denied", "expired":
				st = wield.ApprovalStatus(status)
			case "all":
			default:
				return usagef("--status %q: use pending, approved, denied, expired or all", status)
			}
			return a.withStore(cmd.Context(), func(s wield.Storage) error {
				list, err := s.Approvals(cmd.Context(), st)
				if err != nil {
					return err
				}
				if asJSON {
					if list == nil {
						list = []*wield.Approval{}
					}
					return a.printJSON(list)
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tTOOL\tSTATUS\tCREATED\tEXPIRES\tARGUMENTS")
				for _, ap := range list {
					args := string(ap.Arguments)
					if len(args) > 60 {
						args = args[:60] + "…"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", safetext.Line(ap.ID), safetext.Line(ap.Tool), ap.Status,
						ap.CreatedAt.Local().Format(time.DateTime), ap.ExpiresAt.Local().Format(time.DateTime), safetext.Line(args))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().StringVar(&status, "status", "pending", "pending, approved, denied, expired or all")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list, a.decideCommand(true), a.decideCommand(false))
	return cmd
}

// decideCommand is `wield approvals approve ID` or `... deny ID`.
func (a *app) decideCommand(approve bool) *cobra.Command {
	verb, past := "deny", "denied"
	if approve {
		verb, past = "approve", "approved"
	}
	var digest, note, reason string
	cmd := &cobra.Command{
		Use:   verb + " ID",
		Short: map[bool]string{true: "Approve a pending call", false: "Deny a pending call"}[approve],
		Long: `The decision is bound to the digest of the arguments: with --digest, it is
refused unless the pending call's arguments are those; without, the digest of
the arguments shown by 'wield approvals list' is used.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			// Whoever can open the store decides as the user they are;
			// what they say of themselves is a note.
			by := "cli:" + os.Getenv("USER")
			return a.withStore(cmd.Context(), func(s wield.Storage) error {
				ap, err := s.Approval(cmd.Context(), id)
				if errors.Is(err, wield.ErrNotFound) {
					return usagef("no approval %s", id)
				}
				if err != nil {
					return err
				}
				d := digest
				if d == "" {
					d = ap.Digest
				}
				// The inbox listens for decisions on a store that notifies
				// (PostgreSQL holds a connection for it): closed before the
				// store is, or closing the store waits for it.
				inbox := approval.New(s, nil)
				defer inbox.Close()
				got, err := inbox.Decide(cmd.Context(), id, d, wield.Decision{Approved: approve, By: by, Reason: reason, Note: note})
				switch {
				case errors.Is(err, wield.ErrAlreadyDecided):
					return fmt.Errorf("approval %s is no longer pending (%s)", id, ap.Status)
				case errors.Is(err, wield.ErrDigestMismatch):
					return fmt.Errorf("approval %s is for other arguments than --digest %s", id, digest)
				case err != nil:
					return err
				}
				fmt.Fprintf(a.stdout, "%s %s: %s %s\n", past, safetext.Line(got.ID), safetext.Line(got.Tool), safetext.Line(string(got.Arguments)))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&digest, "digest", "", "the digest of the arguments decided on")
	cmd.Flags().StringVar(&note, "note", "", "free text kept with the decision (who decides is recorded as cli:$USER)")
	cmd.Flags().StringVar(&reason, "reason", "", "why")
	return cmd
}
