package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/limit"
)

// gate is a tool that blocks in its handler until the gate opens.
type gate struct {
	started chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{started: make(chan struct{}, 100), open: make(chan struct{})} }

func (g *gate) tool(name string) *wield.Tool {
	return rawTool(name, func(context.Context, json.RawMessage) (json.RawMessage, error) {
		g.started <- struct{}{}
		<-g.open
		return args(`"opened"`), nil
	})
}

func newLimiter(t *testing.T, cfg limit.Config) *limit.Controller {
	t.Helper()
	c, err := limit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLimiterReject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		lim := newLimiter(t, limit.Config{MaxConcurrent: 1, Strategy: limit.Reject})
		e := newEngine(t, &engine.Options{Limiter: lim}, g.tool("slow"), echoTool())
		if e.Limiter() != lim {
			t.Error("Limiter() is not the configured limiter")
		}
		ctx := context.Background()
		first := e.Go(ctx, wield.Call{Tool: "slow"})
		<-g.started

		res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"second"}`), Caller: wield.ForConversation("a", "c")})
		want := failure{ErrorType: wield.ErrRejected, Error: "Too many tool calls are running; this call was not run. Try again later."}
		if diff := cmp.Diff(want, failureOf(res)); diff != "" {
			t.Errorf("second call (-want +got):\n%s", diff)
		}

		res = mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"node"}`), Caller: wield.ForWorkflow("wf", "node")})
		if !res.OK || string(res.Output) != `{"message":"node"}` {
			t.Errorf("workflow call = %+v, want it to bypass the limit", failureOf(res))
		}

		close(g.open)
		if res, err := first.Wait(ctx); err != nil || !res.OK {
			t.Fatalf("first call = %+v, %v", res, err)
		}
		m := lim.Metrics()
		if m.Current != 0 || m.Acquired != 1 || m.Rejected != 1 || m.Bypassed != 1 {
			t.Errorf("metrics current %d acquired %d rejected %d bypassed %d; want 0 1 1 1", m.Current, m.Acquired, m.Rejected, m.Bypassed)
		}
		// The permit came back: calls run again.
		if res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"third"}`)}); !res.OK {
			t.Errorf("call after release = %+v", failureOf(res))
		}
	})
}

func TestLimiterQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := 3 * time.Second
		slow := rawTool("slow", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			time.Sleep(work) // the tool's work, in the bubble's fake time
			return args(`"slept"`), nil
		})
		lim := newLimiter(t, limit.Config{MaxConcurrent: 1, QueueTimeout: 10 * time.Second})
		e := newEngine(t, &engine.Options{Limiter: lim}, slow, echoTool())
		ctx := context.Background()

		first := e.Go(ctx, wield.Call{Tool: "slow"})
		synctest.Wait() // first holds the permit and sleeps
		start := time.Now()
		res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"queued"}`)})
		if !res.OK {
			t.Fatalf("queued call = %+v", failureOf(res))
		}
		if res.QueueWait != work || res.Duration != work || time.Since(start) != work {
			t.Errorf("QueueWait %v, Duration %v, elapsed %v; want %v each", res.QueueWait, res.Duration, time.Since(start), work)
		}
		if !res.StartedAt.Equal(start.Add(work)) {
			t.Errorf("StartedAt = %v, want when the permit came (%v)", res.StartedAt, start.Add(work))
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["queue_wait_ms"] != 3000.0 || m["duration_ms"] != 3000.0 {
			t.Errorf("queue_wait_ms, duration_ms = %v, %v; want 3000, 3000", m["queue_wait_ms"], m["duration_ms"])
		}
		if res, err := first.Wait(ctx); err != nil || !res.OK || res.QueueWait != 0 {
			t.Errorf("first call = %+v, %v; want ok without queueing", res, err)
		}
	})
}

func TestLimiterQueueTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		lim := newLimiter(t, limit.Config{MaxConcurrent: 1, QueueTimeout: 2 * time.Second})
		e := newEngine(t, &engine.Options{Limiter: lim}, g.tool("slow"), echoTool())
		ctx := context.Background()
		first := e.Go(ctx, wield.Call{Tool: "slow"})
		<-g.started

		start := time.Now()
		res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"late"}`)})
		want := failure{ErrorType: wield.ErrRejected, Error: "No capacity became free in time; this call was not run. Try again later."}
		if diff := cmp.Diff(want, failureOf(res)); diff != "" {
			t.Errorf("queued call (-want +got):\n%s", diff)
		}
		if d := time.Since(start); d != 2*time.Second || res.QueueWait != 2*time.Second {
			t.Errorf("elapsed %v, QueueWait %v; want 2s each", d, res.QueueWait)
		}

		// A caller that leaves the queue is canceled, not rejected.
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(time.Second, cancel)
		res, err := e.Call(cctx, wield.Call{Tool: "echo", Arguments: args(`{"message":"gone"}`)})
		if err != nil {
			t.Fatal(err)
		}
		want = failure{ErrorType: wield.ErrCanceled, Error: "the call was canceled while waiting for capacity"}
		if diff := cmp.Diff(want, failureOf(res)); diff != "" {
			t.Errorf("canceled in the queue (-want +got):\n%s", diff)
		}

		close(g.open)
		if _, err := first.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLimiterBuckets checks that a call's category is its bucket.
func TestLimiterBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		ai := g.tool("think")
		ai.Category = wield.CategoryAI
		lim := newLimiter(t, limit.Config{MaxConcurrent: 10, Strategy: limit.Reject, Buckets: map[string]limit.Bucket{"ai": {Limit: 1}}})
		e := newEngine(t, &engine.Options{Limiter: lim}, ai, echoTool())
		ctx := context.Background()
		first := e.Go(ctx, wield.Call{Tool: "think"})
		<-g.started
		if res := mustCall(t, e, wield.Call{Tool: "think"}); res.ErrorType != wield.ErrRejected {
			t.Errorf("second ai call = %+v, want rejected", failureOf(res))
		}
		if res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)}); !res.OK {
			t.Errorf("custom call beside a full ai bucket = %+v, want ok", failureOf(res))
		}
		close(g.open)
		if _, err := first.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if m := lim.Metrics().Buckets["ai"]; m.Acquired != 1 || m.Rejected != 1 {
			t.Errorf("ai bucket acquired %d rejected %d; want 1 1", m.Acquired, m.Rejected)
		}
	})
}

// TestTimeoutKeepsPermit checks that a call that timed out while its handler
// ignores the context returns on time, but its slot stays taken until the
// handler really returns: limits count the handlers that run.
func TestTimeoutKeepsPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		tool := g.tool("hang")
		tool.Timeout = time.Second
		lim := newLimiter(t, limit.Config{MaxConcurrent: 1, Strategy: limit.Reject})
		e := newEngine(t, &engine.Options{Limiter: lim}, tool, echoTool())
		if res := mustCall(t, e, wield.Call{Tool: "hang"}); res.ErrorType != wield.ErrTimeout {
			t.Fatalf("got %+v, want timeout", failureOf(res))
		}
		if got := e.Stray(); got != 1 {
			t.Errorf("Stray() = %d after the timeout, want 1", got)
		}
		if res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)}); res.ErrorType != wield.ErrRejected {
			t.Errorf("call while the timed-out handler still runs = %+v, want rejected", failureOf(res))
		}
		close(g.open)
		synctest.Wait()
		if got := e.Stray(); got != 0 {
			t.Errorf("Stray() = %d after the handler returned, want 0", got)
		}
		if res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)}); !res.OK {
			t.Errorf("call after the handler returned = %+v, want ok", failureOf(res))
		}
	})
}

// countingLimiter grants every request (or fails with err) and counts
// releases.
type countingLimiter struct {
	err      error
	mu       sync.Mutex
	acquired int
	released int
	reqs     []limit.Request
}

func (l *countingLimiter) Acquire(_ context.Context, req limit.Request) (limit.Permit, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, req)
	if l.err != nil {
		return limit.Permit{}, l.err
	}
	l.acquired++
	return limit.NewPermit(l, req.Bucket, 1, uint64(l.acquired)), nil
}

func (l *countingLimiter) Release(limit.Permit) {
	l.mu.Lock()
	l.released++
	l.mu.Unlock()
}

func (l *countingLimiter) Metrics() limit.Metrics { return limit.Metrics{} }

func TestLimiterFailure(t *testing.T) {
	lim := &countingLimiter{err: errors.New("redis: connection refused")}
	e := newEngine(t, &engine.Options{Limiter: lim}, echoTool())
	res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)})
	want := failure{ErrorType: wield.ErrRejected, Error: "The concurrency limiter is unavailable; this call was not run."}
	if diff := cmp.Diff(want, failureOf(res)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if strings.Contains(res.Error, "redis") {
		t.Errorf("the limiter's error reached the model: %q", res.Error)
	}
}

// TestPermitReleased checks that every permit goes back exactly once,
// whatever the call's end, and that each call asks with its category,
// priority and caller.
func TestPermitReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		lim := &countingLimiter{}
		hang := rawTool("hang", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			<-release
			return nil, nil
		})
		hang.Timeout = time.Second
		hang.Category = wield.CategoryHTTP
		boom := rawTool("boom", func(context.Context, json.RawMessage) (json.RawMessage, error) { panic("boom") })
		fails := rawTool("fails", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, wield.Transient(errors.New("flaky"))
		})
		fails.Annotations.Idempotent = true
		e := newEngine(t, &engine.Options{Limiter: lim}, echoTool(), hang, boom, fails)
		calls := []wield.Call{
			{Tool: "echo", Arguments: args(`{"message":"x"}`), Priority: 3},
			{Tool: "hang", Caller: wield.ForConversation("a", "c")},
			{Tool: "boom"},
			{Tool: "fails"},
			{Tool: "echo", Arguments: args(`{}`)}, // invalid: never asks
			{Tool: "nope"},                        // not found: never asks
			{Tool: "echo", Arguments: args(`{"message":"x"}`), Caller: wield.ForWorkflow("wf", "n")},
		}
		for _, c := range calls {
			mustCall(t, e, c)
		}
		lim.mu.Lock()
		if lim.acquired != 5 || lim.released != 4 {
			t.Errorf("before the timed-out handler returns: acquired %d, released %d; want 5, 4", lim.acquired, lim.released)
		}
		lim.mu.Unlock()
		close(release)
		synctest.Wait()
		lim.mu.Lock()
		defer lim.mu.Unlock()
		if lim.acquired != 5 || lim.released != 5 {
			t.Errorf("acquired %d, released %d; want 5, 5", lim.acquired, lim.released)
		}
		want := []limit.Request{
			{Bucket: "custom", Priority: 3},
			{Bucket: "http"},
			{Bucket: "custom"},
			{Bucket: "custom"},
			{Bucket: "custom", Bypass: true},
		}
		if diff := cmp.Diff(want, lim.reqs); diff != "" {
			t.Errorf("limit requests (-want +got):\n%s", diff)
		}
	})
}
