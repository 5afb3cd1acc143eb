package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

func TestTimeout(t *testing.T) {
	// ignore blocks until the test ends, whatever its context says.
	ignore := func(release <-chan struct{}) wield.HandlerFunc {
		return func(context.Context, json.RawMessage) (json.RawMessage, error) {
			<-release
			return args(`"too late"`), nil
		}
	}
	respect := func(<-chan struct{}) wield.HandlerFunc {
		return func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	wrapped := func(<-chan struct{}) wield.HandlerFunc {
		return func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, fmt.Errorf("fetch: %w", ctx.Err())
		}
	}
	tests := []struct {
		name     string
		handler  func(<-chan struct{}) wield.HandlerFunc
		category wield.Category
		tool     time.Duration // Tool.Timeout
		call     time.Duration // Call.Timeout
		opts     engine.Options
		want     time.Duration
	}{
		{name: "tool timeout, handler ignores ctx", handler: ignore, tool: 2 * time.Second, want: 2 * time.Second},
		{name: "tool timeout, handler respects ctx", handler: respect, tool: 2 * time.Second, want: 2 * time.Second},
		{name: "tool timeout, handler wraps ctx error", handler: wrapped, tool: 2 * time.Second, want: 2 * time.Second},
		{name: "call overrides tool", handler: ignore, tool: 2 * time.Second, call: 500 * time.Millisecond, want: 500 * time.Millisecond},
		{name: "call longer than tool", handler: respect, tool: 2 * time.Second, call: 5 * time.Second, want: 5 * time.Second},
		{name: "default", handler: ignore, category: wield.CategoryCustom, want: 30 * time.Second},
		{name: "default, no category", handler: ignore, category: "", want: 30 * time.Second},
		{name: "network default", handler: ignore, category: wield.CategoryNetwork, want: 60 * time.Second},
		{name: "http default", handler: respect, category: wield.CategoryHTTP, want: 60 * time.Second},
		{name: "mcp default", handler: ignore, category: wield.CategoryMCP, want: 60 * time.Second},
		{name: "ai is not network", handler: ignore, category: wield.CategoryAI, want: 30 * time.Second},
		{name: "options default", handler: ignore, opts: engine.Options{DefaultTimeout: 5 * time.Second, NetworkTimeout: 7 * time.Second}, want: 5 * time.Second},
		{name: "options network", handler: ignore, category: wield.CategoryHTTP, opts: engine.Options{DefaultTimeout: 5 * time.Second, NetworkTimeout: 7 * time.Second}, want: 7 * time.Second},
		{name: "tool beats network default", handler: ignore, category: wield.CategoryHTTP, tool: time.Second, want: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				tool := rawTool("hang", tt.handler(release))
				tool.Category = tt.category
				tool.Timeout = tt.tool
				tool.Annotations.Idempotent = true // timeouts are not retried all the same
				e := newEngine(t, &tt.opts, tool)
				start := time.Now()
				res := mustCall(t, e, wield.Call{Tool: "hang", Timeout: tt.call})
				if d := time.Since(start); d != tt.want {
					t.Errorf("the call took %v, want %v", d, tt.want)
				}
				want := failure{ErrorType: wield.ErrTimeout, Error: fmt.Sprintf("Tool execution timed out after %dms", tt.want.Milliseconds()), Attempts: 1}
				if diff := cmp.Diff(want, failureOf(res)); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
				if res.Duration != tt.want {
					t.Errorf("Duration = %v, want %v", res.Duration, tt.want)
				}
			})
		})
	}
}

// TestTimeoutOfCaller checks a caller's deadline shorter than the tool's
// timeout: the call times out then, and says after how long.
func TestTimeoutOfCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		tool := rawTool("hang", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			<-release
			return nil, nil
		})
		e := newEngine(t, nil, tool)
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		start := time.Now()
		res, err := e.Call(ctx, wield.Call{Tool: "hang"})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 1500*time.Millisecond {
			t.Errorf("the call took %v, want 1.5s", d)
		}
		want := failure{ErrorType: wield.ErrTimeout, Error: "Tool execution timed out after 1500ms", Attempts: 1}
		if diff := cmp.Diff(want, failureOf(res)); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
	})
}

func TestCanceledWhileRunning(t *testing.T) {
	for _, respects := range []bool{false, true} {
		t.Run(fmt.Sprintf("respects ctx %v", respects), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				tool := rawTool("hang", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
					if respects {
						<-ctx.Done()
						return nil, ctx.Err()
					}
					<-release
					return nil, nil
				})
				e := newEngine(t, nil, tool)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				time.AfterFunc(time.Second, cancel)
				start := time.Now()
				res, err := e.Call(ctx, wield.Call{Tool: "hang"})
				if err != nil {
					t.Fatal(err)
				}
				if d := time.Since(start); d != time.Second {
					t.Errorf("the call took %v, want 1s", d)
				}
				want := failure{ErrorType: wield.ErrCanceled, Error: "the call was canceled before the tool finished", Attempts: 1}
				if diff := cmp.Diff(want, failureOf(res)); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestCanceledBeforeStart(t *testing.T) {
	ran := false
	tool := rawTool("t", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		ran = true
		return nil, nil
	})
	e := newEngine(t, nil, tool)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := e.Call(ctx, wield.Call{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorType != wield.ErrCanceled || res.Attempts != 0 || ran {
		t.Errorf("got %+v, ran %v; want canceled before running", failureOf(res), ran)
	}
}

// script is a handler that returns the errors of errs in turn, then "ok",
// and notes when each attempt started.
type script struct {
	errs  []error
	times []time.Time
}

func (s *script) Handle(context.Context, json.RawMessage) (json.RawMessage, error) {
	n := len(s.times)
	s.times = append(s.times, time.Now())
	if n < len(s.errs) && s.errs[n] != nil {
		return nil, s.errs[n]
	}
	return args(`"ok"`), nil
}

func (s *script) gaps() []time.Duration {
	var out []time.Duration
	for i := 1; i < len(s.times); i++ {
		out = append(out, s.times[i].Sub(s.times[i-1]))
	}
	return out
}

func TestRetry(t *testing.T) {
	errFlaky := wield.Transient(errors.New("connection reset"))
	errHard := errors.New("no such host")
	always := func(err error) []error {
		out := make([]error, 10)
		for i := range out {
			out[i] = err
		}
		return out
	}
	ms := time.Millisecond
	tests := []struct {
		name       string
		idempotent bool
		timeout    time.Duration
		retry      engine.RetryPolicy
		args       string
		errs       []error
		want       failure
		calls      int
		gaps       []time.Duration
	}{
		{
			name: "transient twice then success", idempotent: true,
			errs: []error{errFlaky, errFlaky},
			want: failure{OK: true, Attempts: 3}, calls: 3, gaps: []time.Duration{100 * ms, 200 * ms},
		},
		{
			name: "not idempotent", errs: []error{errFlaky},
			want: failure{ErrorType: wield.ErrExecution, Error: "connection reset", Attempts: 1}, calls: 1,
		},
		{
			name: "not transient", idempotent: true, errs: []error{errHard},
			want: failure{ErrorType: wield.ErrExecution, Error: "no such host", Attempts: 1}, calls: 1,
		},
		{
			name: "default max attempts", idempotent: true, errs: always(errFlaky),
			want:  failure{ErrorType: wield.ErrExecution, Error: "connection reset", Attempts: 3},
			calls: 3, gaps: []time.Duration{100 * ms, 200 * ms},
		},
		{
			name: "max attempts 5", idempotent: true, errs: always(errFlaky), retry: engine.RetryPolicy{MaxAttempts: 5},
			want:  failure{ErrorType: wield.ErrExecution, Error: "connection reset", Attempts: 5},
			calls: 5, gaps: []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms},
		},
		{
			name: "max attempts 1", idempotent: true, errs: always(errFlaky), retry: engine.RetryPolicy{MaxAttempts: 1},
			want: failure{ErrorType: wield.ErrExecution, Error: "connection reset", Attempts: 1}, calls: 1,
		},
		{
			name: "max backoff", idempotent: true, errs: always(errFlaky),
			retry: engine.RetryPolicy{MaxAttempts: 4, Backoff: time.Second, MaxBackoff: 1500 * ms},
			want:  failure{ErrorType: wield.ErrExecution, Error: "connection reset", Attempts: 4},
			calls: 4, gaps: []time.Duration{time.Second, 1500 * ms, 1500 * ms},
		},
		{
			name: "typed error keeps its type", idempotent: true,
			errs: []error{&wield.Error{Type: wield.ErrValidation, Message: "date is in the past", Err: errors.New("internal")}},
			want: failure{ErrorType: wield.ErrValidation, Error: "date is in the past", Attempts: 1}, calls: 1,
		},
		{
			name: "wrapped typed error", idempotent: true,
			errs: []error{fmt.Errorf("sandbox: %w", wield.Errorf(wield.ErrPermissionDenied, "path %s is outside the sandbox", "/etc"))},
			want: failure{ErrorType: wield.ErrPermissionDenied, Error: "path /etc is outside the sandbox", Attempts: 1}, calls: 1,
		},
		{
			name: "transient typed error", idempotent: true,
			errs: []error{wield.Transient(wield.Errorf(wield.ErrRejected, "busy"))},
			want: failure{OK: true, Attempts: 2}, calls: 2, gaps: []time.Duration{100 * ms},
		},
		{
			name: "retries stop at the timeout", idempotent: true, timeout: 250 * ms, errs: always(errFlaky),
			// Attempts at 0 and 100 ms; the timeout falls in the second backoff.
			want:  failure{ErrorType: wield.ErrExecution, Error: "connection reset", Attempts: 2},
			calls: 2, gaps: []time.Duration{100 * ms},
		},
		{
			name: "validation failure never runs", idempotent: true, args: `{"x":`, errs: always(errFlaky),
			want: failure{ErrorType: wield.ErrValidation, Error: "invalid arguments for tool 'flaky': arguments are not valid JSON: invalid JSON at offset 5: unexpected end of input"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{errs: tt.errs}
				tool := rawTool("flaky", s.Handle)
				tool.Annotations.Idempotent = tt.idempotent
				tool.Timeout = tt.timeout
				e := newEngine(t, &engine.Options{Retry: tt.retry}, tool)
				res := mustCall(t, e, wield.Call{Tool: "flaky", Arguments: args(tt.args)})
				if diff := cmp.Diff(tt.want, failureOf(res)); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
				if len(s.times) != tt.calls {
					t.Errorf("the handler ran %d times, want %d", len(s.times), tt.calls)
				}
				if diff := cmp.Diff(tt.gaps, s.gaps()); diff != "" {
					t.Errorf("time between attempts (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestPanicNotRetried(t *testing.T) {
	n := 0
	tool := rawTool("boom", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		n++
		panic(wield.Transient(errors.New("looks transient")))
	})
	tool.Annotations.Idempotent = true
	e := newEngine(t, nil, tool)
	res := mustCall(t, e, wield.Call{Tool: "boom"})
	if res.ErrorType != wield.ErrExecution || res.Attempts != 1 || n != 1 {
		t.Errorf("got %+v after %d runs; want execution_error after 1", failureOf(res), n)
	}
}

type ctxKey struct{}

// TestHandlerContext checks the context a handler gets: the caller's values
// and the call, the call's deadline, and an end once the call is over.
func TestHandlerContext(t *testing.T) {
	tests := []struct {
		name         string
		callerWithin time.Duration // the caller's own deadline; 0 for none
		handler      func(ctx context.Context) error
		wantType     wield.ErrorType
		wantDeadline time.Duration
		wantErrAfter error // the handler's ctx.Err() once Call returned
	}{
		{
			name:         "quick",
			handler:      func(context.Context) error { return nil },
			wantDeadline: 5 * time.Second, wantErrAfter: context.Canceled,
		},
		{
			name:         "caller's deadline first",
			callerWithin: 2 * time.Second,
			handler:      func(context.Context) error { return nil },
			wantDeadline: 2 * time.Second, wantErrAfter: context.Canceled,
		},
		{
			name: "polls Err until the deadline",
			handler: func(ctx context.Context) error {
				for range 1000 {
					if err := ctx.Err(); err != nil {
						return err
					}
					time.Sleep(100 * time.Millisecond)
				}
				return errors.New("never saw the deadline")
			},
			wantType: wield.ErrTimeout, wantDeadline: 5 * time.Second, wantErrAfter: context.DeadlineExceeded,
		},
		{
			name: "waits on Done until the deadline",
			handler: func(ctx context.Context) error {
				<-ctx.Done()
				return ctx.Err()
			},
			wantType: wield.ErrTimeout, wantDeadline: 5 * time.Second, wantErrAfter: context.DeadlineExceeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					seen     context.Context
					deadline time.Time
					hasDL    bool
					value    any
					call     *wield.Call
					exited   = make(chan struct{})
				)
				tool := rawTool("ctx", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
					defer close(exited)
					seen = ctx
					deadline, hasDL = ctx.Deadline()
					value = ctx.Value(ctxKey{})
					call = wield.CallFrom(ctx)
					return nil, tt.handler(ctx)
				})
				tool.Timeout = 5 * time.Second
				e := newEngine(t, nil, tool)
				parent := context.WithValue(context.Background(), ctxKey{}, "from the caller")
				if tt.callerWithin > 0 {
					var cancel context.CancelFunc
					parent, cancel = context.WithTimeout(parent, tt.callerWithin)
					defer cancel()
				}
				start := time.Now()
				res, err := e.Call(parent, wield.Call{ID: "c1", Tool: "ctx"})
				if err != nil {
					t.Fatal(err)
				}
				if res.ErrorType != tt.wantType {
					t.Errorf("got %+v, want error type %q", failureOf(res), tt.wantType)
				}
				if !hasDL || !deadline.Equal(start.Add(tt.wantDeadline)) {
					t.Errorf("Deadline() = %v, %v; want start+%v", deadline.Sub(start), hasDL, tt.wantDeadline)
				}
				if value != "from the caller" || call == nil || call.ID != "c1" {
					t.Errorf("Value = %v, CallFrom = %+v; want the caller's value and the call", value, call)
				}
				<-exited // a handler may outlive its call
				if err := seen.Err(); !errors.Is(err, tt.wantErrAfter) {
					t.Errorf("after the call, the handler's ctx.Err() = %v, want %v", err, tt.wantErrAfter)
				}
				select {
				case <-seen.Done():
				default:
					t.Error("after the call, the handler's ctx is not done")
				}
			})
		})
	}
}

func TestHandlerContextParentCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		polls := 0
		exited := make(chan struct{})
		tool := rawTool("poll", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			defer close(exited)
			for range 1000 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				polls++
				time.Sleep(100 * time.Millisecond)
			}
			return nil, errors.New("never saw the cancellation")
		})
		e := newEngine(t, nil, tool)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(350*time.Millisecond, cancel)
		start := time.Now()
		res, err := e.Call(ctx, wield.Call{Tool: "poll"})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorType != wield.ErrCanceled || time.Since(start) != 350*time.Millisecond {
			t.Errorf("got %+v after %v; want canceled after 350ms", failureOf(res), time.Since(start))
		}
		<-exited // the handler sees the cancellation at its next poll
		if polls != 4 {
			t.Errorf("the handler polled %d times, want 4 (0, 100, 200, 300 ms)", polls)
		}
	})
}

// TestNestedDefaultsReachHandler: the handler of a typed tool whose
// options struct is left out sees its defaults, not the zero values its own
// minimum forbids.
func TestNestedDefaultsReachHandler(t *testing.T) {
	type page struct {
		Limit int    `json:"limit" minimum:"1" default:"10"`
		Sort  string `json:"sort,omitempty" default:"date"`
	}
	type in struct {
		Query string `json:"query"`
		Page  page   `json:"page,omitzero"`
	}
	var got in
	tool := wield.Func("search", "Search", func(_ context.Context, v in) (string, error) {
		got = v
		return "ok", nil
	})
	e := newEngine(t, nil, tool)
	res := mustCall(t, e, wield.Call{Tool: "search", Arguments: args(`{"query":"x"}`)})
	if !res.OK {
		t.Fatalf("%+v", failureOf(res))
	}
	if want := (in{Query: "x", Page: page{Limit: 10, Sort: "date"}}); got != want {
		t.Errorf("handler got %+v, want %+v", got, want)
	}
}
