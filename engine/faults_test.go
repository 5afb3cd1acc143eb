package engine_test

// Fault tests: tools that misbehave as badly as a tool can (panic, hang
// while ignoring their context, return 100 MB), each of which must be
// contained, reported to the model with the right error type, and recorded.
// Whole-server faults are in cmd/wield/faults_test.go, store faults in
// sqlite/faults_test.go and postgres/faults_test.go; an imported MCP server
// that dies is covered by mcpbridge/import_interop_test.go
// (TestImportStdioKilledAfterGrace).

import (
	"bytes"
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
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/internal/racedetect"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/memstore"
)

// secretDetail is what a panicking tool puts in its panic value: it must
// reach the log, and never the result or the record.
const secretDetail = "dsn=postgres://admin:hunter2@10.0.0.5/prod"

// TestFaultPanic checks every kind of panic a handler can raise, on a
// worker goroutine and inline: the result is an execution_error whose text
// holds nothing of the panic, the record says the same, the panic and its
// stack go to the log, the concurrency slot is given back, and the engine
// keeps serving.
func TestFaultPanic(t *testing.T) {
	tests := []struct {
		name  string
		panic func()
		log   string // what the log must show of the panic's value
	}{
		{"string", func() { panic(secretDetail) }, "hunter2"},
		{"error value", func() { panic(errors.New(secretDetail)) }, "hunter2"},
		{"fmt value", func() { panic(fmt.Sprintf("%v", map[string]string{"detail": secretDetail})) }, "hunter2"},
		{"runtime error", func() {
			var m map[string]int
			m[secretDetail]++
		}, "assignment to entry in nil map"},
		{"index out of range", func() {
			s := []string{secretDetail}
			i := len(s)
			_ = s[i]
		}, "index out of range"},
		{"nil", func() { panic(nil) }, "panic called with nil argument"}, // *runtime.PanicNilError since Go 1.21
	}
	for _, inline := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/inline=%v", tt.name, inline), func(t *testing.T) {
				var logs bytes.Buffer
				var mu sync.Mutex
				logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
					mu.Lock()
					defer mu.Unlock()
					return logs.Write(p)
				}), nil))
				boom := rawTool("boom", func(context.Context, json.RawMessage) (json.RawMessage, error) {
					tt.panic()
					return args(`"unreachable"`), nil
				})
				boom.Inline = inline
				boom.Annotations.Idempotent = true // a panic is never retried all the same
				lim, err := limit.New(limit.Config{MaxConcurrent: 1, Strategy: limit.Reject})
				if err != nil {
					t.Fatal(err)
				}
				store := memstore.New(0)
				e := newEngine(t, &engine.Options{Logger: logger, Limiter: lim, Store: store}, boom, echoTool())

				for range 3 { // the slot is given back each time, or the next call is rejected
					res := mustCall(t, e, wield.Call{Tool: "boom", Arguments: args(`{}`)})
					want := failure{ErrorType: wield.ErrExecution, Error: "Tool 'boom' failed unexpectedly (internal error)", Attempts: 1}
					if diff := cmp.Diff(want, failureOf(res)); diff != "" {
						t.Fatalf("result (-want +got):\n%s", diff)
					}
				}
				if m := lim.Metrics(); m.Current != 0 || m.Rejected != 0 {
					t.Errorf("limiter after the panics: current %d, rejected %d; want 0, 0", m.Current, m.Rejected)
				}
				if res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"still here"}`)}); !res.OK {
					t.Errorf("the engine broke after a panic: %+v", failureOf(res))
				}
				recs := store.Records(memstore.Filter{Tool: "boom"})
				if len(recs) != 3 {
					t.Fatalf("%d records of boom, want 3", len(recs))
				}
				for _, r := range recs {
					b, err := json.Marshal(r)
					if err != nil {
						t.Fatal(err)
					}
					if r.Result.OK || r.Result.ErrorType != wield.ErrExecution || strings.Contains(string(b), "hunter2") {
						t.Errorf("record = %s; want an execution_error without the panic's text", b)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if !strings.Contains(logs.String(), tt.log) {
					t.Errorf("the panic's value (%q) was not logged; logs start:\n%.500s", tt.log, logs.String())
				}
				if !strings.Contains(logs.String(), "faults_test.go") {
					t.Errorf("the panic's stack was not logged; logs start:\n%.500s", logs.String())
				}
			})
		}
	}
}

// TestFaultHangIgnoringContext runs a handler that blocks until the test
// lets it go, whatever its context says: the call is a timeout on time and
// is recorded so; the handler is counted by Stray and keeps its slot (with
// one slot and the reject strategy, the next call is rejected, so it
// certainly did not run); once it returns, its late output is dropped, Stray
// is back to zero and the slot is free.
func TestFaultHangIgnoringContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var returned sync.WaitGroup
		returned.Add(1)
		hang := rawTool("hang", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			defer returned.Done()
			<-release
			return args(`"too late"`), nil
		})
		hang.Timeout = 2 * time.Second
		lim, err := limit.New(limit.Config{MaxConcurrent: 1, Strategy: limit.Reject})
		if err != nil {
			t.Fatal(err)
		}
		store := memstore.New(0)
		e := newEngine(t, &engine.Options{Limiter: lim, Store: store}, hang, echoTool())

		start := time.Now()
		res := mustCall(t, e, wield.Call{Tool: "hang", Arguments: args(`{}`)})
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("the call took %v, want 2s", d)
		}
		want := failure{ErrorType: wield.ErrTimeout, Error: "Tool execution timed out after 2000ms", Attempts: 1}
		if diff := cmp.Diff(want, failureOf(res)); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		if n := e.Stray(); n != 1 {
			t.Errorf("Stray() = %d while the handler still runs, want 1", n)
		}
		if m := lim.Metrics(); m.Current != 1 {
			t.Errorf("limiter current = %d while the handler still runs, want 1 (its slot)", m.Current)
		}
		next := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"hi"}`)})
		if next.OK || next.ErrorType != wield.ErrRejected {
			t.Errorf("a call while the stray handler holds the only slot: %+v, want rejected", failureOf(next))
		}

		close(release)
		returned.Wait()
		synctest.Wait() // the worker gives the slot back after the handler returned
		if n := e.Stray(); n != 0 {
			t.Errorf("Stray() = %d after the handler returned, want 0", n)
		}
		if m := lim.Metrics(); m.Current != 0 {
			t.Errorf("limiter current = %d after the handler returned, want 0", m.Current)
		}
		if res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"hi"}`)}); !res.OK {
			t.Errorf("a call after the stray handler returned: %+v, want ok", failureOf(res))
		}
		recs := store.Records(memstore.Filter{Tool: "hang"})
		if len(recs) != 1 {
			t.Fatalf("%d records of hang, want 1", len(recs))
		}
		if r := recs[0].Result; r.OK || r.ErrorType != wield.ErrTimeout || r.Output != nil {
			t.Errorf("record of the hung call: ok=%v type=%s output=%s; want a timeout without output (the late one is dropped)", r.OK, r.ErrorType, r.Output)
		}
	})
}

// TestFaultHugeOutput has a tool return 100 MB (a JSON string, and a JSON
// array of the same size): the model gets at most the budget, head and
// tail with a notice, the metadata says it was cut, and the result's
// FullOutput and the record keep all 100 MB byte for byte. Under the race
// detector, 16 MB, still 256 times the budget: 100 MB took 19 s of a
// 2-core machine there (2026-11-28), and the full size runs without it
// in the test command's memory stage.
func TestFaultHugeOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates several hundred MB")
	}
	size := 100 << 20
	if racedetect.Enabled {
		size = 16 << 20
	}
	text := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	copy(text, "HEAD")
	copy(text[len(text)-4:], "TAIL")
	asString, err := json.Marshal(string(text))
	if err != nil {
		t.Fatal(err)
	}
	asArray := make([]byte, 0, size+2)
	asArray = append(asArray, '[')
	for len(asArray) < size {
		asArray = append(asArray, "1234567,"...)
	}
	asArray = append(asArray, "0]"...)

	for _, tt := range []struct {
		name string
		out  []byte
		head string // what the cut output starts with
	}{
		{"string", asString, `"HEAD`},
		{"array", asArray, `"[1234567,`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			big := rawTool("big", func(context.Context, json.RawMessage) (json.RawMessage, error) {
				return tt.out, nil
			})
			store := memstore.New(0)
			e := newEngine(t, &engine.Options{Store: store}, big)
			res := mustCall(t, e, wield.Call{Tool: "big", Arguments: args(`{}`)})
			if !res.OK {
				t.Fatalf("got %+v, want ok", failureOf(res))
			}
			if len(res.Output) > engine.DefaultMaxOutput {
				t.Errorf("the model got %d bytes, over the %d-byte budget", len(res.Output), engine.DefaultMaxOutput)
			}
			if !json.Valid(res.Output) || !strings.HasPrefix(string(res.Output), tt.head) || !strings.Contains(string(res.Output), "bytes cut here") {
				t.Errorf("cut output starts %.60q and has no notice, want head %q and a notice", res.Output, tt.head)
			}
			if res.Metadata["truncated"] != true || res.Metadata["original_bytes"] != len(tt.out) {
				t.Errorf("metadata = %v, want truncated and original_bytes %d", res.Metadata, len(tt.out))
			}
			if !bytes.Equal(res.FullOutput, tt.out) {
				t.Errorf("FullOutput has %d bytes, not the %d the tool returned", len(res.FullOutput), len(tt.out))
			}
			recs := store.Records(memstore.Filter{})
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			if !bytes.Equal(recs[0].Result.FullOutput, tt.out) {
				t.Errorf("the record keeps %d bytes of the output, not the %d the tool returned", len(recs[0].Result.FullOutput), len(tt.out))
			}
		})
	}
}
