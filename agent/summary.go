package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/wieldhq/wield"
)

// ParentVariable is the caller variable in which a sub-agent's calls record
// the agent it works for, so that a summary read from the records can name
// it. A client of the REST API that makes a sub-agent's calls itself sets
// it the same way: "caller": {"id": …, "variables": {"parent_agent_id": …}}.
const ParentVariable = "parent_agent_id"

// MaxSummaryRecords bounds the records [RecordedSummary] reads: one page of
// a store, at its largest. A summary of a caller with more calls covers the
// newest of them and says so with Truncated.
const MaxSummaryRecords = 1000

// ExecutionSummary sums up what a sub-agent did (the ToolSubAgent's
// get_execution_summary). From a [SubAgent], the counts cover every call
// since it was made and CallDetails the calls still in its history; from
// [RecordedSummary], both cover the same newest records.
type ExecutionSummary struct {
	AgentID string `json:"agent_id"`
	// ParentAgentID is the agent the sub-agent works for, when known.
	ParentAgentID   string         `json:"parent_agent_id,omitempty"`
	TotalCalls      int            `json:"total_calls"`
	SuccessfulCalls int            `json:"successful_calls"`
	FailedCalls     int            `json:"failed_calls"`
	SuccessRate     float64        `json:"success_rate"` // percent, one decimal: 66.7
	ToolUsage       map[string]int `json:"tool_usage"`   // calls per tool
	CallDetails     []CallDetail   `json:"call_details"` // oldest first
	// Truncated reports that older calls are left out: of CallDetails for
	// a SubAgent whose history is full, of the whole summary for one read
	// from records (it covers the newest [MaxSummaryRecords]).
	Truncated bool `json:"truncated,omitempty"`
}

// CallDetail is one call of an [ExecutionSummary].
type CallDetail struct {
	Tool       string          `json:"tool"`
	OK         bool            `json:"ok"`
	Error      string          `json:"error,omitempty"`
	ErrorType  wield.ErrorType `json:"error_type,omitempty"`
	DurationMS float64         `json:"duration_ms"`
	CallID     string          `json:"call_id"`
}

// BriefSummary is the short form of an [ExecutionSummary], for a front end or
// an agent's final answer (the ToolCallSummary's to_brief).
type BriefSummary struct {
	TotalCalls  int            `json:"total_calls"`
	SuccessRate float64        `json:"success_rate"`
	ToolUsage   map[string]int `json:"tool_usage"`
	HasErrors   bool           `json:"has_errors"`
}

// Brief returns the brief form of s.
func (s ExecutionSummary) Brief() BriefSummary {
	return BriefSummary{TotalCalls: s.TotalCalls, SuccessRate: s.SuccessRate, ToolUsage: s.ToolUsage, HasErrors: s.FailedCalls > 0}
}

// Summarize sums up calls, oldest first, as the summary of agent agentID:
// the one computation behind [SubAgent.Summary] and [RecordedSummary], so
// that a sub-agent's summary reads the same from its history and from the
// records of its calls. Only Tool and Result of each entry are read; entries
// without a Result are skipped.
func Summarize(agentID string, calls []HistoryEntry) ExecutionSummary {
	s := ExecutionSummary{AgentID: agentID, ToolUsage: map[string]int{}, CallDetails: make([]CallDetail, 0, len(calls))}
	for _, h := range calls {
		r := h.Result
		if r == nil {
			continue
		}
		s.TotalCalls++
		if r.OK {
			s.SuccessfulCalls++
		}
		s.ToolUsage[h.Tool]++
		s.CallDetails = append(s.CallDetails, CallDetail{
			Tool:       h.Tool,
			OK:         r.OK,
			Error:      r.Error,
			ErrorType:  r.ErrorType,
			DurationMS: math.Round(float64(r.Duration)/float64(time.Microsecond)) / 1000,
			CallID:     r.CallID,
		})
	}
	s.FailedCalls = s.TotalCalls - s.SuccessfulCalls
	s.SuccessRate = rate(s.SuccessfulCalls, s.TotalCalls)
	return s
}

// SummaryQuery selects the records of a [RecordedSummary].
type SummaryQuery struct {
	// CallerID is the sub-agent: the caller ID of its calls. Required.
	CallerID string
	// ConversationID, when set, keeps the calls of one conversation only.
	// On SQLite, which has no index by caller, it also lets the query use
	// the conversation's index instead of reading the calls newest first
	// until it has enough of the caller's.
	ConversationID string
	// Keep, when set, leaves out the records it returns false for (a key's
	// scope, say). Left-out records still count toward MaxSummaryRecords.
	// A Keep that panics leaves the record out; the panic is contained,
	// logged and counted (see [wield.Protect]).
	Keep func(*wield.Record) bool
}

// ErrNoCaller is returned by [RecordedSummary] for a query without a
// CallerID.
var ErrNoCaller = errors.New("a summary needs a caller ID")

// RecordedSummary computes the [ExecutionSummary] of a caller from the
// records of its calls, with [Summarize]: what [SubAgent.Summary] gives in
// the process that ran the calls, for anyone reading the store afterwards
// (after a restart, on another server sharing it). It reads at most
// [MaxSummaryRecords] records, newest first, in one query; when the caller
// has more, the summary covers the newest ones and Truncated is set.
// ParentAgentID comes from the newest record whose caller has a string
// [ParentVariable]. A caller with no records gets an empty summary, not an
// error. The error wraps [ErrNoCaller] or the store's error.
func RecordedSummary(ctx context.Context, calls wield.CallReader, q SummaryQuery) (ExecutionSummary, error) {
	if q.CallerID == "" {
		return ExecutionSummary{}, fmt.Errorf("summarize recorded calls: %w", ErrNoCaller)
	}
	page, err := calls.Calls(ctx, wield.CallQuery{CallerID: q.CallerID, ConversationID: q.ConversationID, Limit: MaxSummaryRecords})
	if err != nil {
		return ExecutionSummary{}, fmt.Errorf("summarize the calls of %s: %w", q.CallerID, err)
	}
	entries := make([]HistoryEntry, 0, len(page.Records))
	parent := ""
	for _, rec := range page.Records { // newest first
		if rec == nil || rec.Call == nil || rec.Result == nil || (q.Keep != nil && !keep(q.Keep, rec)) {
			continue
		}
		if p, ok := rec.Call.Caller.Variables[ParentVariable].(string); ok && parent == "" {
			parent = p
		}
		entries = append(entries, HistoryEntry{Tool: rec.Call.Tool, Arguments: rec.Call.Arguments, Result: rec.Result, At: rec.Result.FinishedAt})
	}
	slices.Reverse(entries)
	s := Summarize(q.CallerID, entries)
	s.ParentAgentID = parent
	s.Truncated = page.Next != ""
	return s, nil
}

// rate is ok out of total in percent, rounded to one decimal; 0 for no calls.
func rate(ok, total int) float64 {
	if total == 0 {
		return 0
	}
	return math.Round(float64(ok)*1000/float64(total)) / 10
}

// keep asks q.Keep about rec; a panic leaves rec out, since Keep may be
// what keeps a key from seeing records outside its scope.
func keep(f func(*wield.Record) bool, rec *wield.Record) bool {
	ok := false
	wield.Protect(nil, wield.CallbackSummaryKeep, func() { ok = f(rec) })
	return ok
}
