package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

// quiet is a logger for engines whose failures are the point of the test.
var quiet = slog.New(slog.DiscardHandler)

type echoIn struct {
	Message string `json:"message" description:"What to say back"`
}

type echoOut struct {
	Message string `json:"message"`
}

func echo(_ context.Context, in echoIn) (echoOut, error) { return echoOut(in), nil }

func echoTool() *wield.Tool { return wield.Func("echo", "Echo a message", echo) }

// newEngine returns an engine over a fresh registry holding tools, with a
// quiet logger unless opts sets one.
func newEngine(t testing.TB, opts *engine.Options, tools ...*wield.Tool) *engine.Engine {
	t.Helper()
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: quiet})
	if err := reg.Register(tools...); err != nil {
		t.Fatalf("register: %v", err)
	}
	var o engine.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = quiet
	}
	e := engine.New(reg, &o)
	// Close lets the engine's idle handler goroutines go, which a
	// testing/synctest bubble needs before it ends.
	t.Cleanup(func() {
		if err := e.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// rawTool is a tool over raw JSON that takes any object.
func rawTool(name string, h wield.HandlerFunc) *wield.Tool {
	return wield.Raw(name, "test tool "+name, &jsonschema.Schema{Type: "object"}, h)
}

// mustCall runs a call that must not fail as a system.
func mustCall(t testing.TB, e *engine.Engine, c wield.Call) *wield.Result {
	t.Helper()
	res, err := e.Call(context.Background(), c)
	if err != nil {
		t.Fatalf("Call(%s): system error %v", c.Tool, err)
	}
	if res == nil {
		t.Fatalf("Call(%s): nil result", c.Tool)
	}
	return res
}

func args(s string) json.RawMessage { return json.RawMessage(s) }

// failure is the part of a failed result a test compares.
type failure struct {
	OK        bool
	ErrorType wield.ErrorType
	Error     string
	Attempts  int
}

func failureOf(r *wield.Result) failure {
	return failure{OK: r.OK, ErrorType: r.ErrorType, Error: r.Error, Attempts: r.Attempts}
}

func TestCallHappyPath(t *testing.T) {
	e := newEngine(t, nil, echoTool())
	before := time.Now()
	res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"hi"}`)})
	after := time.Now()

	if !res.OK || res.ErrorType != "" || res.Error != "" {
		t.Fatalf("Call failed: %+v", res)
	}
	if diff := cmp.Diff(`{"message":"hi"}`, string(res.Output)); diff != "" {
		t.Errorf("Output (-want +got):\n%s", diff)
	}
	if res.Attempts != 1 || res.Tool != "echo" || res.CallID == "" {
		t.Errorf("Attempts, Tool, CallID = %d, %q, %q; want 1, echo, an id", res.Attempts, res.Tool, res.CallID)
	}
	if res.StartedAt.Before(before) || res.FinishedAt.Before(res.StartedAt) || res.FinishedAt.After(after) {
		t.Errorf("StartedAt %v, FinishedAt %v not within [%v, %v] in order", res.StartedAt, res.FinishedAt, before, after)
	}
	if res.Duration <= 0 || res.Duration > after.Sub(before) {
		t.Errorf("Duration = %v, want in (0, %v]", res.Duration, after.Sub(before))
	}
	if res.Metadata != nil || res.FullOutput != nil || res.ValidationErrors != nil {
		t.Errorf("unexpected extras: Metadata %v, FullOutput %s, ValidationErrors %v", res.Metadata, res.FullOutput, res.ValidationErrors)
	}

	// A caller-chosen ID is kept.
	res = mustCall(t, e, wield.Call{ID: "call-1", Tool: "echo", Arguments: args(`{"message":"x"}`)})
	if res.CallID != "call-1" {
		t.Errorf("CallID = %q, want call-1", res.CallID)
	}
	// Two calls without IDs get different ones.
	a := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)})
	b := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)})
	if a.CallID == b.CallID {
		t.Errorf("two calls share the id %q", a.CallID)
	}
}

func TestResultJSON(t *testing.T) {
	e := newEngine(t, nil, echoTool())
	res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"hi"}`)})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"call_id", "tool", "ok", "output", "attempts", "started_at", "finished_at", "duration_ms"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON %s lacks %q", b, k)
		}
	}
	for _, k := range []string{"CallID", "Duration", "error", "error_type", "FullOutput", "full_output"} {
		if _, ok := m[k]; ok {
			t.Errorf("JSON %s has %q", b, k)
		}
	}
	if d, _ := m["duration_ms"].(float64); d < 0 {
		t.Errorf("duration_ms = %v", m["duration_ms"])
	}
	if m["call_id"] != res.CallID || m["ok"] != true {
		t.Errorf("call_id, ok = %v, %v; want %q, true", m["call_id"], m["ok"], res.CallID)
	}
}

type countIn struct {
	Name  string `json:"name" description:"A name"`
	Count int    `json:"count" description:"How many"`
	Mode  string `json:"mode,omitempty" default:"fast" description:"How"`
}

func TestBadInput(t *testing.T) {
	var got []countIn
	var mu sync.Mutex
	tool := wield.Func("count", "Count things", func(_ context.Context, in countIn) (countIn, error) {
		mu.Lock()
		got = append(got, in)
		mu.Unlock()
		return in, nil
	})
	e := newEngine(t, &engine.Options{MaxArguments: 32 << 10}, tool)

	deep := `{"name":"n","count":1,"mode":` + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000) + `}`
	huge := `{"name":"` + strings.Repeat("x", 40<<10) + `","count":1}`

	tests := []struct {
		name      string
		tool      string
		args      string
		errorType wield.ErrorType
		error     string // a substring of the message
		paths     []string
	}{
		{name: "unknown tool", tool: "x", args: `{}`, errorType: wield.ErrToolNotFound, error: "Can not find tool named 'x'"},
		{name: "wrong type", tool: "count", args: `{"name":"n","count":"many"}`, errorType: wield.ErrValidation, error: "count", paths: []string{"count"}},
		{name: "missing required", tool: "count", args: `{"count":1}`, errorType: wield.ErrValidation, error: "missing required", paths: []string{"name"}},
		{name: "unknown key", tool: "count", args: `{"name":"n","count":1,"colour":"red"}`, errorType: wield.ErrValidation, error: "unknown property", paths: []string{"colour"}},
		{name: "case mismatch", tool: "count", args: `{"Name":"n","count":1}`, errorType: wield.ErrValidation, error: `did you mean "name"?`, paths: []string{"Name", "name"}},
		{name: "not JSON", tool: "count", args: `{"name":`, errorType: wield.ErrValidation, error: "not valid JSON", paths: []string{""}},
		{name: "not an object", tool: "count", args: `[1,2]`, errorType: wield.ErrValidation, error: "", paths: []string{""}},
		{name: "deep", tool: "count", args: deep, errorType: wield.ErrValidation, error: "nested deeper", paths: []string{""}},
		{name: "huge", tool: "count", args: huge, errorType: wield.ErrValidation, error: "exceed the limit of 32768 bytes", paths: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustCall(t, e, wield.Call{Tool: tt.tool, Arguments: args(tt.args)})
			if res.OK || res.ErrorType != tt.errorType || !strings.Contains(res.Error, tt.error) {
				t.Fatalf("got ok=%v %s %q; want %s containing %q", res.OK, res.ErrorType, res.Error, tt.errorType, tt.error)
			}
			if res.Attempts != 0 {
				t.Errorf("Attempts = %d, want 0: the tool never ran", res.Attempts)
			}
			var paths []string
			for _, v := range res.ValidationErrors {
				paths = append(paths, v.Path)
				if v.Message == "" {
					t.Errorf("validation error at %q has no message", v.Path)
				}
			}
			if diff := cmp.Diff(tt.paths, paths); diff != "" {
				t.Errorf("validation error paths (-want +got):\n%s\nerrors: %+v", diff, res.ValidationErrors)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("the handler ran for bad input: %+v", got)
	}
}

func TestCoercionAndDefaultsReachHandler(t *testing.T) {
	var got []countIn
	var raw []string
	tool := wield.Func("count", "Count things", func(ctx context.Context, in countIn) (countIn, error) {
		got = append(got, in)
		return in, nil
	})
	rawCount := wield.Raw("rawcount", "Count things", tool.InputSchema, wield.HandlerFunc(func(_ context.Context, a json.RawMessage) (json.RawMessage, error) {
		raw = append(raw, string(a))
		return a, nil
	}))
	e := newEngine(t, nil, tool, rawCount)

	for _, c := range []wield.Call{
		{Tool: "count", Arguments: args(`{"name":"n","count":"5"}`)},
		{Tool: "count", Arguments: args(`{"name":"n","count":7,"mode":"slow"}`)},
		{Tool: "rawcount", Arguments: args(`{"count":"5","name":"n"}`)},
	} {
		if res := mustCall(t, e, c); !res.OK {
			t.Fatalf("%s: %s %s", c.Arguments, res.ErrorType, res.Error)
		}
	}
	want := []countIn{{Name: "n", Count: 5, Mode: "fast"}, {Name: "n", Count: 7, Mode: "slow"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handler input (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`{"count":5,"name":"n","mode":"fast"}`}, raw); diff != "" {
		t.Errorf("raw handler input (-want +got):\n%s", diff)
	}
}

func TestLookupStates(t *testing.T) {
	disabled := echoTool()
	disabled.Name, disabled.Status = "off", wield.StatusDisabled
	held := echoTool()
	held.Name, held.Status = "held", wield.StatusHeld
	noHandler := echoTool()
	noHandler.Name, noHandler.Handler = "bare", nil
	e := newEngine(t, nil, disabled, held, noHandler)

	tests := []struct {
		tool string
		want failure
	}{
		{"off", failure{ErrorType: wield.ErrToolNotFound, Error: "Tool 'off' is disabled and cannot be called"}},
		{"held", failure{ErrorType: wield.ErrToolNotFound, Error: "Tool 'held' is held and cannot be called"}},
		{"bare", failure{ErrorType: wield.ErrExecutorNotFound, Error: "Tool 'bare' has no executor loaded"}},
	}
	for _, tt := range tests {
		res := mustCall(t, e, wield.Call{Tool: tt.tool, Arguments: args(`{"message":"x"}`)})
		if diff := cmp.Diff(tt.want, failureOf(res)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.tool, diff)
		}
	}
}

func TestToolkit(t *testing.T) {
	calc := rawTool("calculator", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return args(`42`), nil
	})
	e := newEngine(t, nil, echoTool(), calc)
	kit, err := e.Registry().CreateToolkit("A", "echo")
	if err != nil {
		t.Fatal(err)
	}
	notAvailable := failure{ErrorType: wield.ErrToolNotFound, Error: "Tool 'calculator' not available in A's toolkit"}
	ctx := context.Background()

	// Through Call.Toolkit.
	res := mustCall(t, e, wield.Call{Tool: "calculator", Arguments: args(`{}`), Toolkit: kit})
	if diff := cmp.Diff(notAvailable, failureOf(res)); diff != "" {
		t.Errorf("Call.Toolkit (-want +got):\n%s", diff)
	}
	// Through Bind.
	inv := kit.Bind(e)
	res, err = inv.Call(ctx, wield.Call{Tool: "calculator", Arguments: args(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(notAvailable, failureOf(res)); diff != "" {
		t.Errorf("Bind (-want +got):\n%s", diff)
	}
	// Inside the toolkit, calls run.
	res, err = inv.Call(ctx, wield.Call{Tool: "echo", Arguments: args(`{"message":"in"}`)})
	if err != nil || !res.OK || string(res.Output) != `{"message":"in"}` {
		t.Errorf("echo through the toolkit = %+v, %v", res, err)
	}
	// An unknown tool outside the toolkit is not available either: the
	// agent learns nothing of the rest of the library.
	res, _ = inv.Call(ctx, wield.Call{Tool: "nope"})
	if diff := cmp.Diff(failure{ErrorType: wield.ErrToolNotFound, Error: "Tool 'nope' not available in A's toolkit"}, failureOf(res)); diff != "" {
		t.Errorf("unknown tool through the toolkit (-want +got):\n%s", diff)
	}
	// Without the toolkit the calculator runs.
	if res := mustCall(t, e, wield.Call{Tool: "calculator"}); !res.OK {
		t.Errorf("calculator without a toolkit: %s %s", res.ErrorType, res.Error)
	}
}

func TestPanicContained(t *testing.T) {
	boom := rawTool("boom", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		panic("secret internal detail")
	})
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	e := newEngine(t, &engine.Options{Logger: logger}, boom, echoTool())

	for range 3 {
		res := mustCall(t, e, wield.Call{Tool: "boom", Arguments: args(`{}`)})
		if res.OK || res.ErrorType != wield.ErrExecution || res.Attempts != 1 {
			t.Fatalf("got %+v, want execution_error after 1 attempt", failureOf(res))
		}
		if strings.Contains(res.Error, "secret") {
			t.Errorf("the panic text reached the model: %q", res.Error)
		}
	}
	if res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"still here"}`)}); !res.OK {
		t.Errorf("the engine broke after a panic: %+v", failureOf(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "secret internal detail") {
		t.Errorf("the panic was not logged; logs:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestRecords(t *testing.T) {
	store := memstore.New(0)
	tool := wield.Func("count", "Count things", func(_ context.Context, in countIn) (countIn, error) { return in, nil })
	tool.Version = "1.2"
	tool.Category = wield.CategoryData
	e := newEngine(t, &engine.Options{Store: store}, tool)
	caller := wield.ForConversation("agent-1", "conv-1")

	ok := mustCall(t, e, wield.Call{Tool: "count", Arguments: args(`{"name":"n","count":"5"}`), Caller: caller})
	bad := mustCall(t, e, wield.Call{Tool: "count", Arguments: args(`{"count":1}`), Caller: caller})
	other := mustCall(t, e, wield.Call{Tool: "count", Arguments: args(`{"name":"m","count":1}`), Caller: wield.ForConversation("agent-2", "conv-2")})
	missing := mustCall(t, e, wield.Call{Tool: "nope", Caller: caller})

	recs := store.Records(memstore.Filter{})
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	type rec struct {
		CallID, Tool, Version string
		Category              wield.Category
		Caller                wield.Caller
		Arguments             string
		OK                    bool
	}
	var got []rec
	for _, r := range recs {
		got = append(got, rec{r.Result.CallID, r.Call.Tool, r.ToolVersion, r.Category, r.Call.Caller, string(r.Arguments), r.Result.OK})
		if r.Call.ID != r.Result.CallID {
			t.Errorf("record call id %q, result call id %q", r.Call.ID, r.Result.CallID)
		}
		if r.QueuedAt.IsZero() || r.QueuedAt.After(r.Result.FinishedAt) {
			t.Errorf("QueuedAt %v, FinishedAt %v", r.QueuedAt, r.Result.FinishedAt)
		}
	}
	want := []rec{
		{ok.CallID, "count", "1.2", wield.CategoryData, caller, `{"name":"n","count":5,"mode":"fast"}`, true},
		{bad.CallID, "count", "1.2", wield.CategoryData, caller, ``, false},
		{other.CallID, "count", "1.2", wield.CategoryData, wield.ForConversation("agent-2", "conv-2"), `{"name":"m","count":1,"mode":"fast"}`, true},
		{missing.CallID, "nope", "", "", caller, ``, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if n := len(store.Records(memstore.Filter{ConversationID: "conv-1"})); n != 3 {
		t.Errorf("%d records of conv-1, want 3", n)
	}

	st := e.Registry().Stats().Calls["count"]
	if st.Count != 3 || st.Failures != 1 {
		t.Errorf("Stats count, failures = %d, %d; want 3, 1", st.Count, st.Failures)
	}
}

// TestArgumentsOwnedByHandler checks that a handler that writes into its
// arguments (they belong to it) spoils neither the record nor a retry.
func TestArgumentsOwnedByHandler(t *testing.T) {
	store := memstore.New(0)
	var seen []string
	n := 0
	tool := rawTool("scribble", func(_ context.Context, a json.RawMessage) (json.RawMessage, error) {
		seen = append(seen, string(a))
		for i := range a {
			a[i] = ' '
		}
		n++
		if n == 1 {
			return nil, wield.Transient(errors.New("try again"))
		}
		return args(`"ok"`), nil
	})
	tool.Annotations.Idempotent = true
	e := newEngine(t, &engine.Options{Store: store, Retry: engine.RetryPolicy{Backoff: time.Microsecond}}, tool)
	res := mustCall(t, e, wield.Call{Tool: "scribble", Arguments: args(`{"a":1}`)})
	if !res.OK || res.Attempts != 2 {
		t.Fatalf("got %+v, want ok after 2 attempts", failureOf(res))
	}
	if diff := cmp.Diff([]string{`{"a":1}`, `{"a":1}`}, seen); diff != "" {
		t.Errorf("arguments per attempt (-want +got):\n%s", diff)
	}
	if got := string(store.Records(memstore.Filter{})[0].Arguments); got != `{"a":1}` {
		t.Errorf("record arguments = %q, want {\"a\":1}", got)
	}
}

type failStore struct{ err error }

func (s failStore) Save(context.Context, *wield.Record) error { return s.err }

func TestStoreFailure(t *testing.T) {
	errDown := errors.New("disk on fire")
	e := newEngine(t, &engine.Options{Store: failStore{errDown}}, echoTool())
	res, err := e.Call(context.Background(), wield.Call{Tool: "echo", Arguments: args(`{"message":"hi"}`)})
	if !errors.Is(err, errDown) {
		t.Errorf("err = %v, want one wrapping %v", err, errDown)
	}
	if res == nil || !res.OK || string(res.Output) != `{"message":"hi"}` {
		t.Errorf("result = %+v, want the tool's output: it ran", res)
	}
}

// ctxStore keeps what the context a record is saved under says.
type ctxStore struct {
	err   error
	done  bool
	value any
	dl    bool
}

type ctxStoreKey struct{}

func (s *ctxStore) Save(ctx context.Context, _ *wield.Record) error {
	s.err, s.done, s.value = ctx.Err(), ctx.Done() != nil, ctx.Value(ctxStoreKey{})
	_, s.dl = ctx.Deadline()
	return nil
}

// TestRecordOfCanceledCall: a call whose caller cancels it while it runs
// is recorded under a context with the caller's values and without its
// end, deadline or cancellation.
func TestRecordOfCanceledCall(t *testing.T) {
	store := &ctxStore{}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), ctxStoreKey{}, "v"), time.Hour)
	defer cancel()
	wait := rawTool("wait", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	e := newEngine(t, &engine.Options{Store: store}, wait)
	if _, err := e.Call(ctx, wield.Call{Tool: "wait", Arguments: args(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if store.err != nil || store.done || store.dl || store.value != "v" {
		t.Errorf("saved under a context with Err %v, Done set %v, a deadline %v, the caller's value %v: want nil, false, false, v", store.err, store.done, store.dl, store.value)
	}
}

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		started := make(chan struct{}, 1)
		slow := rawTool("slow", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			started <- struct{}{}
			<-release
			return args(`"done"`), nil
		})
		e := newEngine(t, nil, slow, echoTool())
		ctx := context.Background()
		p := e.Go(ctx, wield.Call{Tool: "slow"})
		<-started

		closed := make(chan error, 1)
		go func() { closed <- e.Close(ctx) }()
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned %v with a call in flight", err)
		default:
		}
		// New calls are refused at once while Close waits.
		if res, err := e.Call(ctx, wield.Call{Tool: "echo", Arguments: args(`{"message":"late"}`)}); !errors.Is(err, wield.ErrClosed) || res != nil {
			t.Errorf("Call during Close = %v, %v; want nil, ErrClosed", res, err)
		}

		close(release)
		if err := <-closed; err != nil {
			t.Errorf("Close = %v", err)
		}
		res, err := p.Wait(ctx)
		if err != nil || !res.OK || string(res.Output) != `"done"` {
			t.Errorf("in-flight call = %+v, %v; want it to finish", res, err)
		}
		if _, err := e.Call(ctx, wield.Call{Tool: "echo", Arguments: args(`{"message":"late"}`)}); !errors.Is(err, wield.ErrClosed) {
			t.Errorf("Call after Close: err = %v, want ErrClosed", err)
		}
		rs, err := e.CallAll(ctx, []wield.Call{{Tool: "echo"}})
		if !errors.Is(err, wield.ErrClosed) || len(rs) != 1 || rs[0] != nil {
			t.Errorf("CallAll after Close = %v, %v; want [nil], ErrClosed", rs, err)
		}
		if err := e.Close(ctx); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})
}

func TestCloseGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		started := make(chan struct{}, 1)
		slow := rawTool("slow", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			started <- struct{}{}
			<-release
			return nil, nil
		})
		e := newEngine(t, nil, slow)
		e.Go(context.Background(), wield.Call{Tool: "slow"})
		<-started
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		err := e.Close(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Close = %v, want one wrapping DeadlineExceeded", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("Close gave up after %v, want 1s", d)
		}
	})
}

// TestCallFrom checks that a handler can see the call it runs for.
func TestCallFrom(t *testing.T) {
	var got *wield.Call
	tool := rawTool("who", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		c := *wield.CallFrom(ctx)
		got = &c
		return nil, nil
	})
	e := newEngine(t, nil, tool)
	caller := wield.ForConversation("agent", "conv")
	res := mustCall(t, e, wield.Call{ID: "c1", Tool: "who", Caller: caller})
	if !res.OK {
		t.Fatalf("%+v", failureOf(res))
	}
	if string(res.Output) != "null" {
		t.Errorf("empty output became %s, want null", res.Output)
	}
	if got == nil || got.ID != "c1" || got.Caller.ConversationID != "conv" {
		t.Errorf("CallFrom = %+v", got)
	}
}

func TestConcurrentCalls(t *testing.T) {
	store := memstore.New(0)
	e := newEngine(t, &engine.Options{Store: store}, echoTool())
	var wg sync.WaitGroup
	const n = 100
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			msg := fmt.Sprint(i)
			res, err := e.Call(context.Background(), wield.Call{Tool: "echo", Arguments: args(`{"message":"` + msg + `"}`)})
			if err != nil {
				errs <- err
				return
			}
			if want := `{"message":"` + msg + `"}`; !res.OK || string(res.Output) != want {
				errs <- fmt.Errorf("call %d: got %s %s, want %s", i, res.Output, res.Error, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if kept, _ := store.Len(); kept != n {
		t.Errorf("%d records, want %d", kept, n)
	}
}

func TestCloseConcurrent(t *testing.T) {
	for range 100 {
		e := newEngine(t, nil, echoTool())
		mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err := e.Close(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
}
