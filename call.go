package wield

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"sync/atomic"
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
	// Timeout overrides the tool's timeout for this call.
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

var (
	idPrefix  [4]byte
	idCounter atomic.Uint64
)

func init() {
	_, _ = rand.Read(idPrefix[:])
	var b [8]byte
	_, _ = rand.Read(b[:])
	idCounter.Store(binary.BigEndian.Uint64(b[:]) >> 24) // room to count without wrapping
}

const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// NewID returns a unique, time-ordered identifier: 48 bits of milliseconds,
// 32 random bits fixed per process, and a 48-bit counter, in 26 characters of
// Crockford base32 (as a ULID). IDs from one process sort in creation order.
func NewID() string { return NewIDAt(time.Now()) }

// NewIDAt is [NewID] for a time the caller has already read.
func NewIDAt(t time.Time) string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[0:8], uint64(t.UnixMilli())<<16)
	copy(raw[6:10], idPrefix[:])
	n := idCounter.Add(1)
	raw[10] = byte(n >> 40)
	raw[11] = byte(n >> 32)
	binary.BigEndian.PutUint32(raw[12:16], uint32(n))
	return encodeID(&raw)
}

// encodeID writes 128 bits as 26 base32 digits, most significant first,
// unrolled as ULIDs are (a loop took longer than the rest of a call's set-up).
func encodeID(id *[16]byte) string {
	out := [26]byte{
		crockford[(id[0]&224)>>5], crockford[id[0]&31],
		crockford[(id[1]&248)>>3], crockford[((id[1]&7)<<2)|((id[2]&192)>>6)],
		crockford[(id[2]&62)>>1], crockford[((id[2]&1)<<4)|((id[3]&240)>>4)],
		crockford[((id[3]&15)<<1)|((id[4]&128)>>7)], crockford[(id[4]&124)>>2],
		crockford[((id[4]&3)<<3)|((id[5]&224)>>5)], crockford[id[5]&31],
		crockford[(id[6]&248)>>3], crockford[((id[6]&7)<<2)|((id[7]&192)>>6)],
		crockford[(id[7]&62)>>1], crockford[((id[7]&1)<<4)|((id[8]&240)>>4)],
		crockford[((id[8]&15)<<1)|((id[9]&128)>>7)], crockford[(id[9]&124)>>2],
		crockford[((id[9]&3)<<3)|((id[10]&224)>>5)], crockford[id[10]&31],
		crockford[(id[11]&248)>>3], crockford[((id[11]&7)<<2)|((id[12]&192)>>6)],
		crockford[(id[12]&62)>>1], crockford[((id[12]&1)<<4)|((id[13]&240)>>4)],
		crockford[((id[13]&15)<<1)|((id[14]&128)>>7)], crockford[(id[14]&124)>>2],
		crockford[((id[14]&3)<<3)|((id[15]&224)>>5)], crockford[id[15]&31],
	}
	return string(out[:])
}
