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
// # Callers that left, and restarts
//
// Approvals are in the store, so they outlive the caller and the process.
// A decided call runs (or is refused) and is recorded whether or not its
// caller still waits: [Inbox.Resume] takes up, through the engine
// ([Runner]), every decision whose call no longer waits in this process,
// at start-up (approvals decided while no server ran, or left pending by a
// stopped one) and while it runs (a caller left while waiting, or a
// decision came from the CLI or another server). The engine claims each
// decision before acting on it, so that with several servers sharing a
// store exactly one runs the call; a caller still waiting elsewhere gets
// that run's result.
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

	notifier  wield.DecisionNotifier
	listening bool // the listener runs (it starts with the first wait or Resume)

	// The inbox's own goroutines (the listener, Resume's loop and the
	// decisions it acts on) run until life ends, which Close ends before
	// it waits for them in bg. closed (under mu) keeps new ones from
	// starting once Close began.
	life   context.Context
	end    context.CancelFunc
	bg     sync.WaitGroup
	closed bool

	// Taking up decisions whose callers left (see Resume).
	kick     chan struct{}       // a decision was heard or a caller left: look now
	resuming bool                // Resume runs: callers that leave are its orphans
	orphans  map[string]struct{} // approvals known to wait for nobody
	running  map[string]struct{} // decisions being acted on here
}

// New returns an inbox over store.
func New(store wield.ApprovalStore, opts *Options) *Inbox {
	in := &Inbox{store: store, poll: 500 * time.Millisecond, log: slog.Default(), waiters: map[string]chan struct{}{},
		kick: make(chan struct{}, 1), orphans: map[string]struct{}{}, running: map[string]struct{}{}}
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
	in.life, in.end = context.WithCancel(context.Background())
	return in
}

// Close stops what the inbox runs in the background, and waits for it:
// listening for decisions made elsewhere, and Resume's work (a decision
// being acted on is canceled: close the engine first, so that it finishes).
// Calls still waiting in Approve then rely on polling. Close is safe to
// call more than once.
func (in *Inbox) Close() error {
	in.mu.Lock()
	in.closed = true
	in.mu.Unlock()
	in.end()
	in.bg.Wait()
	return nil
}

// spawnLocked runs f on a goroutine of the inbox's own, under a context
// that ends with ctx or with Close, which waits for it. It reports false
// when the inbox is closed. in.mu must be held.
func (in *Inbox) spawnLocked(ctx context.Context, f func(context.Context)) bool {
	if in.closed {
		return false
	}
	in.bg.Add(1)
	go func() {
		defer in.bg.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(in.life, cancel)()
		f(ctx)
	}()
	return true
}

// listen starts listening for decisions made elsewhere, once: an inbox
// that only lists and decides (as a command line does) holds no listener,
// and so no connection of the store's.
func (in *Inbox) listen() {
	if in.notifier == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.listening {
		in.listening = in.spawnLocked(context.Background(), in.listenLoop)
	}
}

// listenLoop wakes the local waiters of approvals decided anywhere, and
// listens again, after a pause, when the notifier fails. It ends with ctx,
// even if the notifier's channel does not.
func (in *Inbox) listenLoop(ctx context.Context) {
	for ctx.Err() == nil {
		ch, err := in.notifier.Decisions(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			in.log.Warn("approval: listen for decisions; polling meanwhile", "error", err)
		} else {
			// A decision made before the subscription took hold was
			// not heard: every waiter looks again.
			in.wakeAll()
		heard:
			for {
				select {
				case id, ok := <-ch:
					if !ok {
						break heard
					}
					in.wake(id)
				case <-ctx.Done():
					return
				}
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
	in.poke()
}

// poke tells Resume's loop to look for decisions to take up now.
func (in *Inbox) poke() {
	select {
	case in.kick <- struct{}{}:
	default:
	}
}

// Approve records the request as pending and waits for its decision, its
// expiry, or ctx's end. A caller that ends ctx on purpose
// ([wield.CanceledOnPurpose]) ends the approval too: it is denied, its
// reason saying the caller canceled, and Approve fails with
// [wield.ErrApprovalCanceled]. A caller that merely left leaves it pending.
// Either holds when ctx ends before the request is stored: it is stored
// all the same, and then ended or left pending.
func (in *Inbox) Approve(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
	// Stored whatever the caller does meanwhile: a write its cancel
	// interrupts may be made all the same (a SQLite statement that
	// finishes as the context ends reports the context's error), and the
	// wait below then ends it as the caller's end says (withdrawn, or
	// left pending), rather than leaving the call neither waiting nor
	// recorded, its approval perhaps stored and pending.
	//
	// The caller counts as waiting here from before the request is
	// stored: whoever sees it pending (a console asking Waiter, Resume
	// looking for decisions to take up) sees its caller too.
	wake := in.await(req.ID)
	if err := in.store.CreateApproval(context.WithoutCancel(ctx), req); err != nil {
		in.unawait(req.ID)
		return wield.Decision{}, fmt.Errorf("approval: create %s: %w", req.ID, err)
	}
	if req.Pending != nil {
		req.Pending()
	}
	d, err := in.wait(ctx, req.ID, wake)
	in.unawait(req.ID) // before it may become an orphan, below
	early := req.ExpiresAt.IsZero() || time.Now().Before(req.ExpiresAt)
	if err != nil && early && wield.CanceledOnPurpose(ctx) && in.withdraw(ctx, req.ID) {
		return wield.Decision{}, fmt.Errorf("approval %s: %w", req.ID, wield.ErrApprovalCanceled)
	}
	if err != nil && ctx.Err() != nil && early {
		// The caller left before the expiry: the decision, when it comes,
		// is taken up by Resume without delay.
		in.mu.Lock()
		if in.resuming {
			in.orphans[req.ID] = struct{}{}
		}
		in.mu.Unlock()
		in.poke()
	}
	return d, err
}

// canceledReason is the reason of the denial that ends an approval whose
// caller canceled the call; canceledBy is who it says decided.
const (
	canceledReason = "the caller canceled the call while waiting for approval"
	canceledBy     = "caller"
)

// withdraw ends pending approval id whose caller canceled on purpose: it is
// denied (By "caller", the reason saying why) and claimed at once, so no
// person decides it and no run takes it up; the caller's engine records
// the call. It reports false when a decision came first (the call is then
// left to Resume, as one whose caller left).
func (in *Inbox) withdraw(ctx context.Context, id string) bool {
	ctx = context.WithoutCancel(ctx)
	if _, err := in.store.DecideApproval(ctx, id, "", wield.Decision{By: canceledBy, Reason: canceledReason}); err != nil {
		if !errors.Is(err, wield.ErrAlreadyDecided) {
			in.log.Error("approval: end the approval of a canceled call", "approval_id", id, "err", err)
		}
		return false
	}
	if err := in.ClaimApproval(ctx, id); err != nil {
		// Denied but not claimed: Resume may record the refusal too.
		in.log.Error("approval: claim the approval of a canceled call", "approval_id", id, "err", err)
	}
	if in.notifier != nil {
		if err := in.notifier.NotifyDecision(ctx, id); err != nil {
			in.log.Warn("approval: tell other servers of a decision; they will see it by polling", "id", id, "error", err)
		}
	}
	return true
}

// NotifiesPending reports that Approve calls ApprovalRequest.Pending once
// the request is stored (see wield.PendingNotifier).
func (in *Inbox) NotifiesPending() bool { return true }

// await registers this process's caller as waiting for approval id and
// returns the channel a decision wakes; unawait ends that.
func (in *Inbox) await(id string) chan struct{} {
	in.listen()
	wake := make(chan struct{}, 1)
	in.mu.Lock()
	in.waiters[id] = wake
	in.mu.Unlock()
	return wake
}

func (in *Inbox) unawait(id string) {
	in.mu.Lock()
	delete(in.waiters, id)
	in.mu.Unlock()
}

// wait waits for the decision on approval id, woken by wake (see await).
func (in *Inbox) wait(ctx context.Context, id string, wake chan struct{}) (wield.Decision, error) {
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

// Runner acts on a decision whose caller no longer waits: it claims the
// decision and, if no other run has, runs the approved call or records the
// refusal, under the original call ID. *engine.Engine is one
// (engine.Engine.Resume); it returns nil, nil when another run took the
// decision.
type Runner interface {
	Resume(ctx context.Context, a *wield.Approval) (*wield.Result, error)
}

// handover is how long a decision on an approval that may still have a
// waiting caller in another process is left to that caller before Resume
// takes it up (that caller hears of it within one poll, or at once by
// notification): counted in polls.
const handover = 3

// Resume takes up, through r, every decision whose call does not wait in
// this process, until ctx ends: at once those decided (or expired) before
// it started, and those whose caller is known to have left (here, or in a
// process that stopped before this one started); after a short handover
// (three polls) those that a caller in another process might still be
// waiting for. It looks at start, whenever it hears of a decision, when a
// caller here leaves, and every poll. Each decision is acted on once
// however many servers do this: r claims it first.
//
// It returns how many approvals from before the start it took up (pending
// ones it now watches, and decided ones it acts on); the work goes on in
// the background until ctx ends or the inbox is closed. On a closed inbox
// it fails with wield.ErrClosed.
func (in *Inbox) Resume(ctx context.Context, r Runner) (int, error) {
	backlog, err := in.unclaimed(ctx)
	if err != nil {
		return 0, fmt.Errorf("approval: resume: %w", err)
	}
	n := 0
	in.mu.Lock()
	in.resuming = true
	for _, a := range backlog {
		if _, waited := in.waiters[a.ID]; !waited {
			in.orphans[a.ID] = struct{}{}
			n++
		}
	}
	started := in.spawnLocked(ctx, func(ctx context.Context) { in.resume(ctx, r) })
	in.mu.Unlock()
	if !started {
		return 0, fmt.Errorf("approval: resume: %w", wield.ErrClosed)
	}
	in.listen() // decisions heard are taken up at once
	return n, nil
}

// unclaimed lists the approvals nobody has acted on.
func (in *Inbox) unclaimed(ctx context.Context) ([]*wield.Approval, error) {
	if b, ok := in.store.(wield.ApprovalBacklog); ok {
		return b.UnclaimedApprovals(ctx)
	}
	all, err := in.store.Approvals(ctx, "")
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, a := range all {
		if a.ClaimedAt.IsZero() {
			out = append(out, a)
		}
	}
	return out, nil
}

// resume is Resume's loop.
func (in *Inbox) resume(ctx context.Context, r Runner) {
	tick := time.NewTicker(in.poll)
	defer tick.Stop()
	for {
		in.takeUp(ctx, r)
		select {
		case <-ctx.Done():
			return
		case <-in.kick:
		case <-tick.C:
		}
	}
}

// takeUp starts acting on each decision that is due: not pending, not
// waited on here, not already being acted on here, and either known to
// wait for nobody or past its handover.
func (in *Inbox) takeUp(ctx context.Context, r Runner) {
	list, err := in.unclaimed(ctx)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, wield.ErrClosed) { // closed: the server is stopping
			in.log.Warn("approval: look for decisions to take up; looking again later", "error", err)
		}
		return
	}
	now := time.Now()
	in.mu.Lock()
	defer in.mu.Unlock()
	listed := make(map[string]struct{}, len(list))
	for _, a := range list {
		listed[a.ID] = struct{}{}
		if a.Status == wield.ApprovalPending {
			continue
		}
		if _, waited := in.waiters[a.ID]; waited {
			continue
		}
		if _, busy := in.running[a.ID]; busy {
			continue
		}
		if _, orphan := in.orphans[a.ID]; !orphan && now.Sub(settled(a)) < handover*in.poll {
			continue
		}
		if !in.spawnLocked(ctx, func(ctx context.Context) { in.act(ctx, r, a) }) {
			return // closed
		}
		delete(in.orphans, a.ID)
		in.running[a.ID] = struct{}{}
	}
	// Those taken up elsewhere are no longer anyone's orphans here.
	for id := range in.orphans {
		if _, ok := listed[id]; !ok {
			delete(in.orphans, id)
		}
	}
}

// settled is when approval a stopped being pending: its decision, or its
// expiry.
func settled(a *wield.Approval) time.Time {
	if a.Status == wield.ApprovalExpired || a.DecidedAt.IsZero() {
		return a.ExpiresAt
	}
	return a.DecidedAt
}

// act has r act on decision a.
func (in *Inbox) act(ctx context.Context, r Runner, a *wield.Approval) {
	defer func() {
		in.mu.Lock()
		delete(in.running, a.ID)
		in.mu.Unlock()
	}()
	if _, err := r.Resume(ctx, a); err != nil && ctx.Err() == nil && !errors.Is(err, wield.ErrClosed) {
		in.log.Error("approval: take up a decision", "approval_id", a.ID, "call_id", a.CallID, "status", a.Status, "err", err)
	}
}
