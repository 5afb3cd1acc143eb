package mcpbridge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/internal/safetext"
)

// A tool's own questions in the protocol (Multi Round-Trip Requests of
// 2026-07-28).
//
// A tool that calls [Elicit] or [Sample] while it serves a request of the
// stateless era, whose client declared the capability, is parked: the call
// keeps running on a goroutine of this server, blocked in Elicit, and the
// request is answered at once with resultType "input_required", the
// question in inputRequests, and a signed requestState naming the parked
// call and the round of the question (srvState's Park and Round). The
// client's retry, with the answer in inputResponses, is checked as an
// approval's (one code path: srvEraRetry), then hands the answer to the
// parked Elicit, which returns it to the tool; the retry waits for the
// call's end, answered with its result, or for its next question, answered
// input_required again. The call is not run again: what the tool did
// before it asked is done once, and the call has one record.
//
// The price is that the call lives in this server's memory: a retry that
// reaches another server (behind a load balancer), or this one after a
// restart, is refused with an error saying so, and the client calls the
// tool again. Parked calls are bounded in number (per client and in all)
// and in time (the state's TTL): a question unanswered by then fails in the
// tool with [ErrNoAnswer], and the call ends as the tool decides.

var (
	// ErrNoAnswer is returned by [Elicit] and [Sample] to a tool whose
	// client of the stateless era did not come back with an answer before
	// its requestState expired, or whose server closed meanwhile.
	ErrNoAnswer = errors.New("mcpbridge: the MCP client did not answer in time")
	// ErrTooManyWaiting is returned by [Elicit] and [Sample] when the
	// server holds as many calls waiting for their clients' answers as it
	// may (see [InputRequiredOptions].MaxWaiting).
	ErrTooManyWaiting = errors.New("mcpbridge: too many calls wait for their MCP clients' answers")
)

// The bounds of parked calls when InputRequiredOptions leave them zero.
const (
	srvMaxWaiting          = 256
	srvMaxWaitingPerClient = 16
	// srvMaxAnswer bounds one answer in inputResponses (encoded).
	srvMaxAnswer = 256 << 10
)

// srvEraAsker travels in the context of a call of the stateless era whose
// client can be asked: [Elicit] and [Sample] put their question to it.
type srvEraAsker struct {
	canElicit, canSample, canRoots bool
	// first are answers given before the call ran (a task's first
	// questions, srvTaskFirst), by key: the tool's first round asking
	// exactly those keys is answered with them. Guarded by one.
	first    map[string]json.RawMessage
	needs    *srvEraNeeds // what the call found missing in the client
	caller   string       // the requester, else the caller's ID
	params   *mcp.CallToolParamsRaw
	asks     chan *srvAsk // a question, from the tool to the request serving the call
	done     chan srvDone // the call's end (buffered)
	cancel   context.CancelCauseFunc
	one      sync.Mutex  // one question at a time
	answered atomic.Bool // a request was answered input_required: its session is gone

	// client is the client as the server's bounds name it
	// ([ServerOptions].ClientKey, else the address): parked calls are
	// counted by it, never by the name a client gives itself.
	client string

	// Guarded by Server.parked.mu.
	counted string // the key of perWho, once parked
	who     string // srvStateWho of caller, once parked
	digest  string // of the arguments, once parked
	id      string // "" until parked
	round   int    // of the last question
	pending *srvAsk
	busy    bool // a retry is serving the call: its state is spent
	timer   *time.Timer
}

type srvEraAskerKey struct{}

// srvClientKey holds, in the context of a call of the stateless era, its
// client as srvSessions.client names it; srvClientHeader carries it to the
// go-sdk's handlers, which see the request's headers, not its context (a
// client's own header of that name is dropped before).
type srvClientKey struct{}

const srvClientHeader = "Wield-Internal-Client"

type srvInputKeyKey struct{}

// WithInputKey returns ctx in which the questions [Elicit] and [Sample]
// put to a client of 2026-07-28 go under key in inputRequests (the client
// answers under it), rather than wield_elicit_N or wield_sample_N (N the
// round): for a client that expects a given key. A key is 1 to 64 ASCII
// letters, digits, '_', '-' and '.'; another makes the question fail. It
// changes nothing in a session, whose questions have no key.
func WithInputKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, srvInputKeyKey{}, key)
}

// srvCheckInputKey says what is wrong with an input key, or nil.
func srvCheckInputKey(key string) error {
	if key == "" || len(key) > 64 {
		return fmt.Errorf("input key %q: 1 to 64 characters", safetext.Line(key))
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("input key %q: only ASCII letters, digits, '_', '-' and '.'", safetext.Line(key))
		}
	}
	return nil
}

func srvEraAskerFrom(ctx context.Context) *srvEraAsker {
	a, _ := ctx.Value(srvEraAskerKey{}).(*srvEraAsker)
	return a
}

// srvAsk is one round of a tool's questions: one or more (see [Ask]),
// answered together.
type srvAsk struct {
	items  []srvAskItem
	call   string         // the call's ID
	answer chan srvAnswer // buffered
	// Guarded by Server.parked.mu: the answers a retry brought so far,
	// by item (a retry may answer some questions only: the rest are
	// asked again, under the same state).
	got []json.RawMessage
}

// srvAskItem is one question of a round.
type srvAskItem struct {
	kind   string // elicit, sample or roots
	key    string // in inputRequests
	named  bool   // key given by the tool (WithInputKey, Question.Key)
	req    mcp.InputRequest
	schema *jsonschema.Resolved // of an elicitation; nil otherwise
}

type srvAnswer struct {
	raws []json.RawMessage // by item
	err  error
}

type srvDone struct {
	res *wield.Result
	err error
}

// srvParkedCalls are the calls of a server waiting for their clients'
// answers.
type srvParkedCalls struct {
	mu     sync.Mutex
	byID   map[string]*srvEraAsker
	perWho map[string]int
}

// Waiting returns how many calls wait for their MCP clients' answers.
func (s *Server) Waiting() int {
	s.parked.mu.Lock()
	defer s.parked.mu.Unlock()
	return len(s.parked.byID)
}

// ask puts a question to the client serving the call and waits for its
// answer.
func (a *srvEraAsker) ask(ctx context.Context, kind string, req mcp.InputRequest, schema *jsonschema.Resolved) (json.RawMessage, error) {
	it := srvAskItem{kind: kind, req: req, schema: schema}
	if k, ok := ctx.Value(srvInputKeyKey{}).(string); ok {
		it.key, it.named = k, true
	}
	raws, err := a.askAll(ctx, []srvAskItem{it})
	if err != nil {
		return nil, err
	}
	return raws[0], nil
}

// askAll puts the questions of a round to the client serving the call and
// waits for their answers, by item.
func (a *srvEraAsker) askAll(ctx context.Context, items []srvAskItem) ([]json.RawMessage, error) {
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if !it.named {
			continue
		}
		if err := srvCheckInputKey(it.key); err != nil {
			return nil, err
		}
		if seen[it.key] {
			return nil, fmt.Errorf("input key %q: two questions of one round have it", it.key)
		}
		seen[it.key] = true
	}
	a.one.Lock()
	defer a.one.Unlock()
	if a.first != nil {
		first := a.first
		a.first = nil // one round only
		raws := make([]json.RawMessage, len(items))
		for i, it := range items {
			raws[i] = first[it.key]
		}
		if len(first) == len(items) && !slices.ContainsFunc(raws, func(r json.RawMessage) bool { return r == nil }) {
			return raws, nil
		}
	}
	q := &srvAsk{items: items, answer: make(chan srvAnswer, 1)}
	if c := wield.CallFrom(ctx); c != nil {
		q.call = c.ID
	}
	select {
	case a.asks <- q:
	case <-ctx.Done():
		return nil, srvNoAnswer(ctx)
	}
	select {
	case ans := <-q.answer:
		return ans.raws, ans.err
	case <-ctx.Done():
		return nil, srvNoAnswer(ctx)
	}
}

func srvNoAnswer(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		return fmt.Errorf("%w: %w", ErrNoAnswer, c)
	}
	return ErrNoAnswer
}

// srvEraRun runs a call of the stateless era whose client can be asked: run
// makes the call with the asker in its context, on a goroutine of its own
// that outlives the request when the tool asks. It returns the call's
// result, or the input_required answer of its first question.
func (s *Server) srvEraRun(ctx context.Context, in srvEraInput, who string, p *mcp.CallToolParamsRaw, run func(context.Context) (*wield.Result, error)) (*wield.Result, *mcp.CallToolResult, error) {
	callCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	if dl, ok := ctx.Deadline(); ok {
		// The request's deadline stays the call's, parked or not.
		var stopDeadline context.CancelFunc
		callCtx, stopDeadline = context.WithDeadline(callCtx, dl)
		prev := cancel
		cancel = func(err error) { prev(err); stopDeadline() }
	}
	a := &srvEraAsker{
		canElicit: in.canElicit, canSample: in.canSample, canRoots: in.canRoots, caller: who, params: p,
		asks: make(chan *srvAsk), done: make(chan srvDone, 1), cancel: cancel,
	}
	a.needs, _ = ctx.Value(srvEraNeedsKey{}).(*srvEraNeeds)
	a.client, _ = ctx.Value(srvClientKey{}).(string)
	callCtx = context.WithValue(callCtx, srvEraAskerKey{}, a)
	stop := context.AfterFunc(s.sessions.ended, func() {
		cancel(&wield.Error{Type: wield.ErrCanceled, Message: "the MCP server closed"})
	})
	go func() {
		defer cancel(nil)
		defer stop()
		res, err := run(callCtx)
		// Ended: no longer waiting, whether a request waits for the end
		// (it reads done) or none does (the server closed meanwhile).
		s.parked.drop(a)
		a.done <- srvDone{res, err}
	}()
	return s.srvEraWait(ctx, a)
}

// srvEraWait waits, for the request of ctx, for the call's end or its next
// question, which parks it.
func (s *Server) srvEraWait(ctx context.Context, a *srvEraAsker) (*wield.Result, *mcp.CallToolResult, error) {
	for {
		select {
		case d := <-a.done:
			s.parked.drop(a)
			return d.res, nil, d.err
		case q := <-a.asks:
			st, err := s.parked.park(a, q, s.opts.InputRequired)
			if err != nil {
				q.answer <- srvAnswer{err: err}
				continue
			}
			a.answered.Store(true)
			return nil, srvInputAsked(q, st.seal(s.opts.InputRequired.Key)), nil
		case <-ctx.Done():
			// The client ended the request: the call ends with it, as a
			// call of a request that is not parked.
			a.cancel(context.Cause(ctx))
			d := <-a.done
			s.parked.drop(a)
			return d.res, nil, d.err
		}
	}
}

// park records the question q of a, making a's state, within the bounds.
func (pc *srvParkedCalls) park(a *srvEraAsker, q *srvAsk, o *InputRequiredOptions) (srvState, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if a.id == "" {
		// What binds the state, made when first asked: most calls never ask.
		a.who, a.digest = srvStateWho(a.caller), engine.Digest(a.params.Arguments)
		if pc.byID == nil {
			pc.byID, pc.perWho = map[string]*srvEraAsker{}, map[string]int{}
		}
		if n := o.maxWaiting(); len(pc.byID) >= n {
			return srvState{}, fmt.Errorf("%w (%d on this server)", ErrTooManyWaiting, n)
		}
		a.counted = "caller\x00" + a.who
		if a.client != "" {
			a.counted = "client\x00" + a.client
		}
		if n := o.maxWaitingPerClient(); pc.perWho[a.counted] >= n {
			return srvState{}, fmt.Errorf("%w (%d of this client)", ErrTooManyWaiting, n)
		}
		a.id = srvParkID()
		pc.byID[a.id] = a
		pc.perWho[a.counted]++
	}
	a.round++
	for i := range q.items {
		if it := &q.items[i]; !it.named {
			if len(q.items) == 1 {
				it.key = fmt.Sprintf("wield_%s_%d", it.kind, a.round)
			} else {
				it.key = fmt.Sprintf("wield_%s_%d_%d", it.kind, a.round, i+1)
			}
		}
	}
	for i, it := range q.items {
		for _, o := range q.items[:i] {
			if o.key == it.key {
				a.round--
				return srvState{}, fmt.Errorf("input key %q: two questions of one round have it", it.key)
			}
		}
	}
	q.got = make([]json.RawMessage, len(q.items))
	a.pending, a.busy = q, false
	ttl := o.ttl()
	round := a.round
	if q.call == "" {
		q.call = a.id // a call the engine did not name (none does): the state needs one
	}
	a.timer = time.AfterFunc(ttl, func() { pc.expire(a, round, ttl) })
	return srvState{V: 1, Park: a.id, Round: a.round, Call: q.call, Tool: a.params.Name, Digest: a.digest, Who: a.who, Exp: time.Now().Add(ttl).UnixMilli()}, nil
}

// expire ends the wait of a's question of round, when it still waits.
func (pc *srvParkedCalls) expire(a *srvEraAsker, round int, ttl time.Duration) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if a.id == "" || pc.byID[a.id] != a || a.round != round || a.busy {
		return
	}
	pc.dropLocked(a)
	err := fmt.Errorf("%w: no retry within %v", ErrNoAnswer, ttl)
	a.pending.answer <- srvAnswer{err: err}
	a.pending = nil
	a.cancel(&wield.Error{Type: wield.ErrCanceled, Message: fmt.Sprintf("the MCP client did not answer within %v", ttl)})
}

func (pc *srvParkedCalls) drop(a *srvEraAsker) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.dropLocked(a)
}

func (pc *srvParkedCalls) dropLocked(a *srvEraAsker) {
	if a.timer != nil {
		a.timer.Stop()
	}
	if a.id == "" || pc.byID[a.id] != a {
		return
	}
	delete(pc.byID, a.id)
	if pc.perWho[a.counted]--; pc.perWho[a.counted] <= 0 {
		delete(pc.perWho, a.counted)
	}
}

// take checks the retry's answers against a's questions of the state and,
// when they answer them all (with the answers of earlier retries of the
// round), spends the state and returns the round; a nil round with no
// error means answers are missing (ask those again). Keys that name no
// question are ignored, as the revision advises: only the answers to the
// questions asked are read, each checked, so an extra key carries nothing
// into the call.
func (pc *srvParkedCalls) take(st srvState, responses map[string]json.RawMessage) (*srvEraAsker, *srvAsk, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	a := pc.byID[st.Park]
	if a == nil {
		return nil, nil, srvStateError("its call is not waiting for an answer on this server: it ended, its wait expired, the server restarted, or another server holds it; call the tool again")
	}
	if a.round != st.Round || a.busy || a.pending == nil {
		return nil, nil, srvStateError(fmt.Sprintf("it was already answered: it is used once (the call's record is %s)", ResourceURI(st.Call, false)))
	}
	q := a.pending
	got, err := q.take(responses)
	if err != nil || got == nil {
		return a, nil, err
	}
	a.pending, a.busy = nil, true
	a.timer.Stop()
	q.answer <- srvAnswer{raws: got}
	return a, q, nil
}

// take checks the answers responses gives to the round's questions and
// keeps them with those of earlier retries, all or none (one that fails
// its check fails the whole); keys naming no question are ignored. It
// returns the answers by question once each has one, else nil. A retry of
// a parked call (srvParkedCalls.take) and a task's tasks/update
// (srvTaskAsk.answer) answer a round through it; the caller holds the
// lock guarding q.got.
func (q *srvAsk) take(responses map[string]json.RawMessage) ([]json.RawMessage, error) {
	got := slices.Clone(q.got)
	for i, it := range q.items {
		raw, ok := responses[it.key]
		if !ok {
			continue
		}
		ans, err := srvCheckAnswer(&it, raw)
		if err != nil {
			return nil, err
		}
		got[i] = ans
	}
	copy(q.got, got) // every answer checked: kept for the next retry
	if slices.ContainsFunc(got, func(r json.RawMessage) bool { return r == nil }) {
		return nil, nil
	}
	return got, nil
}

// srvEraResume serves the retry of a parked call: the answer goes to the
// tool, and the request waits for the call's end or its next question.
func (s *Server) srvEraResume(ctx context.Context, st srvState, in srvEraInput, state string) (*mcp.CallToolResult, error) {
	a, q, err := s.parked.take(st, in.responses)
	if err != nil {
		return nil, err
	}
	if q == nil {
		// No answer: ask again, with the same state.
		s.parked.mu.Lock()
		var ir *mcp.CallToolResult
		if a.pending != nil {
			ir = srvInputAsked(a.pending, state)
		}
		s.parked.mu.Unlock()
		if ir == nil {
			return nil, srvStateError("it was already answered: it is used once")
		}
		return ir, nil
	}
	res, ir, err := s.srvEraWait(ctx, a)
	if err != nil {
		s.log.Error("mcp server: call failed", "tool", st.Tool, "err", err)
		return nil, srvInternal
	}
	if ir != nil {
		return ir, nil
	}
	if err := a.needs.refusal(st.Tool, res); err != nil {
		return nil, err
	}
	return s.srvResult(res), nil
}

// srvCheckAnswer checks an answer to q: its size, its shape (an
// elicitation's or a sampling's result) and, for an elicitation accepted,
// its content against the schema asked. It returns the answer as the tool
// reads it.
func srvCheckAnswer(q *srvAskItem, raw json.RawMessage) (json.RawMessage, error) {
	bad := func(format string, args ...any) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses." + q.key + ": " + fmt.Sprintf(format, args...)}
	}
	if len(raw) > srvMaxAnswer {
		return nil, bad("%d bytes, more than the %d an answer may have", len(raw), srvMaxAnswer)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if q.kind == "roots" {
		var r struct {
			Roots []struct {
				URI  *string `json:"uri"`
				Name string  `json:"name"`
			} `json:"roots"`
		}
		if err := d.Decode(&r); err != nil {
			return nil, bad("not a roots/list result: %v", err)
		}
		if r.Roots == nil {
			return nil, bad("roots is missing: a roots/list result has a roots array")
		}
		out := make([]Root, len(r.Roots))
		for i, rt := range r.Roots {
			if rt.URI == nil || *rt.URI == "" {
				return nil, bad("roots[%d]: uri is missing", i)
			}
			out[i] = Root{URI: *rt.URI, Name: rt.Name}
		}
		b, _ := json.Marshal(out)
		return b, nil
	}
	if q.schema != nil {
		var r struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		}
		if err := d.Decode(&r); err != nil {
			return nil, bad("not an elicitation result: %v", err)
		}
		switch r.Action {
		case ActionAccept:
			if r.Content == nil {
				r.Content = map[string]any{}
			}
			if err := q.schema.Validate(r.Content); err != nil {
				return nil, bad("the content does not match the schema asked: %s", safetext.Line(err.Error()))
			}
			out, _ := json.Marshal(mcp.ElicitResult{Action: r.Action, Content: r.Content})
			return out, nil
		case ActionDecline, ActionCancel:
			out, _ := json.Marshal(mcp.ElicitResult{Action: r.Action})
			return out, nil
		default:
			return nil, bad("action %q is not accept, decline or cancel", safetext.Line(r.Action))
		}
	}
	var r struct {
		Role       string          `json:"role"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
		Content    json.RawMessage `json:"content"`
	}
	if err := d.Decode(&r); err != nil {
		return nil, bad("not a sampling result: %v", err)
	}
	if r.Role != "assistant" && r.Role != "user" {
		return nil, bad("role %q is not assistant or user", safetext.Line(r.Role))
	}
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var blocks []block
	switch c := bytes.TrimSpace(r.Content); {
	case len(c) > 0 && c[0] == '{':
		var b block
		if err := json.Unmarshal(c, &b); err != nil {
			return nil, bad("content: %v", err)
		}
		blocks = []block{b}
	case len(c) > 0 && c[0] == '[':
		if err := json.Unmarshal(c, &blocks); err != nil {
			return nil, bad("content: %v", err)
		}
	default:
		return nil, bad("content is missing: a sampling result has a content block")
	}
	var text strings.Builder
	for _, b := range blocks {
		if b.Type == "" {
			return nil, bad("a content block without a type")
		}
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	out, _ := json.Marshal(Sampled{Role: r.Role, Text: text.String(), Model: r.Model, StopReason: r.StopReason})
	return out, nil
}

// srvInputAsked is the input_required result of a tool's questions: those
// of the round not answered yet.
func srvInputAsked(q *srvAsk, state string) *mcp.CallToolResult {
	m := make(mcp.InputRequestMap, len(q.items))
	for i, it := range q.items {
		if q.got == nil || q.got[i] == nil {
			m[it.key] = it.req
		}
	}
	return &mcp.CallToolResult{
		Meta:          mcp.Meta{},
		Content:       []mcp.Content{},
		InputRequests: m,
		RequestState:  state,
	}
}

func srvParkID() string {
	var b [15]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}

func (o *InputRequiredOptions) maxWaiting() int {
	if o.MaxWaiting > 0 {
		return o.MaxWaiting
	}
	return srvMaxWaiting
}

func (o *InputRequiredOptions) maxWaitingPerClient() int {
	if o.MaxWaitingPerClient > 0 {
		return o.MaxWaitingPerClient
	}
	return srvMaxWaitingPerClient
}

// srvEraElicit is [Elicit] of a call of the stateless era.
func srvEraElicit(ctx context.Context, a *srvEraAsker, p *mcp.ElicitParams, schema *jsonschema.Schema) (map[string]any, string, error) {
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, "", fmt.Errorf("elicit: the schema: %w", err)
	}
	p.Mode = "form"
	raw, err := a.ask(ctx, "elicit", p, resolved)
	if err != nil {
		return nil, "", fmt.Errorf("elicit: %w", err)
	}
	var res mcp.ElicitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, "", fmt.Errorf("elicit: %w", err)
	}
	if res.Action != ActionAccept {
		return nil, res.Action, nil
	}
	return res.Content, res.Action, nil
}

// srvEraSample is [Sample] of a call of the stateless era.
func srvEraSample(ctx context.Context, a *srvEraAsker, p *mcp.CreateMessageParams) (Sampled, error) {
	raw, err := a.ask(ctx, "sample", p, nil)
	if err != nil {
		return Sampled{}, fmt.Errorf("sample: %w", err)
	}
	var out Sampled
	if err := json.Unmarshal(raw, &out); err != nil {
		return Sampled{}, fmt.Errorf("sample: %w", err)
	}
	return out, nil
}
