package wield

import (
	"encoding/json"
	"time"

	"github.com/wieldhq/wield/internal/jsonenc"
)

// DryRun is what a call would do now, found by taking it through the
// engine's own steps (lookup, decode and coerce, validate, permission,
// approval, limiter) up to its handler, without running the tool, asking
// for an approval, writing a record or publishing an event. Why: a person
// or an agent can see, before a call with effects, whether it would run,
// wait for a person, queue or be refused, and under which timeout and
// retries.
//
// When the call would not run, ErrorType, Error and ValidationErrors are
// exactly those of the [Result] a real call made at the same moment would
// get; Stage names the step that would stop it.
type DryRun struct {
	Tool string `json:"tool"`
	// WouldRun is true when every step would let the call through to its
	// handler (after an approval when Approval.Required).
	WouldRun         bool              `json:"would_run"`
	Stage            DryRunStage       `json:"stage,omitempty"`
	ErrorType        ErrorType         `json:"error_type,omitempty"`
	Error            string            `json:"error,omitempty"`
	ValidationErrors []ValidationError `json:"validation_errors,omitempty"`
	// Arguments are the arguments as the handler would get them: coerced,
	// with defaults filled.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Policy is the decision of the engine's policies (see [Policy]),
	// when it has some and the call reached them.
	Policy *PolicyDecision `json:"policy,omitempty"`
	// Permission is the tool's effective permission (auto, confirm, deny).
	Permission Permission      `json:"permission,omitempty"`
	Approval   *DryRunApproval `json:"approval,omitempty"`
	Limit      *DryRunLimit    `json:"limit,omitempty"`
	// Timeout is the time the tool would have, and TimeoutFrom where it
	// comes from: "call", "tool", "default", "network default" or
	// "caller deadline".
	Timeout     time.Duration `json:"-"`
	TimeoutFrom string        `json:"timeout_from,omitempty"`
	Retry       *DryRunRetry  `json:"retry,omitempty"`
	// Replay names the earlier call an idempotency key would answer this
	// one from, without running the tool.
	Replay string `json:"replay_of,omitempty"`
}

// DryRunStage names the step of the pipeline a dry run stopped at.
type DryRunStage string

// The stages a dry run may stop at.
const (
	StageLookup     DryRunStage = "lookup"
	StageValidation DryRunStage = "validation"
	StageReplay     DryRunStage = "replay"
	StagePermission DryRunStage = "permission"
	StageApproval   DryRunStage = "approval"
	StageLimiter    DryRunStage = "limiter"
)

// DryRunApproval says whether a call would wait for a person's decision,
// and who would be asked.
type DryRunApproval struct {
	// Required is true for a tool whose permission is confirm.
	Required bool `json:"required"`
	// Deciders says who may decide it; empty when no approver is
	// configured (the call would then fail with approval_denied).
	Deciders string `json:"deciders,omitempty"`
	// RequestedBy is who asks, as the server authenticated them.
	RequestedBy string `json:"requested_by,omitempty"`
	// ExpiresAfter is how long the approval would stay pending.
	ExpiresAfter time.Duration `json:"-"`
	// Digest is the digest of the arguments the decision would be bound to.
	Digest string `json:"digest,omitempty"`
}

// DryRunLimit is the limiter's view of a call now: its bucket, what is in
// flight and queued, and what Acquire would do.
type DryRunLimit struct {
	Bucket string `json:"bucket"`
	Weight int    `json:"weight"`
	// Outcome is "run" (granted at once), "queue" (it would wait),
	// "reject" (refused now: no room and no queue, or the queue full),
	// "bypass" (a workflow node's call) or "unknown" (the limiter cannot
	// tell without taking a slot).
	Outcome        string `json:"outcome"`
	InFlight       int    `json:"in_flight"`
	Limit          int    `json:"limit"`
	BucketInFlight int    `json:"bucket_in_flight,omitempty"`
	BucketLimit    int    `json:"bucket_limit,omitempty"`
	Queued         int    `json:"queued"`
	QueueSize      int    `json:"queue_size,omitempty"`
	Strategy       string `json:"strategy,omitempty"`
	// QueueTimeout is the longest the call would wait in the queue.
	QueueTimeout time.Duration `json:"-"`
}

// DryRunRetry is the retry policy a call would run under.
type DryRunRetry struct {
	// MaxAttempts is 1 when the call would not be retried.
	MaxAttempts int           `json:"max_attempts"`
	Backoff     time.Duration `json:"-"`
	MaxBackoff  time.Duration `json:"-"`
	// Why says why the call would or would not be retried.
	Why string `json:"why"`
}

type (
	dryRunJSON      DryRun
	dryApprovalJSON DryRunApproval
	dryLimitJSON    DryRunLimit
	dryRetryJSON    DryRunRetry
)

// MarshalJSON writes the durations in milliseconds (timeout_ms), as the
// rest of the API does.
func (d *DryRun) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(struct {
		*dryRunJSON
		TimeoutMS int64 `json:"timeout_ms,omitempty"`
	}{(*dryRunJSON)(d), d.Timeout.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *DryRun) UnmarshalJSON(b []byte) error {
	v := struct {
		*dryRunJSON
		TimeoutMS int64 `json:"timeout_ms"`
	}{dryRunJSON: (*dryRunJSON)(d)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	d.Timeout = time.Duration(v.TimeoutMS) * time.Millisecond
	return nil
}

// MarshalJSON writes ExpiresAfter as expires_after_ms.
func (a *DryRunApproval) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(struct {
		*dryApprovalJSON
		MS int64 `json:"expires_after_ms,omitempty"`
	}{(*dryApprovalJSON)(a), a.ExpiresAfter.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (a *DryRunApproval) UnmarshalJSON(b []byte) error {
	v := struct {
		*dryApprovalJSON
		MS int64 `json:"expires_after_ms"`
	}{dryApprovalJSON: (*dryApprovalJSON)(a)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	a.ExpiresAfter = time.Duration(v.MS) * time.Millisecond
	return nil
}

// MarshalJSON writes QueueTimeout as queue_timeout_ms.
func (l *DryRunLimit) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(struct {
		*dryLimitJSON
		MS int64 `json:"queue_timeout_ms,omitempty"`
	}{(*dryLimitJSON)(l), l.QueueTimeout.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *DryRunLimit) UnmarshalJSON(b []byte) error {
	v := struct {
		*dryLimitJSON
		MS int64 `json:"queue_timeout_ms"`
	}{dryLimitJSON: (*dryLimitJSON)(l)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	l.QueueTimeout = time.Duration(v.MS) * time.Millisecond
	return nil
}

// MarshalJSON writes the backoffs as backoff_ms and max_backoff_ms.
func (r *DryRunRetry) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(struct {
		*dryRetryJSON
		BackoffMS    int64 `json:"backoff_ms,omitempty"`
		MaxBackoffMS int64 `json:"max_backoff_ms,omitempty"`
	}{(*dryRetryJSON)(r), r.Backoff.Milliseconds(), r.MaxBackoff.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *DryRunRetry) UnmarshalJSON(b []byte) error {
	v := struct {
		*dryRetryJSON
		BackoffMS    int64 `json:"backoff_ms"`
		MaxBackoffMS int64 `json:"max_backoff_ms"`
	}{dryRetryJSON: (*dryRetryJSON)(r)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.Backoff = time.Duration(v.BackoffMS) * time.Millisecond
	r.MaxBackoff = time.Duration(v.MaxBackoffMS) * time.Millisecond
	return nil
}
