package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

type payIn struct {
	Amount int    `json:"amount"`
	Note   string `json:"note,omitempty"`
}

// payTool counts its runs and echoes a token the record must not keep.
func payTool(runs *atomic.Int64) *wield.Tool {
	return wield.Func("pay", "Pay", func(_ context.Context, in payIn) (map[string]any, error) {
		n := runs.Add(1)
		return map[string]any{"paid": in.Amount, "run": n, "note": in.Note, "api_key": "sk-live"}, nil
	})
}

// TestIdempotencyWithoutStore: the package doc's engine.New(reg, nil) runs
// a tool once for a key and replays it, as a store would: the output as
// recorded (secrets redacted), the first call named, other arguments
// refused.
func TestIdempotencyWithoutStore(t *testing.T) {
	var runs atomic.Int64
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: quiet})
	reg.MustRegister(payTool(&runs))
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	call := func(key, a string) *wield.Result {
		t.Helper()
		return mustCall(t, e, wield.Call{Tool: "pay", Arguments: args(a), IdempotencyKey: key})
	}
	first := call("k1", `{"amount":5}`)
	second := call("k1", `{"amount":"5"}`)
	if !first.OK || !second.OK || runs.Load() != 1 {
		t.Fatalf("first %s %s, second %s %s: the tool ran %d times, want 1", first.Output, first.Error, second.Output, second.Error, runs.Load())
	}
	if diff := cmp.Diff(map[string]any{"replayed": true, "replay_of": first.CallID}, second.Metadata); diff != "" {
		t.Errorf("metadata (-want +got)\n%s", diff)
	}
	if want := `{"api_key":"[REDACTED]","note":"","paid":5,"run":1}`; string(second.Output) != want {
		t.Errorf("replayed output %s, want the recorded one %s", second.Output, want)
	}
	if res := call("k1", `{"amount":6}`); res.ErrorType != wield.ErrValidation || runs.Load() != 1 {
		t.Errorf("key reused with other arguments: %s %s, %d runs", res.ErrorType, res.Error, runs.Load())
	}
	if res := call("k2", `{"amount":6}`); !res.OK || runs.Load() != 2 {
		t.Errorf("a new key: %s, %d runs", res.Error, runs.Load())
	}
}

// TestReplayWindowBounds: the window forgets keys past their age and past
// its count, and a key remembered whose output was dropped for room is
// refused, not run again, unless the store replays it.
func TestReplayWindowBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int64
		e := newEngine(t, &engine.Options{Replay: engine.ReplayWindow{Keys: 2, Bytes: 150}}, payTool(&runs))
		call := func(key, a string) *wield.Result {
			t.Helper()
			return mustCall(t, e, wield.Call{Tool: "pay", Arguments: args(a), IdempotencyKey: key})
		}
		ran := func(want int64) {
			t.Helper()
			if got := runs.Load(); got != want {
				t.Fatalf("the tool ran %d times, want %d", got, want)
			}
		}

		call("age", `{"amount":1}`)
		time.Sleep(engine.DefaultReplayAge - time.Second)
		call("age", `{"amount":1}`)
		ran(1)
		time.Sleep(2 * time.Second)
		call("age", `{"amount":1}`) // forgotten after ten minutes
		ran(2)

		call("a", `{"amount":1}`)
		call("b", `{"amount":1}`) // the newest two: age, a, b → a, b
		call("a", `{"amount":1}`)
		ran(4)
		call("age", `{"amount":1}`) // pushed out by a and b
		ran(5)

		// Outputs over 150 bytes in all: the oldest output is dropped, its
		// key kept.
		big := strings.Repeat("x", 60)
		call("c", `{"amount":1,"note":"`+big+`"}`)
		call("d", `{"amount":1,"note":"`+big+`"}`)
		ran(7)
		res := call("c", `{"amount":1,"note":"`+big+`"}`)
		if res.OK || res.ErrorType != wield.ErrRejected || !strings.Contains(res.Error, "no longer kept") {
			t.Errorf("a key whose output was dropped: %v %s %s", res.OK, res.ErrorType, res.Error)
		}
		ran(7)
		if res := call("d", `{"amount":1,"note":"`+big+`"}`); res.Metadata["replayed"] != true {
			t.Errorf("the newest key was not replayed: %+v", res)
		}
		ran(7)
	})
}

// TestReplayWindowFallsBackToStore: a key whose output the window dropped
// is replayed from a store that can.
func TestReplayWindowFallsBackToStore(t *testing.T) {
	var runs atomic.Int64
	e := newEngine(t, &engine.Options{Store: memstore.New(0), Replay: engine.ReplayWindow{Bytes: 1}}, payTool(&runs))
	first := mustCall(t, e, wield.Call{Tool: "pay", Arguments: args(`{"amount":3}`), IdempotencyKey: "k"})
	again := mustCall(t, e, wield.Call{Tool: "pay", Arguments: args(`{"amount":3}`), IdempotencyKey: "k"})
	if runs.Load() != 1 || again.Metadata["replay_of"] != first.CallID {
		t.Errorf("ran %d times; second %+v", runs.Load(), again)
	}
}
