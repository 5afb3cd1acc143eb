package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

// writes is a tool with a side effect that counts its runs.
func writes(runs *atomic.Int64, d time.Duration) *wield.Tool {
	return wield.Func("write", "Write a file", func(ctx context.Context, in pathIn) (string, error) {
		runs.Add(1)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return "wrote " + in.Path, nil
	})
}

// TestCallIDTaken is a client that reuses the ID of a recorded call, to run
// a tool with no record of its own (the store keeps one record per ID): it
// is refused before the tool runs, with wield.ErrCallIDTaken and no result,
// and the record of the first call is the one kept.
func TestCallIDTaken(t *testing.T) {
	var runs atomic.Int64
	s := durable(t)
	e := newEngine(t, &engine.Options{Store: s}, writes(&runs, 0))
	ctx := context.Background()
	res, err := e.Call(ctx, wield.Call{ID: "mine", Tool: "write", Arguments: args(`{"path":"a"}`)})
	if err != nil || !res.OK {
		t.Fatalf("first call: %+v, %v", res, err)
	}
	for _, c := range []wield.Call{
		{ID: "mine", Tool: "write", Arguments: args(`{"path":"b"}`)},
		{ID: "mine", Tool: "write", Arguments: args(`{"path":"a"}`)},
		{ID: "mine", Tool: "write", Arguments: args(`{"path":"b"}`), IdempotencyKey: "k"},
		{ID: "mine", Tool: "no_such_tool"},
	} {
		res, err := e.Call(ctx, c)
		if !errors.Is(err, wield.ErrCallIDTaken) || res != nil {
			t.Errorf("%s again (%s): %+v, %v; want no result and ErrCallIDTaken", c.ID, c.Arguments, res, err)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
	if rec := recordOf(t, s, "mine"); string(rec.Arguments) != `{"path":"a"}` {
		t.Errorf("the record of mine has %s, want the first call's", rec.Arguments)
	}
	if res, err := e.Call(ctx, wield.Call{ID: "yours", Tool: "write", Arguments: args(`{"path":"c"}`)}); err != nil || !res.OK {
		t.Errorf("a call with an ID of its own: %+v, %v", res, err)
	}
}

// TestCallIDTakenWhileRunning is two calls of one ID at once, on one
// engine, with a durable store and with none: one runs, the other is
// refused before its tool runs.
func TestCallIDTakenWhileRunning(t *testing.T) {
	for _, stored := range []bool{true, false} {
		var runs atomic.Int64
		opts := &engine.Options{}
		if stored {
			opts.Store = durable(t)
		}
		e := newEngine(t, opts, writes(&runs, 100*time.Millisecond))
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = e.Call(context.Background(), wield.Call{ID: "same", Tool: "write", Arguments: args(`{"path":"x"}`)})
			})
		}
		wg.Wait()
		refused := 0
		for _, err := range errs {
			switch {
			case errors.Is(err, wield.ErrCallIDTaken):
				refused++
			case err != nil:
				t.Errorf("store %v: %v", stored, err)
			}
		}
		if n := runs.Load(); n != 1 || refused != 3 {
			t.Errorf("store %v: the tool ran %d times and %d calls were refused; want 1 and 3", stored, n, refused)
		}
	}
}

// TestCallIDOfResumedCall: a call resumed after its approval runs under the
// ID it was asked with, which is not a reuse.
func TestCallIDOfResumedCall(t *testing.T) {
	var runs atomic.Int64
	s := durable(t)
	e := newEngine(t, &engine.Options{Store: s}, slowRm(&runs, 0))
	a := decided(t, s, "a", &wield.Decision{Approved: true, By: "ann"}, 0, time.Hour)
	if res, err := e.Resume(context.Background(), a); err != nil || res == nil || !res.OK {
		t.Fatalf("Resume: %+v, %v", res, err)
	}
	if runs.Load() != 1 {
		t.Errorf("ran %d times, want once", runs.Load())
	}
	recordOf(t, s, "call-a")
}
