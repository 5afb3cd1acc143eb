// Package engine runs tool calls through wield's pipeline:
//
//	lookup ─► decode+coerce+validate ─► policy ─► replay ─► approval ─► limiter ─► run ─► budget ─► record ─► Result
//
// Each step is a file of its own; this file is the only place that knows
// their order. A tool's failure at any step is a [wield.Result] with OK false
// and an error type; a Go error means the system itself failed (the store
// could not keep the record, the engine is closed).
//
// # Calling a tool
//
//	reg := wield.NewRegistry(nil)
//	reg.MustRegister(wield.Func("echo", "Echo a message", echo))
//	e := engine.New(reg, nil)
//	res, err := e.Call(ctx, wield.Call{Tool: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
//
// [Engine.Go] runs a call in the background: its [Pending] handle names the
// call's ID at once (the ID of its events, record and approval), answers
// [Pending.TryResult] without waiting and [Pending.Wait] when it ends, and
// [Pending.Cancel] ends it as canceled. [Engine.CallAll] runs a batch.
//
// # Time
//
// A call's timeout (the call's own, else the tool's, else 30 s, or 60 s for
// network categories) covers running the tool, retries included; time spent
// waiting for approval or for capacity is bounded separately. A handler that
// ignores its context still yields a timeout result on time: it runs on one
// of the engine's worker goroutines, and when the time is up it is left to
// finish in the background, keeping its concurrency slot until it returns
// ([Engine.Stray] counts such handlers). A tool marked [wield.Tool].Inline
// runs on the caller's goroutine instead: cheaper, but its timeout is only
// as good as its respect for ctx.
//
// # Idempotency
//
// A call with an idempotency key is answered from the first successful call
// of the same tool with that key, without running again; the result's
// metadata says replayed and names the first call. Duplicates that arrive
// while the first still runs wait for it. The same key with other arguments
// is refused. The engine remembers the keys of its own calls in memory, with
// or without a store: the newest 10,000 keys, each for 10 minutes after its
// call, and their outputs up to 64 MiB in all ([Options].Replay changes
// these bounds). Past the window, a store that is a [wield.Replayer] (SQLite,
// PostgreSQL) still answers; without one, a key forgotten runs again, and a
// key remembered whose output was dropped for room is refused (rejected)
// rather than run twice.
//
// # Approvals
//
// A call of a confirm tool waits for its [Options].Approver. With a durable
// one (a [wield.ApprovalClaimer], as package approval's inbox is), the
// decision outlives the caller: a caller that leaves gets canceled and the
// call is parked, unrecorded; whoever acts on the decision later
// ([Engine.Resume]) runs it, or records its refusal, under the same call ID.
// Every decision is claimed before it is acted on, so it is acted on once;
// a caller that still waits but loses the claim gets the winning run's
// recorded result.
//
// # Records
//
// Every finished call is handed to the store with its secrets replaced by
// [Redacted]: values under secret names ([DefaultSecretNames],
// Options.SecretNames and the tool's Secrets) at any depth of the raw and
// the normalised arguments and of the output, header maps included, the
// same names as query parameters of URLs, and the user information of
// URLs. Error texts in records and events lose the same. The handler gets
// the real values and the caller the real output; a result read back from
// the record (an idempotent replay, a run adopted after an approval) is the
// redacted one.
//
// # Retries
//
// A failed attempt is retried only when the tool is annotated idempotent and
// the error is marked with [wield.Transient], with exponential backoff inside
// the call's timeout. Validation, permission, approval, capacity and
// cancellation failures are never retried, and neither are panics or timeouts.
package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/limit"
)

// Defaults of [Options].
const (
	DefaultTimeout         = 30 * time.Second
	DefaultNetworkTimeout  = 60 * time.Second
	DefaultMaxOutput       = 64 << 10
	DefaultMaxArguments    = 8 << 20
	DefaultApprovalTimeout = 15 * time.Minute
)

// Options configure an [Engine]; nil or zero fields mean the defaults.
type Options struct {
	// Limiter bounds concurrency; nil means limit.New(limit.Config{}) (10 at once, queue of 100).
	Limiter limit.Limiter
	// Store keeps a record of every finished call; nil keeps none.
	Store wield.Store
	// Approver decides calls of tools whose permission is confirm; with none,
	// such calls fail with approval_denied. An Approve that panics is no
	// decision (approval_denied); the panic is logged and counted (see
	// [wield.Protect]).
	Approver wield.Approver
	// Bus receives the events; nil means the registry's bus (which may be nil).
	Bus *wield.Bus
	// Logger receives internal failures (panics, store errors); nil means slog.Default().
	Logger *slog.Logger

	DefaultTimeout  time.Duration // 30 s
	NetworkTimeout  time.Duration // 60 s, for categories network, http and mcp
	ApprovalTimeout time.Duration // 15 min: how long a pending approval lives
	MaxOutput       int           // 64 KiB: the default output budget
	MaxArguments    int           // 8 MiB: larger arguments are refused before parsing
	// StrictValidation refuses arguments that need a coercion ("5" for an
	// integer, "true" for a boolean): seed 004's strict_validation.
	StrictValidation bool
	Retry            RetryPolicy
	// SecretNames are names whose values records, log lines and events
	// never keep, in addition to DefaultSecretNames and each tool's
	// Secrets: argument and output keys, header names in them, and query
	// parameters of the URLs they hold.
	SecretNames []string
	// Policy, when set, decides every call before its permission (see
	// [wield.Policy]): a denial is permission_denied naming the policies,
	// and every decision is kept in the result's metadata "policy".
	Policy wield.Policy
	// Replay bounds the calls with an idempotency key remembered in
	// memory (see [ReplayWindow]); zero fields mean the defaults.
	Replay ReplayWindow
}

// RetryPolicy says how often and how patiently transient failures of
// idempotent tools are retried.
type RetryPolicy struct {
	MaxAttempts int           // 3 (seed 004's max_retries); 1 disables retries
	Backoff     time.Duration // 100 ms before the second attempt, doubling
	MaxBackoff  time.Duration // 2 s
}

// Engine runs calls against a registry. It is safe for concurrent use.
type Engine struct {
	reg      *wield.Registry
	lim      limit.Limiter
	store    wield.Store
	approver wield.Approver
	bus      *wield.Bus
	log      *slog.Logger
	opts     Options
	workers  *workers
	redactor *redactor
	stray    atomic.Int64 // handlers still running after their call timed out

	flights  flights
	window   *window  // the idempotency keys of the calls that succeeded here
	idClaims idClaims // caller-chosen IDs of the calls running here
	// state counts the calls in flight, with closedBit set by Close; the
	// call that leaves a closed engine empty closes idle.
	state    atomic.Int64
	idle     chan struct{}
	idleOnce sync.Once

	base atomic.Pointer[time.Time] // see now

	// ending ends at EndApprovalWaits: the calls waiting for a person's
	// approval stop waiting (approval.go).
	ending   context.Context
	endWaits context.CancelFunc
}

// rebaseEvery is how often now reads the wall clock again.
const rebaseEvery = time.Second

// now is time.Now from one clock reading instead of two: the wall time is
// that of a base read at most rebaseEvery ago, plus the monotonic time since
// (reading a clock is about 50 ns on a virtual machine, a twentieth of an
// echo call). A step of the system's wall clock shows in call times within
// rebaseEvery; durations never see it.
func (e *Engine) now() time.Time {
	b := e.base.Load()
	if b != nil {
		if d := time.Since(*b); d >= 0 && d < rebaseEvery {
			return b.Add(d)
		}
	}
	t := time.Now()
	e.base.Store(&t)
	return t
}

// closedBit marks a closed engine in Engine.state.
const closedBit = 1 << 62

// enter counts a call in, unless the engine is closed.
func (e *Engine) enter() bool {
	if e.state.Add(1)&closedBit != 0 {
		e.leave()
		return false
	}
	return true
}

// leave counts a call out.
func (e *Engine) leave() {
	if e.state.Add(-1) == closedBit {
		e.idleOnce.Do(func() { close(e.idle) })
	}
}

// New returns an engine for the tools of reg.
func New(reg *wield.Registry, opts *Options) *Engine {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Limiter == nil {
		c, err := limit.New(limit.Config{})
		if err != nil {
			panic(err) // the zero config is valid
		}
		o.Limiter = c
	}
	if o.Bus == nil {
		o.Bus = reg.Bus()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = DefaultTimeout
	}
	if o.NetworkTimeout <= 0 {
		o.NetworkTimeout = DefaultNetworkTimeout
	}
	if o.ApprovalTimeout <= 0 {
		o.ApprovalTimeout = DefaultApprovalTimeout
	}
	if o.MaxOutput == 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.MaxArguments <= 0 {
		o.MaxArguments = DefaultMaxArguments
	}
	if o.Retry.MaxAttempts <= 0 {
		o.Retry.MaxAttempts = 3
	}
	if o.Retry.Backoff <= 0 {
		o.Retry.Backoff = 100 * time.Millisecond
	}
	if o.Retry.MaxBackoff <= 0 {
		o.Retry.MaxBackoff = 2 * time.Second
	}
	ending, endWaits := context.WithCancel(context.Background())
	return &Engine{reg: reg, lim: o.Limiter, store: o.Store, approver: o.Approver, bus: o.Bus, log: o.Logger, opts: o, workers: newWorkers(), idle: make(chan struct{}), redactor: newRedactor(o.SecretNames), window: newWindow(o.Replay),
		ending: ending, endWaits: endWaits}
}

// Stray returns how many handlers are still running after their calls
// timed out or were canceled. Each keeps its concurrency slot until it
// returns; a number that only grows means a tool ignores its context.
func (e *Engine) Stray() int64 { return e.stray.Load() }

// Registry returns the engine's registry.
func (e *Engine) Registry() *wield.Registry { return e.reg }

// Limiter returns the engine's limiter, for its metrics.
func (e *Engine) Limiter() limit.Limiter { return e.lim }

// Bus returns the bus the engine publishes on (nil if none).
func (e *Engine) Bus() *wield.Bus { return e.bus }

// call is the state of one call as it goes through the steps.
type call struct {
	wield.Call
	entry *wield.Entry
	args  []byte // normalised arguments
	res   *wield.Result

	flight *flight // held while a call with an idempotency key runs
	parked bool    // its approval is pending or ran elsewhere: no record here
	// invalid: its arguments failed validation; the event saying so is
	// published once the call is known not to be hidden (see passed).
	invalid bool
	// adopted: the result is that of the run that took the approval,
	// already recorded and announced by it.
	adopted bool
	// resumed is the approval this call runs after, its claim already
	// taken (see Engine.Resume).
	resumed *wield.Approval
	// idClaimed: the call's ID, chosen by its caller, is in Engine.idClaims.
	idClaimed bool
	// approvalID is the approval the call asked for or names, for the
	// permission events.
	approvalID string
	// minted: the engine made the call's ID before the pipeline (Engine.Go),
	// so it is new and needs no claim.
	minted bool
	// dry: a dry run (see Engine.DryRun), which announces nothing.
	dry bool

	// Kept here so that one allocation serves the whole call.
	result wield.Result
	rec    wield.Record
	rctx   runCtx
	slot   slot
	prog   progressRef
	// detached is the context the record is saved under (see finish).
	detached detachedCtx
}

// Call runs one call through the pipeline and returns its result. The result
// is never nil when err is nil. err is non-nil when the system failed
// ([wield.ErrClosed] after Close, or the store could not keep the record:
// the result is returned too, since the tool did run), and when the ID the
// caller chose is taken ([wield.ErrCallIDTaken], with no result: nothing ran
// and nothing is recorded).
func (e *Engine) Call(ctx context.Context, c wield.Call) (*wield.Result, error) {
	if !e.enter() {
		return nil, wield.ErrClosed
	}
	defer e.leave()

	k := &call{Call: c}
	// A program's inner call: the program waits, so its slot is lent.
	defer e.lendSlot(ctx, k)()
	return e.pipeline(ctx, k)
}

// arrive stamps a call's arrival and gives it an ID and a result.
func (e *Engine) arrive(k *call) {
	arrived := e.now()
	k.rec.QueuedAt = arrived // the arrival, kept where the record wants it
	if k.ID == "" {
		k.ID = wield.NewIDAt(arrived)
	}
	k.result = wield.Result{CallID: k.ID, Tool: k.Tool, StartedAt: arrived}
	k.res = &k.result
}

// pipeline runs a call, new or resumed, through the steps. A call whose
// caller chose its ID first claims it (see claimID); one resumed after its
// approval has it already.
func (e *Engine) pipeline(ctx context.Context, k *call) (*wield.Result, error) {
	chosen := k.ID != "" && !k.minted && k.ApprovalID == "" && k.resumed == nil
	e.arrive(k)
	ok := true
	if chosen {
		var err error
		if ok, err = e.claimID(ctx, k); err != nil {
			return nil, err
		}
	}
	// A tool the policies hide from the caller is, to it, a tool that does
	// not exist: the steps that may refuse the call before it runs say so.
	if ok && e.passed(ctx, k, e.lookup(k)) && e.passed(ctx, k, e.decode(ctx, k)) && e.passed(ctx, k, e.policy(ctx, k)) && !e.replay(ctx, k) && e.approve(ctx, k) {
		if permit, ok := e.acquire(ctx, k); ok {
			e.run(ctx, k, permit)
		}
	}
	e.budget(k)
	err := e.finish(ctx, k)
	e.land(k)
	e.unclaimID(k)
	return k.res, err
}

// fail ends the call with a failure of the given type.
func (k *call) fail(t wield.ErrorType, msg string) bool {
	k.res.OK = false
	k.res.ErrorType = t
	k.res.Error = msg
	return false
}

// EndApprovalWaits ends at once the waits of the calls for a person's
// approval: a server that shuts down calls it, since such a wait may last
// the approval's whole timeout. Each such call ends canceled, its result
// saying the server shut down; with a durable approver (a
// [wield.ApprovalClaimer]) the approval stays pending, and once decided
// the call runs, or is refused, and is recorded under its ID by whoever
// takes it up ([Engine.Resume]), as for a caller that left. A call that
// needs approval after it is refused at once. Calls that run go on.
func (e *Engine) EndApprovalWaits() { e.endWaits() }

// ErrApprovalWaitEnded is the cause ([context.Cause]) of the end of an
// approver's context when [Engine.EndApprovalWaits] ended the wait: the
// server shuts down, the caller did not leave.
var ErrApprovalWaitEnded = errors.New("engine: the server is shutting down and no longer waits for approvals")

// Close refuses new calls, lets the idle goroutines that run handlers go, and
// waits for the calls in flight to finish, or for ctx to end.
func (e *Engine) Close(ctx context.Context) error {
	if e.state.Or(closedBit) == 0 {
		e.idleOnce.Do(func() { close(e.idle) })
	}
	e.workers.stop()
	select {
	case <-e.idle:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("engine close: calls still in flight"), ctx.Err())
	}
}
