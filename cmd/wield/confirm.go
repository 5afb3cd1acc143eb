package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
)

// askApprovals makes the approvals of this command's confirm calls visible
// where it runs, instead of a silent wait until the call's timeout. When
// ask is true and stdin and stderr are terminals, the person is asked
// (the tool, its arguments, [y/N]) and the answer is the durable decision,
// the same as `wield approvals approve ID`, made by $USER. Otherwise stderr
// names the pending approval and the command that decides it, from
// another terminal. Set before setup, which wraps the engine's approver.
//
// The wrapper keeps what the engine asks of the inbox it wraps: a
// decision is claimed before the call acts on it (so a `wield serve`
// sharing the store does not run the approved call a second time), and a
// call whose caller leaves (Ctrl-C) is parked with its approval pending,
// not recorded as finished.
func (a *app) askApprovals(ask bool) {
	a.wrapApprover = func(inner wield.Approver) wield.Approver {
		t := &tellingApprover{a: a, ask: ask, inner: inner}
		if c, ok := inner.(wield.ApprovalClaimer); ok {
			return &claimingTellingApprover{tellingApprover: t, claimer: c}
		}
		return t
	}
}

// tellingApprover is inner, telling or asking the person at this terminal
// once a request is pending.
type tellingApprover struct {
	a     *app
	ask   bool
	inner wield.Approver
}

func (t *tellingApprover) Approve(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
	then := req.Pending
	req.Pending = func() {
		if then != nil {
			then()
		}
		if t.ask && t.a.terminal() {
			go t.a.askApproval(ctx, req)
			return
		}
		t.a.tellApproval(req)
	}
	return t.inner.Approve(ctx, req)
}

// NotifiesPending is inner's: the engine announces a request once it is
// stored when inner says so.
func (t *tellingApprover) NotifiesPending() bool {
	pn, ok := t.inner.(wield.PendingNotifier)
	return ok && pn.NotifiesPending()
}

// claimingTellingApprover is a tellingApprover over a durable inbox, whose
// claims it passes on.
type claimingTellingApprover struct {
	*tellingApprover
	claimer wield.ApprovalClaimer
}

func (t *claimingTellingApprover) ClaimApproval(ctx context.Context, id string) error {
	return t.claimer.ClaimApproval(ctx, id)
}

// terminal reports whether stdin and stderr are both terminals.
func (a *app) terminal() bool {
	for _, f := range []any{a.stdin, a.stderr} {
		f, ok := f.(*os.File)
		if !ok {
			return false
		}
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			return false
		}
	}
	return true
}

// tellApproval says on stderr that an approval is pending, under which ID,
// and how to give it.
func (a *app) tellApproval(req *wield.ApprovalRequest) {
	flags := ""
	if a.config != "" {
		flags += " --config " + shellWord(a.config)
	}
	if a.db != "" {
		flags += " --db " + shellWord(a.db)
	}
	fmt.Fprintf(a.stderr, "approval %s pending: %s %s\n", req.ID, safetext.Line(req.Tool), safetext.Line(string(req.Arguments)))
	fmt.Fprintf(a.stderr, "  approve: wield%s approvals approve %s\n  deny:    wield%s approvals deny %s\n", flags, req.ID, flags, req.ID)
	if !req.ExpiresAt.IsZero() {
		fmt.Fprintf(a.stderr, "  waiting until %s\n", req.ExpiresAt.Local().Format("15:04:05"))
	}
}

// askApproval asks on the terminal and records the answer as the decision.
// A decision made elsewhere first (another terminal, the console) wins, and
// the answer is then ignored.
func (a *app) askApproval(ctx context.Context, req *wield.ApprovalRequest) {
	a.asking.Store(true)
	fmt.Fprintf(a.stderr, "\r\033[Kapproval %s: %s %s\nrun it? [y/N] ", req.ID, safetext.Line(req.Tool), safetext.Line(string(req.Arguments)))
	answer, err := bufio.NewReader(a.stdin).ReadString('\n')
	a.asking.Store(false)
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	answer = strings.ToLower(strings.TrimSpace(answer))
	d := wield.Decision{Approved: answer == "y" || answer == "yes", By: os.Getenv("USER"), Reason: "answered at the terminal"}
	if d.By == "" {
		d.By = "local user"
	}
	if a.inbox == nil || ctx.Err() != nil {
		return
	}
	if _, err := a.inbox.Decide(context.WithoutCancel(ctx), req.ID, req.Digest, d); err != nil && !errors.Is(err, wield.ErrAlreadyDecided) {
		a.warnf("wield: record the decision: %v", err)
	}
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
