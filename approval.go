package wield

import (
	"context"
	"errors"
	"time"
)

// ApprovalStatus is where an approval stands.
type ApprovalStatus string

// The approval statuses.
const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalDenied   ApprovalStatus = "denied"
	ApprovalExpired  ApprovalStatus = "expired"
)

// Approval is an approval request with its state.
type Approval struct {
	ApprovalRequest
	Status    ApprovalStatus `json:"status"`
	Decision  *Decision      `json:"decision,omitempty"`
	DecidedAt time.Time      `json:"decided_at,omitzero"`
	// ClaimedAt is when a run took up the decision: the approved call
	// started to run, or the refusal of a denied or expired one was
	// recorded. A decision is acted on once.
	ClaimedAt time.Time `json:"claimed_at,omitzero"`
}

// Errors of approval stores.
var (
	// ErrAlreadyDecided is returned when a decision comes for an approval
	// that is no longer pending: someone else decided it first, or it expired.
	ErrAlreadyDecided = errors.New("wield: approval already decided")
	// ErrDigestMismatch is returned when a decision names other arguments
	// than the pending call's.
	ErrDigestMismatch = errors.New("wield: approval is for other arguments")
	// ErrApprovalCanceled is returned by an [Approver] whose caller
	// canceled the call on purpose (see [CanceledOnPurpose]) while it
	// waited: the approval was ended (denied, its reason saying so) and
	// claimed, so the engine records the call as canceled at once.
	ErrApprovalCanceled = errors.New("wield: the caller canceled the call while waiting for approval")
	// ErrCallerCanceled is the cause with which a caller cancels a call on
	// purpose (context.WithCancelCause), as an MCP client's
	// notifications/cancelled does. A call so canceled while it waits for
	// approval ends that approval. A plain cancellation, as of an HTTP
	// request whose client disconnected, leaves the approval pending: the
	// call runs if it is approved, and is recorded then.
	ErrCallerCanceled = errors.New("wield: the caller canceled the call")
)

// CanceledOnPurpose reports whether ctx ended because its caller meant to
// end the call: canceled with [ErrCallerCanceled] as the cause, or past
// its deadline (the caller's own timeout). Why: a call waiting for approval
// that its caller ended on purpose ends its approval too, while one whose
// caller merely went away leaves the approval to a person.
func CanceledOnPurpose(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	cause := context.Cause(ctx)
	return errors.Is(cause, ErrCallerCanceled) || errors.Is(cause, context.DeadlineExceeded)
}

// ApprovalStore keeps approvals durably. DecideApproval is an atomic claim:
// of two decisions at once exactly one wins; a decision on an approval that
// expired, was decided, or whose digest differs (when digest is not empty)
// is refused with ErrAlreadyDecided or ErrDigestMismatch. An expired pending
// approval is reported with status expired.
type ApprovalStore interface {
	CreateApproval(ctx context.Context, req *ApprovalRequest) error
	DecideApproval(ctx context.Context, id, digest string, d Decision) (*Approval, error)
	Approval(ctx context.Context, id string) (*Approval, error)
	Approvals(ctx context.Context, status ApprovalStatus) ([]*Approval, error)
}

// ApprovalClaimer makes an approval single-use: ClaimApproval marks a
// decided (or expired) approval as acted on, atomically, so that of a
// waiting call and a call resumed after its caller left, after a restart or
// on another server, exactly one runs an approved call, or records the
// refusal of a denied or expired one. It fails with ErrAlreadyDecided when
// the approval is already claimed or is still pending, and with ErrNotFound
// for an unknown ID.
type ApprovalClaimer interface {
	ClaimApproval(ctx context.Context, id string) error
}

// ApprovalBacklog finds the approvals nobody has acted on yet, so that an
// approved call runs (and a refused one is recorded) even when its caller
// went away: a server looks here at start-up and whenever it hears of a
// decision.
type ApprovalBacklog interface {
	// UnclaimedApprovals lists the approvals not claimed yet (see
	// ApprovalClaimer): pending ones, and decided or expired ones that no
	// run has taken up, oldest first. A pending one past its expiry is
	// reported as expired.
	UnclaimedApprovals(ctx context.Context) ([]*Approval, error)
}

// DecisionNotifier carries news of decisions between processes, so that a
// call waiting for approval on one server resumes as soon as a person
// decides on another (the postgres store does it with LISTEN/NOTIFY, package
// redis with pub/sub). Without one, waiters look in the store periodically.
type DecisionNotifier interface {
	// NotifyDecision tells every listener that approval id was decided.
	NotifyDecision(ctx context.Context, id string) error
	// Decisions delivers the ids of approvals decided anywhere, until ctx
	// ends; the channel is then closed. Delivery is best effort: a waiter
	// still looks in the store now and then.
	Decisions(ctx context.Context) (<-chan string, error)
}

type requesterKey struct{}

// WithRequester returns a context that says who asks for the calls made
// with it, as a server authenticated them ("key:" and the ID of an API
// key). The engine keeps it in the [ApprovalRequest] of a call that waits
// for approval, so that the key that asked can be refused the decision: a
// model that can call a confirm tool must not be the one that approves it.
func WithRequester(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, requesterKey{}, who)
}

// RequesterFrom returns who ctx says asks for its calls ([WithRequester]),
// or "" when it does not say.
func RequesterFrom(ctx context.Context) string {
	s, _ := ctx.Value(requesterKey{}).(string)
	return s
}
