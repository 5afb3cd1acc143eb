package wield

import (
	"context"
	"encoding/json"
	"time"
)

// CallerType says who is calling. Workflow nodes bypass the concurrency
// controller (seed 004 §4.4).
type CallerType string

// The caller types.
const (
	CallerConversationAgent CallerType = "conversation_agent"
	CallerWorkflowNode      CallerType = "workflow_node"
	CallerDirect            CallerType = "direct"
	// CallerProgram is a program's inner call (package program): only
	// tools whose AllowedCallers admit "program" run for it.
	CallerProgram CallerType = "program"
)

// Caller identifies who asked for a call, for permissions, limits and records.
type Caller struct {
	ID             string         `json:"id,omitempty"`
	Type           CallerType     `json:"type,omitempty"`
	ConversationID string         `json:"conversation_id,omitempty"`
	WorkflowID     string         `json:"workflow_id,omitempty"`
	UserID         string         `json:"user_id,omitempty"`
	Variables      map[string]any `json:"variables,omitempty"`
	// AllowedPaths narrows what the file tools may touch for this caller
	// (seed 003 ToolContext.allowedPaths). Each must lie inside the paths
	// the tools were configured with: a caller can narrow, never widen.
	// Empty means the configured paths.
	AllowedPaths []string `json:"allowed_paths,omitempty"`
}

// ForConversation is the caller of an agent in a conversation.
func ForConversation(agentID, conversationID string) Caller {
	return Caller{ID: agentID, Type: CallerConversationAgent, ConversationID: conversationID}
}

// ForWorkflow is the caller of a workflow node; such calls bypass the
// concurrency controller.
func ForWorkflow(workflowID, nodeID string) Caller {
	return Caller{ID: nodeID, Type: CallerWorkflowNode, WorkflowID: workflowID}
}

// Call is one request to run a tool.
type Call struct {
	// ID identifies the call in results, events and records; the engine
	// assigns one when empty.
	ID        string          `json:"id,omitempty"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Caller    Caller          `json:"caller"`
	// Timeout overrides the tool's timeout for this call. It also bounds
	// the wait for approval of a confirm tool: when it elapses first, the
	// caller is done with the call, which ends as canceled and ends its
	// approval (see [CanceledOnPurpose]); an approved call then gets the
	// whole Timeout to run.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Priority orders waiting calls under the priority strategy; higher first.
	Priority int `json:"priority,omitempty"`
	// IdempotencyKey makes a repeated call answer with the result of the
	// first successful one, without running again (the engine's store must
	// be a [Replayer]). Reusing a key with other arguments is refused.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// ApprovalID names an approval already granted for this very call (the
	// same ID, tool and arguments), so it runs without asking again: how a
	// call that waited for approval resumes after a restart.
	ApprovalID string `json:"approval_id,omitempty"`
	// Toolkit, when set, restricts the call to the tools of one agent.
	Toolkit *Toolkit `json:"-"`
}

type callKey struct{}

// WithCall returns a context that carries the call, for handlers that want to
// know their caller (see [CallFrom]).
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallKey is the context key under which a call travels: a
// context.Context implementation of its own that carries a call answers
// Value(CallKey) with it, as the engine's does (saving a context layer per
// call).
var CallKey any = callKey{}

// CallFrom returns the call a handler is running for, or nil outside the
// engine. The call must not be modified.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Invoker runs calls. The engine implements it; a [Toolkit] narrows one.
type Invoker interface {
	Call(ctx context.Context, c Call) (*Result, error)
}
