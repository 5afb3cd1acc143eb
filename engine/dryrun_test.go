package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/memstore"
)

// dryWorld is an engine with a store and a bus, to show that a dry run
// leaves neither a record nor an event.
type dryWorld struct {
	e     *engine.Engine
	store *memstore.Store
	bus   *wield.Bus
}

func newDryWorld(t *testing.T, opts engine.Options, tools ...*wield.Tool) dryWorld {
	t.Helper()
	w := dryWorld{store: memstore.New(100), bus: wield.NewBus(64)}
	opts.Store, opts.Bus = w.store, w.bus
	w.e = newEngine(t, &opts, tools...)
	return w
}

// dry makes a dry run of c and checks that it left no trace.
func (w dryWorld) dry(t *testing.T, c wield.Call) *wield.DryRun {
	t.Helper()
	events := w.bus.Last()
	kept, _ := w.store.Len()
	d, err := w.e.DryRun(context.Background(), c)
	if err != nil {
		t.Fatalf("DryRun(%s): %v", c.Tool, err)
	}
	if got := w.bus.Last(); got != events {
		t.Errorf("the dry run published events: the last ID went from %q to %q", events, got)
	}
	if got, _ := w.store.Len(); got != kept {
		t.Errorf("the dry run wrote %d records", got-kept)
	}
	return d
}

// answer is what a dry run and a real call must agree on.
type answer struct {
	ErrorType        wield.ErrorType
	Error            string
	ValidationErrors []wield.ValidationError
}

// TestDryRunAnswersAsTheCall makes a dry run of a call that a step stops,
// then the call itself: the same error type and message, and only the real
// call leaves a record.
func TestDryRunAnswersAsTheCall(t *testing.T) {
	deny := rmTool(new(int))
	deny.Name, deny.Permission = "rm_denied", wield.PermissionDeny
	noApprover := rmTool(new(int))
	tests := []struct {
		name  string
		call  wield.Call
		stage wield.DryRunStage
		want  wield.ErrorType
	}{
		{"tool_not_found", wield.Call{Tool: "nope"}, wield.StageLookup, wield.ErrToolNotFound},
		{"validation_error", wield.Call{Tool: "echo", Arguments: args(`{"message":["a"],"extra":1}`)}, wield.StageValidation, wield.ErrValidation},
		{"not json", wield.Call{Tool: "echo", Arguments: args(`{"message":`)}, wield.StageValidation, wield.ErrValidation},
		{"permission_denied", wield.Call{Tool: "rm_denied", Arguments: args(`{"path":"x"}`)}, wield.StagePermission, wield.ErrPermissionDenied},
		{"approval without an approver", wield.Call{Tool: "rm", Arguments: args(`{"path":"x"}`)}, wield.StageApproval, wield.ErrApprovalDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newDryWorld(t, engine.Options{}, echoTool(), deny, noApprover)
			d := w.dry(t, tt.call)
			if d.WouldRun || d.Stage != tt.stage || d.ErrorType != tt.want {
				t.Errorf("dry run: would_run %v, stage %q, error_type %q; want false, %q, %q", d.WouldRun, d.Stage, d.ErrorType, tt.stage, tt.want)
			}
			res := mustCall(t, w.e, tt.call)
			want := answer{res.ErrorType, res.Error, res.ValidationErrors}
			if diff := cmp.Diff(want, answer{d.ErrorType, d.Error, d.ValidationErrors}); diff != "" {
				t.Errorf("dry run against the real call (-call +dry):\n%s", diff)
			}
			if kept, _ := w.store.Len(); kept != 1 {
				t.Errorf("records after the real call: %d, want 1", kept)
			}
		})
	}
}

// TestDryRunWouldRun shows what a dry run reports of a call that would
// run: the arguments coerced and defaulted, the timeout and its source,
// the retry policy and the limiter, and that the handler did not run.
func TestDryRunWouldRun(t *testing.T) {
	type in struct {
		N     int    `json:"n"`
		Label string `json:"label,omitempty" default:"none"`
	}
	ran := 0
	tool := wield.Func("count", "Count", func(_ context.Context, v in) (int, error) { ran++; return v.N, nil })
	tool.Annotations.Idempotent = true
	tool.Timeout = 5 * time.Second
	net := wield.Func("fetch", "Fetch", func(_ context.Context, v in) (int, error) { ran++; return v.N, nil })
	net.Category = "http"
	w := newDryWorld(t, engine.Options{Retry: engine.RetryPolicy{MaxAttempts: 4}}, tool, net)

	d := w.dry(t, wield.Call{Tool: "count", Arguments: args(`{"n":"5"}`)})
	want := &wield.DryRun{Tool: "count", WouldRun: true, Arguments: args(`{"n":5,"label":"none"}`), Permission: wield.PermissionAuto,
		Limit:   &wield.DryRunLimit{Bucket: "custom", Weight: 1, Outcome: "run", Limit: 10, QueueSize: 100, Strategy: "fifo", QueueTimeout: 30 * time.Second},
		Timeout: 5 * time.Second, TimeoutFrom: "tool",
		Retry: &wield.DryRunRetry{MaxAttempts: 4, Backoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second,
			Why: "the tool is annotated idempotent: a transient failure is retried, up to 4 attempts in all, within the timeout"}}
	if diff := cmp.Diff(want, d, cmp.Transformer("json", func(m json.RawMessage) string { return string(m) })); diff != "" {
		t.Errorf("dry run (-want +got):\n%s", diff)
	}

	d = w.dry(t, wield.Call{Tool: "fetch", Arguments: args(`{"n":1}`), Timeout: 1500 * time.Millisecond})
	if d.Timeout != 1500*time.Millisecond || d.TimeoutFrom != "call" || d.Retry.MaxAttempts != 1 || d.Limit.Bucket != "http" {
		t.Errorf("dry run of fetch: timeout %v from %q, attempts %d, bucket %q", d.Timeout, d.TimeoutFrom, d.Retry.MaxAttempts, d.Limit.Bucket)
	}
	d = w.dry(t, wield.Call{Tool: "fetch", Arguments: args(`{"n":1}`)})
	if d.Timeout != engine.DefaultNetworkTimeout || d.TimeoutFrom != "network default" {
		t.Errorf("dry run of fetch: timeout %v from %q, want the network default", d.Timeout, d.TimeoutFrom)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if d, _ := w.e.DryRun(ctx, wield.Call{Tool: "fetch", Arguments: args(`{"n":1}`)}); d.TimeoutFrom != "caller deadline" || d.Timeout > 2*time.Second {
		t.Errorf("dry run under a 2 s deadline: timeout %v from %q", d.Timeout, d.TimeoutFrom)
	}
	if ran != 0 {
		t.Errorf("the handler ran %d times during dry runs", ran)
	}
}

// TestDryRunApprovalNeeded: a dry run of a confirm tool says that the call
// would wait for a person and who would decide, and asks nobody; the real
// call asks the approver.
func TestDryRunApprovalNeeded(t *testing.T) {
	asked := 0
	approver := wield.ApproverFunc(func(context.Context, *wield.ApprovalRequest) (wield.Decision, error) {
		asked++
		return wield.Decision{Approved: false, Reason: "no"}, nil
	})
	ran := 0
	w := newDryWorld(t, engine.Options{Approver: approver, ApprovalTimeout: time.Hour}, rmTool(&ran))
	ctx := wield.WithRequester(context.Background(), "key:model")
	d, err := w.e.DryRun(ctx, wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := &wield.DryRunApproval{Required: true, Deciders: "the engine's approver", RequestedBy: "key:model", ExpiresAfter: time.Hour,
		Digest: engine.Digest([]byte(`{"path":"/tmp/x"}`))}
	if diff := cmp.Diff(want, d.Approval); diff != "" {
		t.Errorf("approval (-want +got):\n%s", diff)
	}
	if !d.WouldRun || d.Permission != wield.PermissionConfirm || d.ErrorType != "" || asked != 0 || ran != 0 {
		t.Errorf("dry run: would_run %v, permission %q, error_type %q, approver asked %d, ran %d", d.WouldRun, d.Permission, d.ErrorType, asked, ran)
	}
	res := mustCall(t, w.e, wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/x"}`)})
	if asked != 1 || res.ErrorType != wield.ErrApprovalDenied {
		t.Errorf("real call: approver asked %d times, error_type %q", asked, res.ErrorType)
	}
}

// TestDryRunInbox: with an inbox as approver, a dry run creates no pending
// approval.
func TestDryRunInbox(t *testing.T) {
	inbox := memstore.NewApprovals(nil)
	w := newDryWorld(t, engine.Options{Approver: inbox}, rmTool(new(int)))
	d := w.dry(t, wield.Call{Tool: "rm", Arguments: args(`{"path":"x"}`)})
	if d.Approval == nil || !d.Approval.Required || d.Approval.Deciders == "" {
		t.Fatalf("approval = %+v, want required with deciders", d.Approval)
	}
	if p := inbox.Pending(); len(p) != 0 {
		t.Errorf("pending approvals after a dry run: %d", len(p))
	}
}

// TestDryRunLimiter: a full limiter gives the dry run the real call's
// rejected answer; a free slot behind a queue says queue.
func TestDryRunLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		lim := newLimiter(t, limit.Config{MaxConcurrent: 1, QueueSize: 1})
		w := newDryWorld(t, engine.Options{Limiter: lim}, g.tool("slow"), echoTool())
		ctx := context.Background()
		first := w.e.Go(ctx, wield.Call{Tool: "slow"})
		<-g.started

		c := wield.Call{Tool: "echo", Arguments: args(`{"message":"hi"}`)}
		d := w.dry(t, c)
		want := &wield.DryRunLimit{Bucket: "custom", Weight: 1, Outcome: "queue", InFlight: 1, Limit: 1, QueueSize: 1, Strategy: "fifo", QueueTimeout: 30 * time.Second}
		if diff := cmp.Diff(want, d.Limit); diff != "" || !d.WouldRun {
			t.Errorf("with a free queue: would_run %v, limit (-want +got):\n%s", d.WouldRun, diff)
		}
		second := w.e.Go(ctx, c) // takes the one place in the queue
		synctest.Wait()

		d = w.dry(t, c)
		if d.WouldRun || d.Stage != wield.StageLimiter || d.Limit.Outcome != "reject" || d.Limit.Queued != 1 {
			t.Errorf("with the queue full: would_run %v, stage %q, limit %+v", d.WouldRun, d.Stage, d.Limit)
		}
		res := mustCall(t, w.e, c)
		if diff := cmp.Diff(answer{res.ErrorType, res.Error, nil}, answer{d.ErrorType, d.Error, nil}); diff != "" || res.ErrorType != wield.ErrRejected {
			t.Errorf("dry run against the real call (-call +dry):\n%s", diff)
		}
		wf := w.dry(t, wield.Call{Tool: "echo", Arguments: args(`{"message":"n"}`), Caller: wield.ForWorkflow("wf", "n")})
		if !wf.WouldRun || wf.Limit.Outcome != "bypass" {
			t.Errorf("workflow node: would_run %v, outcome %q", wf.WouldRun, wf.Limit.Outcome)
		}
		m := lim.Metrics()
		if m.Rejected != 1 || m.Acquired != 1 || m.QueueLength != 1 {
			t.Errorf("limiter counted rejected %d acquired %d queued %d; want only the real calls' 1, 1 and 1", m.Rejected, m.Acquired, m.QueueLength)
		}
		close(g.open)
		for _, h := range []*engine.Pending{first, second} {
			if res, err := h.Wait(ctx); err != nil || !res.OK {
				t.Fatalf("queued call = %+v, %v", res, err)
			}
		}
	})
}

// TestDryRunReplay: a dry run with an idempotency key already used names
// the call it would be answered from; other arguments are refused as the
// real call refuses them.
func TestDryRunReplay(t *testing.T) {
	w := newDryWorld(t, engine.Options{}, echoTool())
	first := mustCall(t, w.e, wield.Call{Tool: "echo", Arguments: args(`{"message":"a"}`), IdempotencyKey: "k1"})
	d := w.dry(t, wield.Call{Tool: "echo", Arguments: args(`{"message":"a"}`), IdempotencyKey: "k1"})
	if d.WouldRun || d.Stage != wield.StageReplay || d.Replay != first.CallID || d.ErrorType != "" {
		t.Errorf("same key: would_run %v, stage %q, replay_of %q (want %q), error_type %q", d.WouldRun, d.Stage, d.Replay, first.CallID, d.ErrorType)
	}
	other := wield.Call{Tool: "echo", Arguments: args(`{"message":"b"}`), IdempotencyKey: "k1"}
	d = w.dry(t, other)
	res := mustCall(t, w.e, other)
	if diff := cmp.Diff(answer{res.ErrorType, res.Error, nil}, answer{d.ErrorType, d.Error, nil}); diff != "" || d.ErrorType != wield.ErrValidation {
		t.Errorf("other arguments (-call +dry):\n%s", diff)
	}
}

func TestDryRunClosed(t *testing.T) {
	e := newEngine(t, nil, echoTool())
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DryRun(context.Background(), wield.Call{Tool: "echo"}); !errors.Is(err, wield.ErrClosed) {
		t.Errorf("DryRun after Close: %v, want ErrClosed", err)
	}
}

// TestDryRunCallIDTaken: a chosen ID a record has is refused as the real
// call refuses it.
func TestDryRunCallIDTaken(t *testing.T) {
	e := newEngine(t, &engine.Options{Store: durable(t)}, echoTool())
	c := wield.Call{ID: "job-1", Tool: "echo", Arguments: args(`{"message":"a"}`)}
	if d, err := e.DryRun(context.Background(), c); err != nil || !d.WouldRun {
		t.Fatalf("a free ID: %+v, %v", d, err)
	}
	mustCall(t, e, c)
	w := dryWorld{e: e}
	if _, err := w.e.DryRun(context.Background(), c); !errors.Is(err, wield.ErrCallIDTaken) {
		t.Errorf("dry run with a recorded ID: %v", err)
	}
	if _, err := w.e.Call(context.Background(), c); !errors.Is(err, wield.ErrCallIDTaken) {
		t.Errorf("the real call with a recorded ID: %v", err)
	}
}

// TestDryRunLogged: a dry run's audit is one DEBUG line naming the tool,
// the outcome and who asked.
func TestDryRunLogged(t *testing.T) {
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEngine(t, &engine.Options{Logger: log}, echoTool())
	ctx := wield.WithRequester(context.Background(), "key:k1")
	if _, err := e.DryRun(ctx, wield.Call{Tool: "echo", Arguments: args(`{}`)}); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	for _, want := range []string{"level=DEBUG", `msg="dry run"`, "tool=echo", "would_run=false", "stage=validation", "error_type=validation_error", "requester=key:k1"} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %s:\n%s", want, line)
		}
	}
	if n := strings.Count(line, "\n"); n != 1 {
		t.Errorf("%d log lines, want 1:\n%s", n, line)
	}
}

// metricsLimiter grants everything and reports fixed metrics: a limiter
// that cannot say what Acquire would do.
type metricsLimiter struct{ m limit.Metrics }

func (l metricsLimiter) Acquire(context.Context, limit.Request) (limit.Permit, error) {
	return limit.Permit{}, nil
}
func (metricsLimiter) Release(limit.Permit)     {}
func (l metricsLimiter) Metrics() limit.Metrics { return l.m }

// TestDryRunLimiterUnknown: a limiter that is not a Checker gives outcome
// unknown, with the figures of its metrics, rather than a guess.
func TestDryRunLimiterUnknown(t *testing.T) {
	lim := metricsLimiter{limit.Metrics{Current: 3, QueueLength: 2, Limit: 4, Buckets: map[string]limit.BucketMetrics{"custom": {Current: 1, Limit: 2, Weight: 1}}}}
	w := newDryWorld(t, engine.Options{Limiter: lim}, echoTool())
	d := w.dry(t, wield.Call{Tool: "echo", Arguments: args(`{"message":"a"}`)})
	want := &wield.DryRunLimit{Bucket: "custom", Weight: 1, Outcome: "unknown", InFlight: 3, Limit: 4, BucketInFlight: 1, BucketLimit: 2, Queued: 2}
	if diff := cmp.Diff(want, d.Limit); diff != "" || !d.WouldRun {
		t.Errorf("would_run %v; limit (-want +got):\n%s", d.WouldRun, diff)
	}
}
