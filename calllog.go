package wield

import (
	"context"
	"time"

	"github.com/wieldhq/wield/internal/jsonenc"
)

// CallQuery selects records. Empty fields do not filter.
type CallQuery struct {
	ConversationID string    `json:"conversation_id,omitempty"`
	Tool           string    `json:"tool,omitempty"`
	CallerID       string    `json:"caller_id,omitempty"`
	WorkflowID     string    `json:"workflow_id,omitempty"`
	UserID         string    `json:"user_id,omitempty"`
	Status         string    `json:"status,omitempty"` // "ok", "error" or empty for both
	Since          time.Time `json:"since,omitzero"`   // queued at or after
	Until          time.Time `json:"until,omitzero"`   // queued before
	// Limit is the page size: 100 when 0, at most 1000.
	Limit int `json:"limit,omitempty"`
	// Cursor continues a previous page (CallPage.Next).
	Cursor string `json:"cursor,omitempty"`
}

// CallPage is one page of records, newest first, and the cursor of the next
// page ("" when there is none).
type CallPage struct {
	Records []*Record `json:"records"`
	Next    string    `json:"next,omitempty"`
}

// CallReader answers questions about recorded calls. Call returns an error
// wrapping [ErrNotFound] for an unknown ID.
type CallReader interface {
	Calls(ctx context.Context, q CallQuery) (CallPage, error)
	Call(ctx context.Context, id string) (*Record, error)
}

// Summary is seed 004's ToolCallSummary of one conversation.
type Summary struct {
	ConversationID  string         `json:"conversation_id"`
	TotalCalls      int            `json:"total_calls"`
	SuccessfulCalls int            `json:"successful_calls"`
	FailedCalls     int            `json:"failed_calls"`
	SuccessRate     float64        `json:"success_rate"` // percent, 0 to 100
	ToolUsage       map[string]int `json:"tool_usage"`
	HasErrors       bool           `json:"has_errors"`
}

// BriefSummary is seed 004 §5.3's to_brief(): what a final answer carries.
type BriefSummary struct {
	TotalCalls  int            `json:"total_calls"`
	SuccessRate float64        `json:"success_rate"`
	ToolUsage   map[string]int `json:"tool_usage"`
	HasErrors   bool           `json:"has_errors"`
}

// Brief returns the brief form.
func (s Summary) Brief() BriefSummary {
	return BriefSummary{TotalCalls: s.TotalCalls, SuccessRate: s.SuccessRate, ToolUsage: s.ToolUsage, HasErrors: s.HasErrors}
}

// LatencyStats are counts and latency percentiles of a set of calls.
type LatencyStats struct {
	Count       int64         `json:"count"`
	Failures    int64         `json:"failures"`
	SuccessRate float64       `json:"success_rate"` // percent
	P50         time.Duration `json:"-"`
	P95         time.Duration `json:"-"`
	Max         time.Duration `json:"-"`
}

// MarshalJSON writes the latencies in milliseconds, and text as it is
// (internal/jsonenc).
func (l LatencyStats) MarshalJSON() ([]byte, error) {
	type plain LatencyStats
	return jsonenc.Marshal(struct {
		plain
		P50 float64 `json:"p50_ms"`
		P95 float64 `json:"p95_ms"`
		Max float64 `json:"max_ms"`
	}{plain(l), ms(l.P50), ms(l.P95), ms(l.Max)})
}

// StatsQuery narrows statistics; empty fields do not filter.
type StatsQuery struct {
	ConversationID string
	Since, Until   time.Time
	// Tools, when not nil, keeps the calls of these tools only; an empty
	// non-nil list keeps none. A server sets it to the tools an API key
	// reaches, so that the totals and categories of a scoped key count no
	// call of tools out of its scope.
	Tools []string
	// Hidden leaves out the calls of these tools, except those for which
	// no tool was found (error type tool_not_found, with neither a tool
	// version nor a category: what a call of a tool that does not exist
	// records, and a call of a tool hidden from its caller too). A server
	// sets it to the tools the policies hide from a caller, so that its
	// figures tell no more of them than of tools that do not exist.
	Hidden []string
}

// Statistics describe many calls: overall, per tool and per category.
type Statistics struct {
	Overall    LatencyStats              `json:"overall"`
	Tools      map[string]LatencyStats   `json:"tools"`
	Categories map[Category]LatencyStats `json:"categories"`
}

// CallStats summarises recorded calls.
type CallStats interface {
	Summary(ctx context.Context, conversationID string) (Summary, error)
	Statistics(ctx context.Context, q StatsQuery) (Statistics, error)
}

// Replayer finds the successful call of a tool made with an idempotency key,
// so that a repeated call returns it instead of running again. It returns
// nil, nil when there is none.
type Replayer interface {
	Replay(ctx context.Context, tool, key string) (*Record, error)
}
