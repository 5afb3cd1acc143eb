// Package approval is the durable human-in-the-loop: an approval inbox over
// a [wield.ApprovalStore] (SQLite or PostgreSQL) that the engine uses as its
// [wield.Approver] for tools whose permission is confirm.
//
// A call that needs approval becomes a pending record bound to the tool, the
// call ID, the caller and the digest of its arguments, with an expiry. The
// call waits; a decision made through [Inbox.Decide] (in this process: it
// wakes the call at once) or by another process sharing the store (seen by
// polling) ends the wait. A decision is an atomic claim: of two people
// clicking at once, one wins and the other is told it was already decided.
//
// # Restarts
//
// Pending approvals are in the store, so they outlive the process. After a
// restart, [Inbox.Resume] watches those whose calls no longer wait anywhere
// and, when one is decided, runs its call through the engine with the stored
// arguments under the original call ID (the engine checks that the approval
// is for exactly that call, tool and arguments), so the decision takes
// effect and the result is recorded where the caller will look for it.
package approval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wieldhq/wield"
)

// Options configure an [Inbox]; nil means the defaults.
type Options struct {
	// Poll is how often a waiting call looks in the store for a decision
	// made by another process (500 ms).
	Poll time.Duration
	// Logger receives failures of resumed calls (slog.Default()).
	Logger *slog.Logger
	// Notifier carries decisions between processes; nil means the store's
	// own when it is a wield.DecisionNotifier (as the postgres store is),
	// else none (waiters then rely on Poll).
	Notifier wield.DecisionNotifier
}

// Inbox is a durable [wield.Approver].
type Inbox struct {
	store wield.ApprovalStore
	poll  time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	waiters map[string]chan struct{} // approvals waited on in this process

	notifier wield.DecisionNotifier
	stop     context.CancelFunc
	stopped  chan struct{}
}

// New returns an inbox over store.
func New(store wield.ApprovalStore, opts *Options) *Inbox {
	in := &Inbox{store: store, poll: 500 * time.Millisecond, log: slog.Default(), waiters: map[string]chan struct{}{}}
	if opts != nil {
		if opts.Poll > 0 {
			in.poll = opts.Poll
		}
		if opts.Logger != nil {
			in.log = opts.Logger
		}
		in.notifier = opts.Notifier
	}
	if in.notifier == nil {
		in.notifier, _ = store.(wield.DecisionNotifier)
	}
	if in.notifier != nil {
		ctx, cancel := context.WithCancel(context.Background())
		in.stop, in.stopped = cancel, make(chan struct{})
		go in.listen(ctx)
	}
	return in
}

// Close stops listening for decisions made elsewhere. Waiting calls then
// rely on polling.
func (in *Inbox) Close() error {
	if in.stop != nil {
		in.stop()
		<-in.stopped
	}
	return nil
}

// listen wakes the local waiters of approvals decided anywhere, and
// listens again, after a pause, when the notifier fails.
func (in *Inbox) listen(ctx context.Context) {
	defer close(in.stopped)
	for ctx.Err() == nil {
		ch, err := in.notifier.Decisions(ctx)
		if err != nil {
			in.log.Warn("approval: listen for decisions; polling meanwhile", "error", err)
		} else {
			// A decision made before the subscription took hold was
			// not heard: every waiter looks again.
			in.wakeAll()
			for id := range ch {
				in.wake(id)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(in.poll):
		}
	}
}

func (in *Inbox) wakeAll() {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, wake := range in.waiters {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

func (in *Inbox) wake(id string) {
	in.mu.Lock()
	wake := in.waiters[id]
	in.mu.Unlock()
	if wake != nil {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// Approve records the request as pending and waits for its decision, its
// expiry, or ctx's end.
func (in *Inbox) Approve(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
	if err := in.store.CreateApproval(ctx, req); err != nil {
		return wield.Decision{}, fmt.Errorf("approval: create %s: %w", req.ID, err)
	}
	if req.Pending != nil {
		req.Pending()
	}
	return in.wait(ctx, req.ID)
}

// NotifiesPending reports that Approve calls ApprovalRequest.Pending once
// the request is stored (see wield.PendingNotifier).
func (in *Inbox) NotifiesPending() bool { return true }

// wait waits for the decision on approval id.
func (in *Inbox) wait(ctx context.Context, id string) (wield.Decision, error) {
	wake := make(chan struct{}, 1)
	in.mu.Lock()
	in.waiters[id] = wake
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		delete(in.waiters, id)
		in.mu.Unlock()
	}()
	tick := time.NewTicker(in.poll)
	defer tick.Stop()
	for {
		a, err := in.store.Approval(ctx, id)
		if err != nil && ctx.Err() == nil {
			return wield.Decision{}, fmt.Errorf("approval: read %s: %w", id, err)
		}
		if err == nil {
			switch a.Status {
			case wield.ApprovalApproved, wield.ApprovalDenied:
				if a.Decision == nil {
					return wield.Decision{Approved: a.Status == wield.ApprovalApproved}, nil
				}
				return *a.Decision, nil
			case wield.ApprovalExpired:
				return wield.Decision{}, context.DeadlineExceeded
			}
		}
		select {
		case <-wake:
		case <-tick.C:
		case <-ctx.Done():
			return wield.Decision{}, ctx.Err()
		}
	}
}

// Decide records a decision and wakes the call that waits for it. digest,
// when not empty, must be the pending call's: a decision made on a view of
// other arguments is refused with wield.ErrDigestMismatch. A decision that
// comes second, or after the expiry, gets wield.ErrAlreadyDecided.
func (in *Inbox) Decide(ctx context.Context, id, digest string, d wield.Decision) (*wield.Approval, error) {
	a, err := in.store.DecideApproval(ctx, id, digest, d)
	if err != nil {
		return nil, fmt.Errorf("approval: decide %s: %w", id, err)
	}
	in.wake(id)
	if in.notifier != nil {
		if err := in.notifier.NotifyDecision(ctx, id); err != nil {
			in.log.Warn("approval: tell other servers of a decision; they will see it by polling", "id", id, "error", err)
		}
	}
	return a, nil
}

// ClaimApproval marks an approved approval as used, if the store can; the
// engine claims before it runs an approved call, so a call runs once.
func (in *Inbox) ClaimApproval(ctx context.Context, id string) error {
	c, ok := in.store.(wield.ApprovalClaimer)
	if !ok {
		return nil
	}
	return c.ClaimApproval(ctx, id)
}

// Pending lists the approvals waiting for a decision.
func (in *Inbox) Pending(ctx context.Context) ([]*wield.Approval, error) {
	return in.store.Approvals(ctx, wield.ApprovalPending)
}

// Resume watches the pending approvals whose calls are not waiting in this
// process (their process stopped) and, when one is decided, runs its call
// through inv with the approval's ID, so that the decision takes effect and
// is recorded under the original call ID. It returns how many it watches;
// the watching goes on in the background until ctx ends.
func (in *Inbox) Resume(ctx context.Context, inv wield.Invoker) (int, error) {
	pending, err := in.Pending(ctx)
	if err != nil {
		return 0, fmt.Errorf("approval: resume: %w", err)
	}
	n := 0
	for _, a := range pending {
		in.mu.Lock()
		_, waited := in.waiters[a.ID]
		in.mu.Unlock()
		if waited {
			continue
		}
		n++
		go in.resume(ctx, inv, a)
	}
	return n, nil
}

func (in *Inbox) resume(ctx context.Context, inv wield.Invoker, a *wield.Approval) {
	if _, err := in.wait(ctx, a.ID); err != nil && ctx.Err() != nil {
		return // shutting down: the next start resumes it
	} else if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		in.log.Error("approval: resume: wait", "approval_id", a.ID, "err", err)
		return
	}
	// Decided or expired: the engine reads the outcome from the store and
	// runs or refuses the call, recording it either way.
	c := wield.Call{ID: a.CallID, Tool: a.Tool, Arguments: a.Arguments, Caller: a.Caller, ApprovalID: a.ID}
	if _, err := inv.Call(ctx, c); err != nil {
		in.log.Error("approval: resume: call", "approval_id", a.ID, "call_id", a.CallID, "err", err)
	}
}
