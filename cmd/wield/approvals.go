package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/internal/safetext"
)

func (a *app) approvalsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List and decide the calls that wait for a person's approval",
		Long: `List and decide the calls that wait for a person's approval: those of the
running server named by --server (through its REST API, deciding as its
--key), else those in the store of --db, where a server sharing the store
sees the decision and runs (or refuses) the call.`,
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
			return a.withApprovals(cmd.Context(), func(s approvalSource) error {
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
				tw := newTable(a.stdout)
				fmt.Fprintln(tw, "ID\tTOOL\tSTATUS\tCREATED\tEXPIRES\tARGUMENTS")
				for _, ap := range list {
					args := safetext.Clip(string(ap.Arguments), 60)
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
			return a.withApprovals(cmd.Context(), func(s approvalSource) error {
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
				got, err := s.Decide(cmd.Context(), id, d, wield.Decision{Approved: approve, By: by, Reason: reason, Note: note})
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

// approvalSource is where `wield approvals` reads and decides: the REST
// API of --server, or the inbox of the store of --db.
type approvalSource interface {
	Approvals(ctx context.Context, status wield.ApprovalStatus) ([]*wield.Approval, error)
	Approval(ctx context.Context, id string) (*wield.Approval, error)
	Decide(ctx context.Context, id, digest string, d wield.Decision) (*wield.Approval, error)
}

// withApprovals runs fn with the approvals of --server, else of --db.
func (a *app) withApprovals(ctx context.Context, fn func(approvalSource) error) error {
	if c := a.client(); c != nil {
		return fn(remoteApprovals{c})
	}
	return a.withStore(ctx, func(s wield.Storage) error {
		// The inbox listens for decisions on a store that notifies
		// (PostgreSQL holds a connection for it): closed before the store
		// is, or closing the store waits for it.
		inbox := approval.New(s, nil)
		defer inbox.Close()
		return fn(localApprovals{s, inbox})
	})
}

type localApprovals struct {
	s     wield.Storage
	inbox *approval.Inbox
}

func (l localApprovals) Approvals(ctx context.Context, st wield.ApprovalStatus) ([]*wield.Approval, error) {
	return l.s.Approvals(ctx, st)
}

func (l localApprovals) Approval(ctx context.Context, id string) (*wield.Approval, error) {
	return l.s.Approval(ctx, id)
}

func (l localApprovals) Decide(ctx context.Context, id, digest string, d wield.Decision) (*wield.Approval, error) {
	return l.inbox.Decide(ctx, id, digest, d)
}

// remoteApprovals decides through the server's API, as its key: the server
// records who decided, so By is not sent (the server refuses it); the note
// and reason are.
type remoteApprovals struct{ c *httpapi.Client }

func (r remoteApprovals) Approvals(ctx context.Context, st wield.ApprovalStatus) ([]*wield.Approval, error) {
	status := string(st)
	if status == "" {
		status = "all"
	}
	list, err := r.c.Approvals(ctx, status)
	return list, remoteApprovalError(err)
}

func (r remoteApprovals) Approval(ctx context.Context, id string) (*wield.Approval, error) {
	ap, err := r.c.Approval(ctx, id)
	return ap, remoteApprovalError(err)
}

func (r remoteApprovals) Decide(ctx context.Context, id, digest string, d wield.Decision) (*wield.Approval, error) {
	ap, err := r.c.Decide(ctx, id, d.Approved, httpapi.DecisionRequest{Digest: digest, Reason: d.Reason, Note: d.Note})
	return ap, remoteApprovalError(err)
}

// remoteApprovalError gives the API's answers the errors the local store
// gives, so that both read the same to the user.
func remoteApprovalError(err error) error {
	var apiErr *httpapi.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	switch apiErr.Code {
	case httpapi.CodeNotFound:
		return fmt.Errorf("%w: %w", wield.ErrNotFound, err)
	case httpapi.CodeAlreadyDecided:
		return fmt.Errorf("%w: %w", wield.ErrAlreadyDecided, err)
	case httpapi.CodeDigestMismatch:
		return fmt.Errorf("%w: %w", wield.ErrDigestMismatch, err)
	}
	return err
}
