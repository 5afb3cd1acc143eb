package wield

import (
	"context"
	"encoding/json"
	"time"
)

// Record is one finished call as a store keeps it. Stores list records
// newest first by call ID, which engine-made IDs ([NewID]) make time-ordered
// to the millisecond (calls of one millisecond come in random order); a
// caller that supplies its own IDs gets its records in ID order instead.
// Metadata and caller variables come back as JSON decodes them (numbers as
// float64).
type Record struct {
	Call        *Call    `json:"call"`
	ToolVersion string   `json:"tool_version,omitempty"`
	Category    Category `json:"category,omitempty"`
	// Arguments are the arguments after coercion and defaults (secrets
	// redacted, as in Call.Arguments).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Digest is the SHA-256 of the canonical arguments before redaction: an
	// idempotent replay compares it with the new call's.
	Digest   string    `json:"digest,omitempty"`
	Result   *Result   `json:"result"`
	QueuedAt time.Time `json:"queued_at"`
}

// Output is the full output of the call, even when the model got a cut version.
func (r *Record) Output() json.RawMessage {
	if r.Result.FullOutput != nil {
		return r.Result.FullOutput
	}
	return r.Result.Output
}

// Store keeps the record of every finished call. Save must be safe for
// concurrent use; an error means the record was not kept, and the engine
// reports it as a system failure.
type Store interface {
	Save(ctx context.Context, r *Record) error
}

// ApprovalRequest asks a person whether a call may run. It is bound to the
// call: a decision on it never runs other arguments.
type ApprovalRequest struct {
	ID     string `json:"id"`
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Caller Caller `json:"caller"`
	// Arguments are the arguments the call runs with (coerced, defaults
	// filled), secrets included: the person deciding sees what will run,
	// and a call whose caller went away runs with them after the decision.
	// Unlike call records, approvals are not redacted; keep the store as
	// private as the secrets it may hold.
	Arguments json.RawMessage `json:"arguments"`
	// Digest is the SHA-256 of the canonical arguments (keys sorted).
	Digest    string    `json:"digest"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// Timeout is the call's own timeout (Call.Timeout), kept so that a call
	// run after its caller left has it too; it counts from when the call
	// runs, not from when it was asked. Zero means the tool's.
	Timeout time.Duration `json:"timeout,omitempty"`
	// RequestedBy is who asked for the call as the server that took it
	// authenticated them ("key:" and an API key's ID; see [WithRequester]),
	// unlike Caller, which the client says of itself. A server refuses that
	// key the decision on its own call unless self-approval is allowed.
	// Empty when the call came without such a requester (a program, the
	// CLI, a server without keys).
	RequestedBy string `json:"requested_by,omitempty"`
	// Pending, when set, is called by an approver that keeps requests (a
	// [PendingNotifier]) as soon as this one is stored and can be decided,
	// so that the news of it never arrives before the request itself.
	Pending func() `json:"-"`
}

// PendingNotifier is implemented by approvers that call
// ApprovalRequest.Pending once a request is stored; the engine then
// announces the request from there, not before it is asked.
type PendingNotifier interface {
	NotifiesPending() bool
}

// Decision is a person's answer to an [ApprovalRequest]. By is who decided
// as the deciding side knows them (an API key's requester name, the local
// user), never text a client chose; Note is the client's own free text
// about the decision, kept apart so that it cannot pass for the decider.
type Decision struct {
	Approved bool   `json:"approved"`
	By       string `json:"by,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Approver decides whether calls of tools with the confirm permission may
// run. Approve blocks until a decision, the request's expiry or ctx's end; an
// error means no decision was made (the call is then not run).
type Approver interface {
	Approve(ctx context.Context, req *ApprovalRequest) (Decision, error)
}

// ApproverFunc adapts a function to an [Approver].
type ApproverFunc func(ctx context.Context, req *ApprovalRequest) (Decision, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req *ApprovalRequest) (Decision, error) {
	return f(ctx, req)
}

// Storage is everything wield keeps durably, as the SQLite and PostgreSQL
// stores implement it: call records with their queries and statistics,
// idempotent replays, approvals and artifacts. Close writes whatever is
// buffered and releases the database.
type Storage interface {
	Store
	CallReader
	CallIDReserver
	CallIDReservations
	CallStats
	Replayer
	ApprovalStore
	ApprovalClaimer
	ApprovalBacklog
	ArtifactStore
	Flusher
	Close(ctx context.Context) error
}

// Flusher is a store that buffers: Flush returns once everything saved so
// far is written.
type Flusher interface {
	Flush(ctx context.Context) error
}
