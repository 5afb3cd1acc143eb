package wield

import (
	"errors"
	"fmt"
)

// ErrorType classifies a failed call. The strings are stable: they are part of
// the API, the records and what models see.
type ErrorType string

// The error types of a failed call, in pipeline order.
const (
	ErrToolNotFound     ErrorType = "tool_not_found"     // no such tool, or not in the caller's toolkit
	ErrValidation       ErrorType = "validation_error"   // arguments do not fit the input schema
	ErrPermissionDenied ErrorType = "permission_denied"  // the tool's permission is deny, or a sandbox refused
	ErrApprovalDenied   ErrorType = "approval_denied"    // a person (or the absence of one) said no
	ErrRejected         ErrorType = "rejected"           // no capacity: the call did not run
	ErrTimeout          ErrorType = "timeout"            // the call ran out of time; it may have had effects
	ErrCanceled         ErrorType = "canceled"           // the caller went away
	ErrExecution        ErrorType = "execution_error"    // the tool itself failed or panicked
	ErrExecutorNotFound ErrorType = "executor_not_found" // the tool has no handler
)

// Error is a failure with a type, returned by handlers that want to say more
// than "execution failed" (a sandbox refusal is permission_denied, bad input the
// schema could not catch is validation_error). Its Message goes to the model.
type Error struct {
	Type    ErrorType
	Message string
	Err     error // the cause, kept for logs; never shown to a model
}

func (e *Error) Error() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of the given type with a formatted message.
func Errorf(t ErrorType, format string, args ...any) *Error {
	return &Error{Type: t, Message: fmt.Sprintf(format, args...)}
}

type transientError struct{ err error }

func (e transientError) Error() string   { return e.err.Error() }
func (e transientError) Unwrap() error   { return e.err }
func (e transientError) Transient() bool { return true }

// Transient marks err as worth retrying (a dropped connection, a 503). The
// engine retries a call only when the tool is idempotent and the error is
// transient. A nil err stays nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return transientError{err}
}

// IsTransient reports whether err, or an error it wraps, has a method
// Transient() bool that returns true.
func IsTransient(err error) bool {
	var t interface{ Transient() bool }
	return errors.As(err, &t) && t.Transient()
}

// Errors of the system itself, returned as Go errors by the engine.
var (
	// ErrClosed is returned by an engine or store after Close.
	ErrClosed = errors.New("wield: closed")
	// ErrDuplicate is returned by Registry.Register for a name already taken.
	// The later tool is kept as shadowed.
	ErrDuplicate = errors.New("wield: duplicate tool name")
	// ErrNotFound is returned by lookups of a missing tool, toolset or toolkit.
	ErrNotFound = errors.New("wield: not found")
)
