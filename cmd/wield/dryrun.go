package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
)

// dryRun prints what call c would do now (the engine's DryRun, of --server
// or of the local engine): a report for a person, or JSON. It exits 1 when
// the call would not run.
func (a *app) dryRun(ctx context.Context, c wield.Call, agent string, asJSON bool) error {
	var d *wield.DryRun
	if cl := a.client(); cl != nil {
		var err error
		d, err = cl.DryRun(ctx, c.Tool, callRequest(c, agent))
		if err != nil {
			return err
		}
	} else {
		err := a.withStore(ctx, func(store wield.Storage) error {
			reg, eng, err := a.setup(store)
			if err != nil {
				return err
			}
			defer eng.Close(context.WithoutCancel(ctx))
			if c.Toolkit, err = agentToolkit(reg, agent); err != nil {
				return err
			}
			d, err = eng.DryRun(ctx, c)
			return err
		})
		if err != nil {
			return err
		}
		if ap := d.Approval; ap != nil && ap.Deciders != "" {
			// As `wield call` without --dry-run asks.
			ap.Deciders = "you, asked on this terminal when there is one; else whoever runs 'wield approvals approve ID'"
		}
	}
	if asJSON {
		if err := a.printJSON(d); err != nil {
			return err
		}
	} else {
		writeDryRun(a.stdout, d)
	}
	if !d.WouldRun && d.Replay == "" {
		return exitError{1}
	}
	return nil
}

// errorLine is an error's type and, when there is one, its message, as a
// dry run's report shows them.
func errorLine(t wield.ErrorType, msg string) string {
	if msg == "" {
		return string(t)
	}
	return string(t) + ": " + safetext.Line(msg)
}

// writeDryRun writes a dry run's report for a person. Every text from the
// call, the tool or the server goes through safetext: no control character
// reaches the terminal.
func writeDryRun(w io.Writer, d *wield.DryRun) {
	// A line ends at its last word: an empty value (or an error without
	// its message) leaves no padding behind.
	line := func(label, format string, args ...any) {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-11s %s", label, fmt.Sprintf(format, args...)), " "))
	}
	tool := safetext.Line(d.Tool)
	switch {
	case d.Replay != "":
		fmt.Fprintf(w, "dry run of %s: would not run; answered from %s (same idempotency key)\n", tool, safetext.Line(d.Replay))
	case d.WouldRun:
		fmt.Fprintf(w, "dry run of %s: would run\n", tool)
	default:
		fmt.Fprintf(w, "dry run of %s: would not run (stopped at %s)\n", tool, d.Stage)
		if len(d.ValidationErrors) == 0 {
			line("error", "%s", errorLine(d.ErrorType, d.Error))
		}
		for i, v := range d.ValidationErrors {
			label := ""
			if i == 0 {
				label = "error"
			}
			line(label, "%s", errorLine(d.ErrorType, v.String()))
		}
	}
	if d.Arguments != nil {
		line("arguments", "%s (coerced, defaults filled)", safetext.Line(string(d.Arguments)))
	}
	if p := d.Policy; p != nil {
		verdict := "allow"
		switch {
		case p.Monitor:
			verdict = "would deny (monitor mode: runs)"
		case !p.Allow:
			verdict = "deny"
		}
		if len(p.Policies) > 0 {
			verdict += ", by " + strings.Join(p.Policies, ", ")
		}
		line("policy", "%s", safetext.Line(verdict))
	}
	if d.Permission != "" {
		line("permission", "%s", d.Permission)
	}
	if ap := d.Approval; ap != nil && ap.Required {
		if ap.Deciders == "" {
			line("approval", "needed, and no approver is configured")
		} else {
			line("approval", "needed, from %s; pending for %s at most", safetext.Line(ap.Deciders), ap.ExpiresAfter)
		}
		if ap.RequestedBy != "" {
			line("", "asked by %s", safetext.Line(ap.RequestedBy))
		}
	} else if d.WouldRun || d.Stage == wield.StageLimiter {
		line("approval", "not needed")
	}
	if l := d.Limit; l != nil {
		when := ""
		if d.Approval != nil && d.Approval.Required {
			when = " (as of now; the limiter comes after the approval)"
		}
		line("limiter", "%s%s", limitLine(l), when)
	}
	if d.Timeout > 0 {
		line("timeout", "%s (%s)", d.Timeout, d.TimeoutFrom)
	}
	if r := d.Retry; r != nil {
		if r.MaxAttempts <= 1 {
			line("retries", "none: %s", r.Why)
		} else {
			line("retries", "up to %d attempts, backoff %s doubling to %s: %s", r.MaxAttempts, r.Backoff, r.MaxBackoff, r.Why)
		}
	}
}

// limitLine says what the limiter would do and the state it would meet.
func limitLine(l *wield.DryRunLimit) string {
	bucket := l.Bucket
	if bucket == "" {
		bucket = "(none)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "bucket %s: ", safetext.Line(bucket))
	switch l.Outcome {
	case "run":
		b.WriteString("would run now")
	case "queue":
		fmt.Fprintf(&b, "would wait in the queue (up to %s)", l.QueueTimeout.Round(time.Millisecond))
	case "reject":
		b.WriteString("would be rejected now (no room, and the queue is full or off)")
	case "bypass":
		b.WriteString("a workflow node's call: not limited")
		return b.String()
	default:
		b.WriteString("the limiter cannot tell without taking a slot (a shared limiter)")
	}
	fmt.Fprintf(&b, "; %d of %d units in flight", l.InFlight, l.Limit)
	if l.BucketLimit > 0 {
		fmt.Fprintf(&b, ", %d of %d in the bucket", l.BucketInFlight, l.BucketLimit)
	}
	if l.QueueSize > 0 {
		fmt.Fprintf(&b, ", %d of %d queued", l.Queued, l.QueueSize)
	}
	if l.Strategy != "" {
		fmt.Fprintf(&b, ", %s", safetext.Line(l.Strategy))
	}
	return b.String()
}
