// Package agent provides the pieces an agent uses to call tools through wield.
//
// # Sub-agents
//
// A [SubAgent] is the tool-calling helper of one agent in one conversation
// (the ToolSubAgent of the tool engine's architecture). It runs calls through
// a [wield.Invoker], usually an *engine.Engine, as the agent's caller, keeps a
// bounded history of what it ran, and sums that history up for the agent's
// final answer or for a user interface:
//
//	e := engine.New(reg, nil)
//	sub := agent.NewSubAgent(e, agent.SubAgentOptions{
//		ID:             "tool_sub_agent_001",
//		ParentID:       "conversation_agent_001",
//		ConversationID: "conv_001",
//	})
//	res, err := sub.Execute(ctx, "echo", json.RawMessage(`{"message":"hi"}`), 30*time.Second)
//	results, err := sub.ExecuteBatch(ctx, []agent.BatchCall{
//		{Tool: "echo", Args: json.RawMessage(`{"message":"hello"}`)},
//		{Tool: "calculator", Args: json.RawMessage(`{"expression":"1+2"}`)},
//	})
//	summary := sub.Summary() // every call in detail
//	brief := sub.Brief()     // totals only, for a front end
//
// # Failures
//
// As everywhere in wield, a tool's failure is a [wield.Result] with OK false:
// it is recorded and counted like any other result. A Go error from Execute
// means the system failed (the engine is closed, its store is down).
//
// # Restricting tools
//
// With [SubAgentOptions.Toolkit] set, a call to a tool outside the toolkit
// fails with tool_not_found and the message "Tool 'x' not available in A's
// toolkit".
//
// # Summaries from the records
//
// A SubAgent's history lives in its process. Its calls are ordinary calls
// whose caller is {id: the sub-agent's ID, type: conversation_agent,
// conversation_id: …}, with the parent agent in the caller's variables
// under [ParentVariable], so every store keeps them: [RecordedSummary]
// computes the same [ExecutionSummary] from a store's records, after a
// restart or on another server sharing the store. That is what a wield
// server answers at GET /v1/callers/{id}/summary, for sub-agents that call
// it over REST. Both go through [Summarize].
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/wieldhq/wield"
)

// DefaultMaxHistory is how many calls a [SubAgent] remembers when
// [SubAgentOptions.MaxHistory] is zero.
const DefaultMaxHistory = 1000

// SubAgentOptions configure a [SubAgent]. The zero value is usable.
type SubAgentOptions struct {
	// ID identifies the sub-agent as the caller of its calls; empty means a
	// fresh [wield.NewID].
	ID string
	// ParentID is the agent the sub-agent works for. Summaries name it, and
	// every call records it in its caller's variables under
	// [ParentVariable], so that a summary read from the records names it
	// too.
	ParentID string
	// ConversationID is the conversation the calls belong to, so records and
	// events can be grouped by it.
	ConversationID string
	// Toolkit, when set, restricts the sub-agent to the toolkit's tools.
	Toolkit *wield.Toolkit
	// OnResult is called with every result after it is in the history, on the
	// goroutine that made the call; calls of ExecuteBatch run in parallel, so
	// OnResult must be safe for concurrent use. It must not modify the result.
	// A panic in it is contained, logged and counted (see [wield.Protect]);
	// the call's result stands.
	OnResult func(*wield.Result)
	// MaxHistory bounds the history; the oldest entries are dropped first.
	// Zero means [DefaultMaxHistory].
	MaxHistory int
}

// SubAgent runs the tool calls of one agent and remembers them (the
// ToolSubAgent of the tool engine's architecture). It is safe for concurrent
// use.
type SubAgent struct {
	inv      wield.Invoker
	id       string
	parentID string
	convID   string
	kit      *wield.Toolkit
	onResult func(*wield.Result)

	mu      sync.Mutex
	history []HistoryEntry // a ring of at most max entries, oldest at start
	start   int
	max     int
	total   int
	ok      int
	usage   map[string]int
}

// NewSubAgent returns a sub-agent that runs its calls through inv, usually an
// *engine.Engine.
func NewSubAgent(inv wield.Invoker, opts SubAgentOptions) *SubAgent {
	a := &SubAgent{
		inv:      inv,
		id:       opts.ID,
		parentID: opts.ParentID,
		convID:   opts.ConversationID,
		kit:      opts.Toolkit,
		onResult: opts.OnResult,
		max:      opts.MaxHistory,
		usage:    map[string]int{},
	}
	if a.id == "" {
		a.id = wield.NewID()
	}
	if a.max <= 0 {
		a.max = DefaultMaxHistory
	}
	return a
}

// ID returns the sub-agent's identifier, the caller ID of its calls.
func (a *SubAgent) ID() string { return a.id }

// ParentID returns the identifier of the agent the sub-agent works for.
func (a *SubAgent) ParentID() string { return a.parentID }

// ConversationID returns the conversation of the sub-agent's calls.
func (a *SubAgent) ConversationID() string { return a.convID }

// Execute runs one tool with args (a JSON object; nil means none) as the
// sub-agent's caller, within its toolkit if it has one. A timeout of zero
// leaves the tool's own.
//
// The result is added to the history and passed to OnResult before Execute
// returns. A tool's failure is a result with OK false and a nil error; the
// error is non-nil only when the system failed; it wraps the invoker's error
// ([wield.ErrClosed] from a closed engine, a store's error), and the result,
// if any (the tool ran but its record was not kept), is still recorded.
func (a *SubAgent) Execute(ctx context.Context, tool string, args json.RawMessage, timeout time.Duration) (*wield.Result, error) {
	c := wield.Call{
		Tool:      tool,
		Arguments: args,
		Caller:    wield.ForConversation(a.id, a.convID),
		Timeout:   timeout,
		Toolkit:   a.kit,
	}
	if a.parentID != "" {
		c.Caller.Variables = map[string]any{ParentVariable: a.parentID}
	}
	res, err := a.inv.Call(ctx, c)
	if res != nil {
		a.record(tool, args, res)
		if a.onResult != nil {
			// A panic in it must not end the process: ExecuteBatch calls
			// it on goroutines of its own.
			wield.Protect(nil, wield.CallbackSubagentOnResult, func() { a.onResult(res) })
		}
	}
	if err != nil {
		return res, fmt.Errorf("execute %s for sub-agent %s: %w", tool, a.id, err)
	}
	return res, nil
}

func (a *SubAgent) record(tool string, args json.RawMessage, res *wield.Result) {
	h := HistoryEntry{Tool: tool, Arguments: slices.Clone(args), Result: res, At: time.Now()}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total++
	if res.OK {
		a.ok++
	}
	a.usage[tool]++
	if len(a.history) < a.max {
		a.history = append(a.history, h)
		return
	}
	a.history[a.start] = h
	a.start = (a.start + 1) % a.max
}

// BatchCall is one call of [SubAgent.ExecuteBatch].
type BatchCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
}

// ExecuteBatch runs calls in parallel, each as [SubAgent.Execute] with the
// tool's own timeout, and returns their results in the order of calls. The
// history has them in the order they finished. The invoker's limits apply
// to each call: a batch larger than an engine's capacity and queue gets
// rejected results for the excess. A result is nil only where
// the system failed for that call; the error joins those failures.
func (a *SubAgent) ExecuteBatch(ctx context.Context, calls []BatchCall) ([]*wield.Result, error) {
	results := make([]*wield.Result, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			results[i], errs[i] = a.Execute(ctx, c.Tool, c.Args, 0)
		})
	}
	wg.Wait()
	return results, errors.Join(errs...)
}

// HistoryEntry is one call the sub-agent made. Result must not be modified.
type HistoryEntry struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    *wield.Result   `json:"result"`
	At        time.Time       `json:"at"` // when the result arrived
}

// History returns the remembered calls, oldest first: the last MaxHistory of
// them.
func (a *SubAgent) History() []HistoryEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.historyLocked()
}

func (a *SubAgent) historyLocked() []HistoryEntry {
	out := make([]HistoryEntry, 0, len(a.history))
	out = append(out, a.history[a.start:]...)
	return append(out, a.history[:a.start]...)
}

// Summary returns the full summary of the sub-agent's calls: the counts of
// every call since the sub-agent was made, and the details of the calls
// still in its history (Truncated when older ones fell out of it).
func (a *SubAgent) Summary() ExecutionSummary {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Summarize(a.id, a.historyLocked())
	s.ParentAgentID = a.parentID
	if a.total > len(a.history) {
		// The counts still cover the calls that fell out of the history.
		s.TotalCalls, s.SuccessfulCalls, s.FailedCalls = a.total, a.ok, a.total-a.ok
		s.SuccessRate, s.ToolUsage = rate(a.ok, a.total), maps.Clone(a.usage)
		s.Truncated = true
	}
	return s
}

// Brief returns the brief summary of the sub-agent's calls.
func (a *SubAgent) Brief() BriefSummary { return a.Summary().Brief() }
