package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/engine"
)

type echoIn struct {
	Message string `json:"message"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sleepIn struct {
	MS int `json:"ms"`
}

type gateIn struct {
	Key string `json:"key"`
}

type whoami struct {
	ID             string `json:"id"`
	Type           string `json:"type"`
	ConversationID string `json:"conversation_id"`
}

// newEngine returns a real engine with a few tools: echo, add, fail, block,
// whoami, and gate, which returns its key once gates[key] is closed.
func newEngine(t *testing.T, gates map[string]chan struct{}) (*engine.Engine, *wield.Registry) {
	t.Helper()
	reg := wield.NewRegistry(nil)
	reg.MustRegister(
		wield.Func("echo", "Echo a message", func(_ context.Context, in echoIn) (string, error) {
			return in.Message, nil
		}),
		wield.Func("add", "Add two integers", func(_ context.Context, in addIn) (int, error) {
			return in.A + in.B, nil
		}),
		wield.Func("fail", "Always fails", func(context.Context, struct{}) (string, error) {
			return "", errors.New("boom")
		}),
		wield.Func("block", "Wait for the call's end", func(ctx context.Context, _ struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}),
		wield.Func("gate", "Wait for a gate to open", func(ctx context.Context, in gateIn) (string, error) {
			select {
			case <-gates[in.Key]:
				return in.Key, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}),
		wield.Func("whoami", "The caller of the call", func(ctx context.Context, _ struct{}) (whoami, error) {
			c := wield.CallFrom(ctx).Caller
			return whoami{c.ID, string(c.Type), c.ConversationID}, nil
		}),
	)
	return engine.New(reg, nil), reg
}

func args(s string) json.RawMessage { return json.RawMessage(s) }

func TestExecute(t *testing.T) {
	e, _ := newEngine(t, nil)
	a := agent.NewSubAgent(e, agent.SubAgentOptions{ID: "sub-1", ParentID: "parent-1", ConversationID: "conv-1"})
	if a.ID() != "sub-1" || a.ParentID() != "parent-1" || a.ConversationID() != "conv-1" {
		t.Errorf("identity = %q %q %q", a.ID(), a.ParentID(), a.ConversationID())
	}

	in := args(`{"message":"hi"}`)
	res, err := a.Execute(context.Background(), "echo", in, 0)
	if err != nil {
		t.Fatalf("Execute = %v", err)
	}
	if !res.OK || string(res.Output) != `"hi"` || res.Tool != "echo" || res.CallID == "" {
		t.Errorf("result = %+v", res)
	}
	in[2] = 'X' // the history keeps its own copy of the arguments

	h := a.History()
	if len(h) != 1 {
		t.Fatalf("history has %d entries, want 1", len(h))
	}
	if h[0].Tool != "echo" || string(h[0].Arguments) != `{"message":"hi"}` || h[0].Result != res || h[0].At.IsZero() {
		t.Errorf("history entry = %+v", h[0])
	}

	res, err = a.Execute(context.Background(), "whoami", nil, 0)
	if err != nil || !res.OK {
		t.Fatalf("Execute(whoami) = %+v, %v", res, err)
	}
	var who whoami
	if err := json.Unmarshal(res.Output, &who); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(whoami{"sub-1", "conversation_agent", "conv-1"}, who); diff != "" {
		t.Errorf("caller mismatch (-want +got):\n%s", diff)
	}
}

// The engine's own timing is tested in package engine; this shows that the
// timeout reaches it. The handler waits for the end of its context, so the
// result is a timeout however slow the machine.
func TestExecuteTimeout(t *testing.T) {
	e, _ := newEngine(t, nil)
	a := agent.NewSubAgent(e, agent.SubAgentOptions{ID: "sub"})
	res, err := a.Execute(context.Background(), "block", nil, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.ErrorType != wield.ErrTimeout || res.Error != "Tool execution timed out after 20ms" {
		t.Errorf("result = %+v, want a 20ms timeout", res)
	}
	if b := a.Brief(); b.TotalCalls != 1 || !b.HasErrors {
		t.Errorf("Brief() = %+v, want one failed call", b)
	}
}

func TestExecuteBatch(t *testing.T) {
	gates := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{}), "c": make(chan struct{})}
	e, _ := newEngine(t, gates)
	finished := make(chan string, 10)
	a := agent.NewSubAgent(e, agent.SubAgentOptions{ID: "sub", OnResult: func(r *wield.Result) {
		if r.Tool == "gate" {
			finished <- string(r.Output)
		}
	}})
	calls := []agent.BatchCall{
		{Tool: "gate", Args: args(`{"key":"a"}`)},
		{Tool: "gate", Args: args(`{"key":"b"}`)},
		{Tool: "echo", Args: args(`{"message":"hello"}`)},
		{Tool: "gate", Args: args(`{"key":"c"}`)},
		{Tool: "nope"},
		{Tool: "add", Args: args(`{"a":1,"b":2}`)},
	}
	type batch struct {
		results []*wield.Result
		err     error
	}
	done := make(chan batch, 1)
	go func() {
		r, err := a.ExecuteBatch(context.Background(), calls)
		done <- batch{r, err}
	}()
	// Open the gates in the order b, c, a, each after the one before finished.
	for _, key := range []string{"b", "c", "a"} {
		close(gates[key])
		if got := <-finished; got != `"`+key+`"` {
			t.Fatalf("gate %s opened, %s finished", key, got)
		}
	}
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	var got []string
	for _, r := range out.results {
		got = append(got, fmt.Sprintf("%s %v %s", r.Tool, r.OK, r.Output))
	}
	want := []string{`gate true "a"`, `gate true "b"`, `echo true "hello"`, `gate true "c"`, "nope false ", "add true 3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}

	// The history has the calls in the order they finished.
	h := a.History()
	if len(h) != len(calls) {
		t.Fatalf("history has %d entries, want %d", len(h), len(calls))
	}
	var gated []string
	for _, x := range h {
		if x.Tool == "gate" {
			gated = append(gated, string(x.Arguments))
		}
	}
	if diff := cmp.Diff([]string{`{"key":"b"}`, `{"key":"c"}`, `{"key":"a"}`}, gated); diff != "" {
		t.Errorf("history order mismatch (-want +got):\n%s", diff)
	}
	if results, err := a.ExecuteBatch(context.Background(), nil); err != nil || len(results) != 0 {
		t.Errorf("ExecuteBatch(nil) = %v, %v", results, err)
	}
}

func TestHistoryBound(t *testing.T) {
	e, _ := newEngine(t, nil)
	a := agent.NewSubAgent(e, agent.SubAgentOptions{MaxHistory: 3})
	for i := range 5 {
		if _, err := a.Execute(context.Background(), "echo", args(fmt.Sprintf(`{"message":"m%d"}`, i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, h := range a.History() {
		got = append(got, string(h.Result.Output))
	}
	if diff := cmp.Diff([]string{`"m2"`, `"m3"`, `"m4"`}, got); diff != "" {
		t.Errorf("history mismatch (-want +got):\n%s", diff)
	}
	s := a.Summary()
	if s.TotalCalls != 5 || len(s.CallDetails) != 3 || s.ToolUsage["echo"] != 5 {
		t.Errorf("Summary() = %+v, want 5 calls counted and 3 detailed", s)
	}
}

// fakeInvoker answers every call at once, ok unless the tool is "bad".
type fakeInvoker struct{ n atomic.Int64 }

func (f *fakeInvoker) Call(_ context.Context, c wield.Call) (*wield.Result, error) {
	n := f.n.Add(1)
	r := &wield.Result{CallID: fmt.Sprint(n), Tool: c.Tool, OK: c.Tool != "bad", Duration: time.Millisecond}
	if !r.OK {
		r.ErrorType, r.Error = wield.ErrExecution, "bad tool"
	}
	return r, nil
}

func TestDefaults(t *testing.T) {
	a := agent.NewSubAgent(&fakeInvoker{}, agent.SubAgentOptions{})
	if len(a.ID()) != wield.IDLen {
		t.Errorf("default ID %q is not a wield.NewID", a.ID())
	}
	b, err := json.Marshal(a.Summary())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agent_id":"` + a.ID() + `","total_calls":0,"successful_calls":0,"failed_calls":0,"success_rate":0,"tool_usage":{},"call_details":[]}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("empty summary mismatch (-want +got):\n%s", diff)
	}
	b, _ = json.Marshal(a.Brief())
	if diff := cmp.Diff(`{"total_calls":0,"success_rate":0,"tool_usage":{},"has_errors":false}`, string(b)); diff != "" {
		t.Errorf("empty brief mismatch (-want +got):\n%s", diff)
	}

	for range agent.DefaultMaxHistory + 1 {
		if _, err := a.Execute(context.Background(), "t", nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	h := a.History()
	if len(h) != agent.DefaultMaxHistory || h[0].Result.CallID != "2" || h[len(h)-1].Result.CallID != "1001" {
		t.Errorf("history of %d from %s to %s, want 1000 from 2 to 1001", len(h), h[0].Result.CallID, h[len(h)-1].Result.CallID)
	}
}

// jsonMap marshals v and reads it back as generic JSON.
func jsonMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSummaries(t *testing.T) {
	e, _ := newEngine(t, nil)
	a := agent.NewSubAgent(e, agent.SubAgentOptions{ID: "tool_sub_agent_001", ConversationID: "conv_001"})
	ctx := context.Background()
	var ids []any
	for _, c := range []agent.BatchCall{
		{Tool: "echo", Args: args(`{"message":"hello"}`)},
		{Tool: "add", Args: args(`{"a":1,"b":2}`)},
		{Tool: "add", Args: args(`{"a":"x","b":2}`)},
		{Tool: "fail"},
		{Tool: "calculator"},
		{Tool: "echo", Args: args(`{"message":"bye"}`)},
	} {
		res, err := a.Execute(ctx, c.Tool, c.Args, 0)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.CallID)
	}

	got := jsonMap(t, a.Summary())
	for _, d := range got["call_details"].([]any) {
		d := d.(map[string]any)
		if ms, ok := d["duration_ms"].(float64); !ok || ms < 0 {
			t.Errorf("duration_ms = %v, want a number of milliseconds", d["duration_ms"])
		}
		delete(d, "duration_ms")
	}
	want := map[string]any{
		"agent_id":         "tool_sub_agent_001",
		"total_calls":      6.0,
		"successful_calls": 3.0,
		"failed_calls":     3.0,
		"success_rate":     50.0,
		"tool_usage":       map[string]any{"echo": 2.0, "add": 2.0, "fail": 1.0, "calculator": 1.0},
		"call_details": []any{
			map[string]any{"tool": "echo", "ok": true, "call_id": ids[0]},
			map[string]any{"tool": "add", "ok": true, "call_id": ids[1]},
			map[string]any{"tool": "add", "ok": false, "call_id": ids[2], "error_type": "validation_error",
				"error": "invalid arguments for tool 'add': a: expected integer, got string \"x\""},
			map[string]any{"tool": "fail", "ok": false, "call_id": ids[3], "error_type": "execution_error", "error": "boom"},
			map[string]any{"tool": "calculator", "ok": false, "call_id": ids[4], "error_type": "tool_not_found",
				"error": "Can not find tool named 'calculator'"},
			map[string]any{"tool": "echo", "ok": true, "call_id": ids[5]},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summary() JSON mismatch (-want +got):\n%s", diff)
	}

	wantBrief := map[string]any{
		"total_calls":  6.0,
		"success_rate": 50.0,
		"tool_usage":   map[string]any{"echo": 2.0, "add": 2.0, "fail": 1.0, "calculator": 1.0},
		"has_errors":   true,
	}
	if diff := cmp.Diff(wantBrief, jsonMap(t, a.Brief())); diff != "" {
		t.Errorf("Brief() JSON mismatch (-want +got):\n%s", diff)
	}
}

func TestSuccessRate(t *testing.T) {
	tests := []struct {
		tools []string
		want  float64
	}{
		{nil, 0},
		{[]string{"ok"}, 100},
		{[]string{"bad"}, 0},
		{[]string{"ok", "ok", "bad"}, 66.7},
		{[]string{"ok", "bad", "bad"}, 33.3},
		{[]string{"ok", "ok", "ok", "ok", "ok", "ok", "ok", "bad"}, 87.5},
	}
	for _, tt := range tests {
		a := agent.NewSubAgent(&fakeInvoker{}, agent.SubAgentOptions{})
		for _, tool := range tt.tools {
			if _, err := a.Execute(context.Background(), tool, nil, 0); err != nil {
				t.Fatal(err)
			}
		}
		if got := a.Brief().SuccessRate; got != tt.want {
			t.Errorf("success rate of %v = %v, want %v", tt.tools, got, tt.want)
		}
		if got := a.Summary().SuccessRate; got != tt.want {
			t.Errorf("summary success rate of %v = %v, want %v", tt.tools, got, tt.want)
		}
	}
}

func TestOnResult(t *testing.T) {
	e, _ := newEngine(t, nil)
	var calls atomic.Int64
	var a *agent.SubAgent
	a = agent.NewSubAgent(e, agent.SubAgentOptions{OnResult: func(r *wield.Result) {
		calls.Add(1)
		// The result is already in the history, and no lock is held.
		for _, h := range a.History() {
			if h.Result == r {
				return
			}
		}
		t.Errorf("OnResult(%s) before the result was in the history", r.CallID)
	}})
	ctx := context.Background()
	for _, tool := range []string{"echo", "fail", "nope"} {
		if _, err := a.Execute(ctx, tool, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	batch := []agent.BatchCall{{Tool: "echo"}, {Tool: "add", Args: args(`{"a":1,"b":1}`)}, {Tool: "fail"}, {Tool: "whoami"}}
	if _, err := a.ExecuteBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 7 {
		t.Errorf("OnResult called %d times, want 7", got)
	}
}

func TestToolkit(t *testing.T) {
	e, reg := newEngine(t, nil)
	kit, err := reg.CreateToolkit("researcher", "echo", "whoami")
	if err != nil {
		t.Fatal(err)
	}
	a := agent.NewSubAgent(e, agent.SubAgentOptions{ID: "sub", Toolkit: kit})
	ctx := context.Background()
	if res, err := a.Execute(ctx, "echo", args(`{"message":"in"}`), 0); err != nil || !res.OK {
		t.Errorf("Execute(echo) = %+v, %v, want ok", res, err)
	}
	res, err := a.Execute(ctx, "add", args(`{"a":1,"b":2}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "Tool 'add' not available in researcher's toolkit"
	if res.OK || res.ErrorType != wield.ErrToolNotFound || res.Error != want {
		t.Errorf("Execute(add) = %+v, want tool_not_found %q", res, want)
	}
	if got := res.Text(); got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}

func TestSystemFailure(t *testing.T) {
	e, _ := newEngine(t, nil)
	var called atomic.Int64
	a := agent.NewSubAgent(e, agent.SubAgentOptions{ID: "sub", OnResult: func(*wield.Result) { called.Add(1) }})
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := a.Execute(context.Background(), "echo", nil, 0)
	if !errors.Is(err, wield.ErrClosed) || res != nil {
		t.Errorf("Execute on a closed engine = %v, %v, want nil, ErrClosed", res, err)
	}
	results, err := a.ExecuteBatch(context.Background(), []agent.BatchCall{{Tool: "echo"}, {Tool: "add"}})
	if !errors.Is(err, wield.ErrClosed) || len(results) != 2 || results[0] != nil || results[1] != nil {
		t.Errorf("ExecuteBatch on a closed engine = %v, %v", results, err)
	}
	if n := len(a.History()); n != 0 || called.Load() != 0 || a.Brief().TotalCalls != 0 {
		t.Errorf("a system failure was recorded: %d entries, %d callbacks", n, called.Load())
	}
}

func TestConcurrentExecute(t *testing.T) {
	e, _ := newEngine(t, nil)
	var callbacks atomic.Int64
	a := agent.NewSubAgent(e, agent.SubAgentOptions{MaxHistory: 50, OnResult: func(*wield.Result) { callbacks.Add(1) }})
	const workers, each = 4, 25
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				tool := "echo"
				if i%5 == 0 {
					tool = "fail"
				}
				if _, err := a.Execute(ctx, tool, args(fmt.Sprintf(`{"message":"%d-%d"}`, w, i)), 0); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range workers * each {
			_ = a.History()
			_ = a.Summary()
			_ = a.Brief()
		}
	})
	wg.Wait()

	s := a.Summary()
	want := map[string]int{"echo": workers * each * 4 / 5, "fail": workers * each / 5}
	if diff := cmp.Diff(want, s.ToolUsage); diff != "" {
		t.Errorf("tool usage mismatch (-want +got):\n%s", diff)
	}
	if s.TotalCalls != workers*each || s.FailedCalls != workers*each/5 || s.SuccessRate != 80 || len(s.CallDetails) != 50 {
		t.Errorf("Summary() = %d calls, %d failed, rate %v, %d details", s.TotalCalls, s.FailedCalls, s.SuccessRate, len(s.CallDetails))
	}
	if got := callbacks.Load(); got != workers*each {
		t.Errorf("%d callbacks, want %d", got, workers*each)
	}
}
