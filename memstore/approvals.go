package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wieldhq/wield"
)

// ErrDecided is returned by Decide for a request already decided, expired
// or withdrawn: exactly one decision wins.
var ErrDecided = errors.New("approval already decided or gone")

// Approvals is an in-memory [wield.Approver]: each request waits as pending
// until someone calls Decide, it expires, or its caller goes away.
type Approvals struct {
	mu      sync.Mutex
	pending map[string]*pendingApproval
	notify  func(*wield.ApprovalRequest)
}

type pendingApproval struct {
	req *wield.ApprovalRequest
	ch  chan wield.Decision // buffered 1; the first Decide fills it
}

// NewApprovals returns an empty approval inbox. notify, if not nil, is called
// (on the caller's goroutine) for each new pending request; a panic in it
// is contained, logged and counted (see [wield.Protect]).
func NewApprovals(notify func(*wield.ApprovalRequest)) *Approvals {
	return &Approvals{pending: map[string]*pendingApproval{}, notify: notify}
}

// Approve waits for a decision on req.
func (a *Approvals) Approve(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
	p := &pendingApproval{req: req, ch: make(chan wield.Decision, 1)}
	a.mu.Lock()
	a.pending[req.ID] = p
	a.mu.Unlock()
	if a.notify != nil {
		// A panic in it would leave req pending for ever: contained, the
		// request still waits for whoever reads Pending.
		wield.Protect(nil, wield.CallbackApprovalNotify, func() { a.notify(req) })
	}
	defer func() {
		a.mu.Lock()
		delete(a.pending, req.ID)
		a.mu.Unlock()
	}()
	var expiry <-chan time.Time
	if !req.ExpiresAt.IsZero() {
		t := time.NewTimer(time.Until(req.ExpiresAt))
		defer t.Stop()
		expiry = t.C
	}
	select {
	case d := <-p.ch:
		return d, nil
	case <-expiry:
		return wield.Decision{}, context.DeadlineExceeded
	case <-ctx.Done():
		return wield.Decision{}, ctx.Err()
	}
}

// Pending lists the requests waiting for a decision, oldest first.
func (a *Approvals) Pending() []*wield.ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*wield.ApprovalRequest, 0, len(a.pending))
	for _, p := range a.pending {
		out = append(out, p.req)
	}
	slices.SortFunc(out, func(x, y *wield.ApprovalRequest) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// Decide records the decision on a pending request. digest, when not empty,
// must match the request's: a decision made on other arguments is refused.
// It returns ErrDecided if the request is not pending any more (decided,
// expired or withdrawn).
func (a *Approvals) Decide(id, digest string, d wield.Decision) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pending[id]
	if !ok {
		return fmt.Errorf("decide approval %s: %w", id, ErrDecided)
	}
	if digest != "" && digest != p.req.Digest {
		return fmt.Errorf("decide approval %s: the arguments changed since the request (digest mismatch)", id)
	}
	if !p.req.ExpiresAt.IsZero() && time.Now().After(p.req.ExpiresAt) {
		return fmt.Errorf("decide approval %s: expired: %w", id, ErrDecided)
	}
	delete(a.pending, id)
	p.ch <- d
	return nil
}
