package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/internal/jsonenc"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/toolsearch"
)

// Agent is one agent the loop can run: its model, its instructions and its
// tools.
type Agent struct {
	// Name identifies the agent, as call_subagent names it.
	Name string
	// Instructions open the conversation as its system message.
	Instructions string
	// Model answers the agent's turns.
	Model llm.Model
	// Toolkit is the agent's tools; a nil Toolkit means none.
	Toolkit *wield.Toolkit
	// Strategy says how tools reach the model; the zero value means native
	// function calling with the prompt fallback allowed, in the XML call
	// format.
	Strategy llm.OutputStrategy
}

// LoopOptions configure a [Loop]. The zero value is usable.
type LoopOptions struct {
	// MaxSteps bounds the model turns of one Run (of each agent, when
	// call_subagent hands work on); 10 when zero.
	MaxSteps int
	// SearchThreshold is the toolkit size above which the model is offered
	// search_tools instead of every definition (toolsearch.DefaultThreshold
	// when zero; negative never). Its calls run through the invoker like any
	// other, so they are recorded: the loop uses the engine's registered
	// search_tools (registering toolsearch's, which searches each caller's
	// toolkit, when the registry has none: see [toolsearch.Offer]), and
	// the run's calls are confined to the agent's toolkit and search_tools.
	// The agent's toolkit itself is left as it is. An invoker without a
	// Registry method (not an engine) has the search run in the loop
	// instead, unrecorded.
	SearchThreshold int
	// Agents are the agents call_subagent may hand work to, by name.
	Agents map[string]*Agent
	// MaxDepth bounds the agents in one chain of hand-offs, the first one
	// included: 3 when zero, so two hand-offs.
	MaxDepth int
	// MaxTurns bounds the model requests of one Run, every agent's: the
	// agent Run was given and each sub-agent it hands work to, directly or
	// not. MaxSteps × MaxDepth when zero (30 with the defaults), so a reply
	// holding many call_subagent calls, whose sub-agents do the same,
	// cannot make the model's spend grow with the calls a model wrote.
	// A sub-agent is asked only while turns are left for it: the last ones
	// are kept for the agents it works for, one for each agent above it in
	// the chain, so each can still answer with what it has. A sub-agent that
	// finds the budget spent (before it starts, or during its work) makes
	// its call_subagent fail (permission_denied, "the run's budget of N
	// model turns is spent; answer with what you have"); the agent Run was
	// given stops with [ErrMaxTurns] when it finds the budget spent. A
	// request a model refused for its tools, asked again with the tools in
	// the prompt, counts as a turn (it is not a step). [Outcome.Turns] says
	// how many turns the Run took.
	MaxTurns int
	// MaxHistory bounds the conversation each model request sends, in
	// bytes (about four to a token; see [llm.HistorySize]): before each
	// request the oldest turns are left out, as [llm.TrimHistory] leaves
	// them, keeping the system message and the latest turns, and never a
	// call without its result. The turn of the latest user message is
	// always sent whole, even when it alone is over the bound. Messages
	// left out are out of [Outcome.Messages] too, so a chat that passes
	// Outcome.Messages back to the next Run holds no more than the bound
	// and one turn; [Outcome.Dropped] counts them. Zero or less is no
	// bound: every request sends the whole conversation.
	MaxHistory int
	// MaxCallsPerReply bounds the calls one model reply may have run
	// ([DefaultMaxCallsPerReply] when zero; negative: no bound). The
	// first ones, up to the bound, run; each call past it is answered,
	// without running, with a rejected result that says so, and counted in
	// [Outcome.Unrun]: a reply is bounded only by the size of a model's
	// answer, and a model told to (a prompt injection) could otherwise ask
	// for hundreds of thousands of calls at once, a goroutine and a record
	// each. [LoopOptions.OnCall] sees only the calls that run.
	MaxCallsPerReply int
	// OnMessage, when set, sees each message a run adds to the conversation,
	// once: the system message it writes (when new or changed), the model's
	// replies, the results, and the instruction a sub-agent is handed. The
	// messages given to Run are the caller's own and are not repeated, so a
	// chat that passes its whole history each turn sees every message once.
	// A panic in it is contained, logged and counted (see [wield.Protect]);
	// the conversation goes on.
	OnMessage func(agent string, m llm.Message)
	// OnCall, when set, sees each tool call the model asked for, in either
	// strategy (native calls, or calls written in the text in the prompt
	// strategy, where the reply's ToolCalls stay empty): once with a nil
	// result as it is about to run, once with its result. A panic in it is
	// contained, logged and counted like OnMessage's.
	OnCall func(agent string, c llm.ToolCall, r *wield.Result)
	// OnFallback, when set, is told when a model refused the tools it was
	// offered natively ([llm.ErrToolsUnsupported]: Ollama's "… does not
	// support tools", vLLM without a tool parser) and the loop asked again
	// with the tools in the prompt, as the agent's output strategy allows:
	// once per model, since the refusal is remembered for the process's
	// lifetime and that model is offered its tools in the prompt from then
	// on, by every loop.
	// err is the model's refusal. A panic in it is contained like
	// OnMessage's.
	OnFallback func(agent string, err error)
}

// Loop runs agents: messages go to the model, the calls it asks for (native
// or written in its text) run through the invoker, their results go back,
// until the model answers without calls or the step limit is reached.
//
// Several calls in one turn run in parallel. A failed call goes back to the
// model as its result, so it can correct itself. A successful call_subagent
// hands its instruction to the named agent, which runs its own loop; that
// agent's answer is the call's result, as the model, OnCall and OnMessage
// get it. The engine's record of the call keeps what call_subagent
// answered, the routing directive, since it is saved before the hand-off:
// the answer is not in the store (the sub-agent's calls are, under its
// name in the same conversation).
//
// The hand-offs of one reply run one after another, once the reply's calls
// have run: one sub-agent works at a time (a reply of 200 call_subagent
// calls does not start 200 loops at once), and all of them, at every
// depth, share the Run's budget of model turns ([LoopOptions.MaxTurns]).
type Loop struct {
	inv  wield.Invoker
	opts LoopOptions
}

// refusals are the models that refused native tools, by identity (see
// modelKey), for the process's lifetime: a model client is made once and
// shared, and what its server takes does not change while it runs.
var refusals struct {
	mu sync.Mutex
	m  map[any]bool
}

// maxRemembered bounds the models remembered as refusing tools: a program
// that makes a client per request must not grow the process without end.
// Past it, a refusal is detected again on each run.
const maxRemembered = 1024

// NewLoop returns a loop that runs calls through inv, usually an
// *engine.Engine.
func NewLoop(inv wield.Invoker, opts *LoopOptions) *Loop {
	l := &Loop{inv: inv}
	if opts != nil {
		l.opts = *opts
	}
	if l.opts.MaxSteps <= 0 {
		l.opts.MaxSteps = 10
	}
	if l.opts.MaxDepth <= 0 {
		l.opts.MaxDepth = 3
	}
	if l.opts.MaxTurns <= 0 {
		l.opts.MaxTurns = l.opts.MaxSteps * l.opts.MaxDepth
	}
	if l.opts.MaxCallsPerReply == 0 {
		l.opts.MaxCallsPerReply = DefaultMaxCallsPerReply
	}
	return l
}

// DefaultMaxCallsPerReply is [LoopOptions.MaxCallsPerReply] when zero.
const DefaultMaxCallsPerReply = 64

// Outcome is what a [Loop.Run] produced.
type Outcome struct {
	// Answer is the model's last text.
	Answer string
	// Messages is the whole conversation, the given messages first, less
	// the older messages [LoopOptions.MaxHistory] left out, and less a
	// reply whose calls the system failed to run (it would be a call
	// without its result, which providers refuse).
	Messages []llm.Message
	// Dropped counts the messages MaxHistory left out of the
	// conversation (of those given and those the Run added).
	Dropped int
	// Unrun counts the calls the agent's replies asked for past
	// [LoopOptions.MaxCallsPerReply]: answered as rejected, not run.
	Unrun int
	// Steps counts the model turns of the agent Run was given (each
	// sub-agent has steps of its own, up to MaxSteps).
	Steps int
	// Turns counts the model requests of the whole Run, the sub-agents'
	// included, as [LoopOptions.MaxTurns] bounds them.
	Turns int
	// Strategy is how tools were offered.
	Strategy llm.Strategy
	// Summary covers every call the agent made (not its sub-agents').
	Summary ExecutionSummary
}

// ErrMaxSteps is returned, with the outcome so far, when the model still
// asked for calls after the last step.
var ErrMaxSteps = errors.New("agent: step limit reached before an answer")

// ErrMaxTurns is returned, with the outcome so far, when the Run's budget
// of model turns ([LoopOptions.MaxTurns], shared by every agent of its
// chain of hand-offs) was spent before the agent Run was given answered.
// It is not [ErrMaxSteps]: that one bounds one agent's turns, this one
// the whole Run's.
var ErrMaxTurns = errors.New("agent: the run's budget of model turns is spent before an answer")

// Run runs agent a on the conversation so far (usually one user message)
// in conversation conv. The error is non-nil when the model could not be
// asked ([llm.ErrNoStrategy], a provider error, [llm.ErrToolsUnsupported]
// when the output strategy forbids the fallback), when the system failed,
// or with [ErrMaxSteps] or [ErrMaxTurns]; the outcome so far comes with it.
//
// A model that refuses native tools ([llm.ErrToolsUnsupported]) is asked
// the same turn again with the tools in the prompt when the agent's output
// strategy allows the fallback, and is offered its tools in the prompt for
// the rest of the process's life, by every loop (see
// [LoopOptions.OnFallback]).
func (l *Loop) Run(ctx context.Context, a *Agent, conv string, messages []llm.Message) (*Outcome, error) {
	b := &budget{max: int64(l.opts.MaxTurns)}
	out, err := l.run(ctx, a, conv, messages, 0, b)
	if out != nil {
		out.Turns = int(b.used.Load())
	}
	return out, err
}

// budget is the model turns of one Run, shared by every agent of its
// chain of hand-offs.
type budget struct {
	max  int64
	used atomic.Int64
}

// take takes a turn for an agent depth hand-offs below the first, and
// reports whether there was one for it: the last depth turns are kept for
// the agents above it, one each.
func (b *budget) take(depth int) bool {
	for {
		u := b.used.Load()
		if u >= b.max-int64(depth) {
			return false
		}
		if b.used.CompareAndSwap(u, u+1) {
			return true
		}
	}
}

// left reports whether a turn is left for an agent depth hand-offs below
// the first.
func (b *budget) left(depth int) bool { return b.used.Load() < b.max-int64(depth) }

// spent is what a call_subagent answers when the budget is spent.
func (b *budget) spent() string {
	return fmt.Sprintf("the run's budget of %d model turns is spent; answer with what you have", b.max)
}

func (l *Loop) run(ctx context.Context, a *Agent, conv string, messages []llm.Message, depth int, b *budget) (*Outcome, error) {
	cfg := a.Strategy.OrDefault()
	strategy, err := llm.DetectStrategy(a.Model, cfg)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.Name, err)
	}
	if strategy == llm.StrategyNative && cfg.FallbackToStructuredOutput && refused(a.Model) {
		strategy = llm.StrategyPrompt
	}
	t := &turns{l: l, a: a, strategy: strategy, format: cfg.PromptFormat, depth: depth, conv: conv, budget: b}
	kit := t.prepareTools(ctx)
	sub := NewSubAgent(l.inv, SubAgentOptions{ID: a.Name, ConversationID: conv, Toolkit: kit})
	t.sub = sub
	out := &Outcome{Strategy: strategy}
	msgs := t.withSystem(slices.Clone(messages))
	defer func() { out.Summary = sub.Summary() }()
	for out.Steps < l.opts.MaxSteps {
		if strategy == llm.StrategyPrompt && out.Steps > 0 && t.catalogChanged {
			msgs[0] = llm.Message{Role: llm.RoleSystem, Content: t.system()}
			t.catalogChanged = false
		}
		if kept, n := llm.TrimHistory(msgs, l.opts.MaxHistory); n > 0 {
			msgs = kept
			out.Dropped += n
		}
		req := &llm.ModelRequest{Messages: msgs}
		if strategy == llm.StrategyNative {
			req.Tools = t.offered
		}
		if !b.take(depth) {
			out.Messages = msgs
			return out, fmt.Errorf("agent %s, step %d: %w (%d turns, every agent's)", a.Name, out.Steps+1, ErrMaxTurns, b.max)
		}
		resp, err := a.Model.Generate(ctx, req)
		out.Steps++
		if err != nil && strategy == llm.StrategyNative && errors.Is(err, llm.ErrToolsUnsupported) {
			if !cfg.FallbackToStructuredOutput {
				out.Messages = msgs
				return out, fmt.Errorf("agent %s, step %d: %w; to describe the tools in the prompt instead, set fallback_to_structured_output: true in the agent's output_strategy", a.Name, out.Steps, err)
			}
			// The same turn again, with the tools in the prompt; the
			// refused request is not a step.
			out.Steps--
			strategy, t.strategy, out.Strategy = llm.StrategyPrompt, llm.StrategyPrompt, llm.StrategyPrompt
			if remember(a.Model) && l.opts.OnFallback != nil {
				wield.Protect(nil, wield.CallbackAgentOnFallback, func() { l.opts.OnFallback(a.Name, err) })
			}
			msgs = t.withSystem(msgs)
			t.catalogChanged = false
			continue
		}
		if err != nil {
			out.Messages = msgs
			return out, fmt.Errorf("agent %s, step %d: %w", a.Name, out.Steps, err)
		}
		reply := resp.Message
		reply.Role = llm.RoleAssistant
		var parseNote string
		if strategy == llm.StrategyPrompt {
			reply.ToolCalls = nil
		} else {
			reply.ToolCalls = uniqueIDs(msgs, reply.ToolCalls)
		}
		calls := reply.ToolCalls
		if strategy == llm.StrategyPrompt {
			calls, parseNote = t.parse(reply.Content)
		}
		msgs = append(msgs, reply)
		l.notify(a, reply)
		if len(calls) == 0 && parseNote == "" {
			out.Answer, out.Messages = reply.Content, msgs
			return out, nil
		}
		all := calls
		if max := l.opts.MaxCallsPerReply; max > 0 && len(calls) > max {
			calls = calls[:max]
			out.Unrun += len(all) - max
		}
		for _, c := range calls {
			l.called(a, c, nil)
		}
		results, err := t.execute(ctx, calls)
		if err == nil {
			for i, c := range calls {
				l.called(a, c, results[i])
			}
			for _, c := range all[len(calls):] {
				results = append(results, unrun(c, len(all), len(calls)))
			}
			calls = all
		}
		if err != nil {
			// The reply's calls got no results: the conversation is
			// returned without them, as a provider refuses a call
			// without its result in every request after.
			out.Messages = msgs[:len(msgs)-1]
			return out, fmt.Errorf("agent %s, step %d: %w", a.Name, out.Steps, err)
		}
		msgs[len(msgs)-1] = withoutRefused(msgs[len(msgs)-1], strategy, results)
		if strategy == llm.StrategyNative {
			for i, c := range calls {
				m := llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Result: results[i]}
				msgs = append(msgs, m)
				l.notify(a, m)
			}
			continue
		}
		// In the prompt strategy results go back as text, in the prompt
		// format's form (the XML call format's <tool_result>, or the JSON
		// fallback's ToolMessage), in one user message.
		var b strings.Builder
		for _, r := range results {
			b.WriteString(t.format.Result(r))
			b.WriteString("\n")
		}
		if parseNote != "" {
			b.WriteString(parseNote)
		}
		m := llm.Message{Role: llm.RoleUser, Content: strings.TrimSpace(b.String())}
		msgs = append(msgs, m)
		l.notify(a, m)
	}
	out.Messages = msgs
	return out, fmt.Errorf("agent %s: %w (%d steps)", a.Name, ErrMaxSteps, l.opts.MaxSteps)
}

// unrun is the result of call c, one of a reply's total calls, past the
// max one reply may have run: it did not run.
func unrun(c llm.ToolCall, total, max int) *wield.Result {
	return &wield.Result{
		Tool:      safetext.Clip(c.Name, maxCallName),
		ErrorType: wield.ErrRejected,
		Error:     fmt.Sprintf("not run: one reply may ask for at most %d calls, and this one asked for %d; ask for this call again in a later reply if it is still needed", max, total),
	}
}

// uniqueIDs returns calls, with an ID of its own given to each call whose
// ID is empty or was used before, in this reply or earlier in msgs: each
// result answers its call by ID, and a model (or a server speaking for
// one) that sends two calls under one ID, or calls without IDs, would
// leave the provider unable to tell which result is whose (Anthropic
// refuses such a conversation; OpenAI pairs them as it likes). The new ID
// is the old one with "_2", "_3"… (or "call_N" for none). calls is copied
// before it is changed.
func uniqueIDs(msgs []llm.Message, calls []llm.ToolCall) []llm.ToolCall {
	if len(calls) == 0 {
		return calls
	}
	used := make(map[string]bool)
	for _, m := range msgs {
		for _, p := range m.ToolCalls {
			used[p.ID] = true
		}
	}
	copied := false
	for i, c := range calls {
		if c.ID != "" && !used[c.ID] {
			used[c.ID] = true
			continue
		}
		if !copied {
			calls, copied = slices.Clone(calls), true
		}
		base := cmp.Or(c.ID, "call")
		for n := i + 1; ; n++ {
			if id := fmt.Sprintf("%s_%d", base, n); !used[id] {
				calls[i].ID, used[id] = id, true
				break
			}
		}
	}
	return calls
}

// maxRefusedReply bounds what the conversation keeps of a reply in the
// prompt strategy whose call the engine refused for the size of its
// arguments: its head, which shows the model what it wrote.
const maxRefusedReply = 4 << 10

// withoutRefused is reply as the conversation keeps it once its calls have
// run. A call whose arguments the engine refused for their size (its
// result's arguments_bytes, over the engine's MaxArguments) keeps {} in
// their place, and a reply in the prompt strategy holding such a call
// keeps its head: the result says how large they were, and without this a
// model's 50 MB of arguments would go back to it in every request after,
// and stay in a chat's memory. A native call whose arguments are not a
// JSON object (its result says so) keeps {} too: Anthropic's input and
// Gemini's args can hold nothing else, and the next request would be
// refused for them, ending the turn.
func withoutRefused(reply llm.Message, strategy llm.Strategy, results []*wield.Result) llm.Message {
	refused := func(r *wield.Result) bool {
		if r == nil || r.OK {
			return false
		}
		_, ok := r.Metadata["arguments_bytes"]
		return ok
	}
	if strategy != llm.StrategyNative {
		if slices.ContainsFunc(results, refused) {
			reply.Content = safetext.Clip(reply.Content, maxRefusedReply)
		}
		return reply
	}
	copied := false
	for i, c := range reply.ToolCalls {
		if i < len(results) && !refused(results[i]) && isObject(c.Arguments) {
			continue
		}
		if !copied {
			reply.ToolCalls, copied = slices.Clone(reply.ToolCalls), true
		}
		reply.ToolCalls[i].Arguments = json.RawMessage(`{}`)
	}
	return reply
}

// isObject reports whether args is a JSON object.
func isObject(args json.RawMessage) bool {
	t := bytes.TrimLeft(args, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// modelKey is what identifies m among the models a loop remembers: the
// client itself, when its type can be a map key.
func modelKey(m llm.Model) (any, bool) {
	if m == nil || !reflect.TypeOf(m).Comparable() {
		return nil, false
	}
	return m, true
}

// refused reports whether m refused native tools before.
func refused(m llm.Model) bool {
	k, ok := modelKey(m)
	if !ok {
		return false
	}
	refusals.mu.Lock()
	defer refusals.mu.Unlock()
	return refusals.m[k]
}

// remember notes that m refused native tools; it reports whether that is
// news.
func remember(m llm.Model) bool {
	k, ok := modelKey(m)
	if !ok {
		return true
	}
	refusals.mu.Lock()
	defer refusals.mu.Unlock()
	if refusals.m[k] {
		return false
	}
	if refusals.m == nil {
		refusals.m = map[any]bool{}
	}
	if len(refusals.m) < maxRemembered {
		refusals.m[k] = true
	}
	return true
}

func (l *Loop) notify(a *Agent, m llm.Message) {
	if l.opts.OnMessage != nil {
		wield.Protect(nil, wield.CallbackAgentOnMessage, func() { l.opts.OnMessage(a.Name, m) })
	}
}

func (l *Loop) called(a *Agent, c llm.ToolCall, r *wield.Result) {
	if l.opts.OnCall != nil {
		wield.Protect(nil, wield.CallbackAgentOnCall, func() { l.opts.OnCall(a.Name, c, r) })
	}
}

// turns is the state of one agent's run.
type turns struct {
	l        *Loop
	a        *Agent
	sub      *SubAgent
	strategy llm.Strategy
	format   llm.PromptFormat
	depth    int
	conv     string
	budget   *budget // the Run's model turns

	all     []*wield.Tool          // the toolkit
	byName  map[string]*wield.Tool // the toolkit, by name
	offered []*wield.Tool          // what the model sees now
	search  *wield.Tool            // search_tools, when the toolkit is large
	// searchHere says search_tools runs in the loop, not through the
	// invoker: the invoker has no registry to hold it (see searchTool).
	searchHere bool
	// catalogChanged says search_tools loaded definitions that the prompt
	// strategy's system message does not list yet.
	catalogChanged bool
}

// prepareTools works out what the model is offered, and returns the
// toolkit the run's calls are confined to: the agent's, or, when the model
// is offered the registry's search_tools and the agent's toolkit lacks it,
// a toolkit of the run's own that adds it (the agent's toolkit is a
// registered one that lists, REST, MCP and other runs see: a run does not
// change it).
func (t *turns) prepareTools(ctx context.Context) *wield.Toolkit {
	kit := t.a.Toolkit
	if t.a.Toolkit != nil {
		t.all = t.a.Toolkit.Tools()
		// What the engine's policies deny this agent is not offered (nor
		// found by search_tools), as no list shows it: the one filter of
		// lists, which also describes run_program for this toolkit.
		if e, ok := t.l.inv.(interface {
			Policy() wield.Policy
			Registry() *wield.Registry
		}); ok {
			t.all = wield.ListFor(ctx, e.Policy(), e.Registry(), wield.ForConversation(t.a.Name, t.conv), t.a.Toolkit, t.all)
		}
	}
	t.byName = make(map[string]*wield.Tool, len(t.all))
	for _, tl := range t.all {
		t.byName[tl.Name] = tl
	}
	t.offered = t.all
	th := t.l.opts.SearchThreshold
	if th == 0 {
		th = toolsearch.DefaultThreshold
	}
	if th > 0 && len(t.all) > th {
		var reg *wield.Registry
		if t.a.Toolkit != nil {
			if e, ok := t.l.inv.(interface{ Registry() *wield.Registry }); ok {
				reg = e.Registry()
			}
		}
		t.search = searchTool(reg, th)
		switch {
		case t.search == nil:
			ix := toolsearch.New(t.all)
			t.search, t.searchHere = toolsearch.Tool(func() *toolsearch.Index { return ix }, nil), true
		case !kit.Has(t.search.Name):
			kit = reg.NarrowToolkit(kit.Agent(), append(kit.Names(), t.search.Name), nil)
		}
		t.offered = toolsearch.Catalog(t.all, th, t.search)
	}
	return kit
}

// searchTool returns the search_tools of reg (registered by
// [toolsearch.Offer] when reg has none), so that the model's searches go
// through the engine like any call: checked, limited, recorded under the
// agent's conversation, announced; toolsearch's searches the toolkit of
// each call. It returns nil without a registry (the invoker is not an
// engine) or when the name cannot be used; the loop then runs the search
// itself, unrecorded.
func searchTool(reg *wield.Registry, threshold int) *wield.Tool {
	if reg == nil {
		return nil
	}
	t, err := toolsearch.Offer(reg, threshold)
	if err != nil || t == nil || !t.Callable() {
		return nil
	}
	return t
}

// system is the system message: the agent's instructions and, in the
// prompt strategy, the tools in the prompt format's form.
func (t *turns) system() string {
	s := t.a.Instructions
	if t.strategy == llm.StrategyPrompt && len(t.offered) > 0 {
		if s != "" {
			s += "\n\n"
		}
		s += t.format.Instructions(t.offered)
	}
	return s
}

// withSystem puts the system message first in msgs, replacing the one
// there, and tells OnMessage when it is new or changed. Without
// instructions and tools in the prompt, msgs stay as they are.
func (t *turns) withSystem(msgs []llm.Message) []llm.Message {
	if t.a.Instructions == "" && (t.strategy != llm.StrategyPrompt || len(t.offered) == 0) {
		return msgs
	}
	sys := llm.Message{Role: llm.RoleSystem, Content: t.system()}
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		if msgs[0].Content != sys.Content {
			t.l.notify(t.a, sys)
		}
		msgs[0] = sys
		return msgs
	}
	t.l.notify(t.a, sys)
	return append([]llm.Message{sys}, msgs...)
}

// parse reads the calls written in a reply; calls drafted in its reasoning
// are not among them (see llm.Parse). A call that could not be read (cut
// off mid-way, a value whose end cannot be told, inside reasoning never
// closed) is answered with a note, so the model writes it again whole.
func (t *turns) parse(text string) ([]llm.ToolCall, string) {
	parsed, err := llm.Parse(text, &llm.ParseOptions{Format: llm.FormatAuto, Schema: func(name string) *jsonschema.Schema {
		if tl := t.byName[name]; tl != nil {
			return tl.InputSchema
		}
		return nil
	}})
	calls := make([]llm.ToolCall, len(parsed))
	for i, p := range parsed {
		calls[i] = llm.ToolCall{ID: fmt.Sprintf("call_%d", i+1), Name: p.Name, Arguments: p.Arguments}
	}
	var inc *llm.IncompleteError
	if errors.As(err, &inc) {
		return calls, "A tool call in your last reply could not be read (" + inc.Lost + "); write it again, complete, outside your reasoning."
	}
	return calls, ""
}

// maxCallName bounds the name a call goes to the engine with: the longest
// a tool's can be (wield.Tool.Check). A longer name (a model's 10 MB of
// text where a name goes) names no tool, and is clipped, marked with "…",
// so that its record and its tool_not_found result are not the size of
// the name.
const maxCallName = 128

// execute runs the calls of one turn, in parallel, and returns their
// results in order. search_tools and call_subagent are handled here: the
// hand-offs one after another, once every call has run.
func (t *turns) execute(ctx context.Context, calls []llm.ToolCall) ([]*wield.Result, error) {
	results := make([]*wield.Result, len(calls))
	var batch []BatchCall
	var at []int
	for i, c := range calls {
		args := c.Arguments
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		if t.searchHere && c.Name == t.search.Name {
			results[i] = t.runSearch(ctx, c.ID, args)
			continue
		}
		batch = append(batch, BatchCall{Tool: safetext.Clip(c.Name, maxCallName), Args: args})
		at = append(at, i)
	}
	if len(batch) > 0 {
		rs, err := t.sub.ExecuteBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		for j, r := range rs {
			results[at[j]] = r
		}
	}
	for i, c := range calls {
		if r := results[i]; r != nil && r.OK && t.search != nil && c.Name == t.search.Name {
			t.found(r.Output)
		}
		if r := results[i]; r != nil && r.OK && c.Name == "call_subagent" {
			if err := t.route(ctx, r); err != nil {
				return nil, err
			}
		}
	}
	return results, nil
}

// runSearch runs search_tools in the loop, for an invoker without a
// registry: pure, in memory, and unrecorded.
func (t *turns) runSearch(ctx context.Context, id string, args json.RawMessage) *wield.Result {
	r := &wield.Result{CallID: id, Tool: t.search.Name, Attempts: 1}
	out, err := t.search.Handler.Handle(ctx, args)
	if err != nil {
		r.ErrorType, r.Error = wield.ErrValidation, err.Error()
		var we *wield.Error
		if errors.As(err, &we) {
			r.ErrorType = we.Type
		}
		return r
	}
	r.OK, r.Output = true, out
	return r
}

// found offers the tools a search_tools result lists (those of the
// toolkit) from the next turn on.
func (t *turns) found(out json.RawMessage) {
	var found toolsearch.SearchOutput
	if json.Unmarshal(out, &found) != nil {
		return
	}
	for _, f := range found.Tools {
		if tl := t.byName[f.Name]; tl != nil && !slices.Contains(t.offered, tl) {
			t.offered = append(t.offered, tl)
			t.catalogChanged = true
		}
	}
}

// route hands a call_subagent's instruction to the named agent and puts
// that agent's answer in the call's result.
func (t *turns) route(ctx context.Context, r *wield.Result) error {
	var d builtin.SubagentRoute
	if json.Unmarshal(r.Output, &d) != nil || !d.Route {
		return nil
	}
	target := t.l.opts.Agents[d.AgentName]
	switch {
	case target == nil:
		r.OK, r.Output, r.ErrorType, r.Error = false, nil, wield.ErrValidation, fmt.Sprintf("agent %q cannot be run from here", d.AgentName)
		return nil
	case t.depth+1 >= t.l.opts.MaxDepth:
		r.OK, r.Output, r.ErrorType, r.Error = false, nil, wield.ErrPermissionDenied, fmt.Sprintf("at most %d agents may work in one chain of hand-offs; do this task yourself", t.l.opts.MaxDepth)
		return nil
	case !t.budget.left(t.depth + 1):
		r.OK, r.Output, r.ErrorType, r.Error = false, nil, wield.ErrPermissionDenied, t.budget.spent()
		return nil
	}
	handed := llm.Message{Role: llm.RoleUser, Content: d.Instruction}
	t.l.notify(target, handed)
	out, err := t.l.run(ctx, target, t.conv, []llm.Message{handed}, t.depth+1, t.budget)
	switch {
	case errors.Is(err, ErrMaxTurns):
		r.OK, r.Output, r.ErrorType, r.Error = false, nil, wield.ErrPermissionDenied, t.budget.spent()
		return nil
	case errors.Is(err, ErrMaxSteps):
		r.OK, r.Output, r.ErrorType, r.Error = false, nil, wield.ErrExecution, fmt.Sprintf("agent %s did not finish within %d steps", d.AgentName, t.l.opts.MaxSteps)
		return nil
	case err != nil:
		return err
	}
	b, _ := jsonenc.Marshal(map[string]any{"agent_name": d.AgentName, "answer": out.Answer})
	r.Output = b
	return nil
}
