package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

type chargeIn struct {
	Amount int    `json:"amount"`
	APIKey string `json:"api_key,omitempty"`
}

// TestIdempotency: a repeated call with a key returns the first result
// without running again, the record says so, other arguments with the same
// key are refused, and a failed first call does not count.
func TestIdempotency(t *testing.T) {
	var runs atomic.Int64
	fail := atomic.Bool{}
	charge := wield.Func("charge", "Charge a card", func(_ context.Context, in chargeIn) (map[string]int, error) {
		n := runs.Add(1)
		if fail.Load() {
			return nil, errors.New("card declined")
		}
		return map[string]int{"charged": in.Amount, "run": int(n)}, nil
	})
	store := memstore.New(0)
	e := newEngine(t, &engine.Options{Store: store}, charge)
	ctx := context.Background()
	call := func(key, args string) *wield.Result {
		t.Helper()
		res, err := e.Call(ctx, wield.Call{Tool: "charge", Arguments: json.RawMessage(args), IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	fail.Store(true)
	if res := call("k1", `{"amount":5}`); res.OK {
		t.Fatal("declined card succeeded")
	}
	fail.Store(false)
	first := call("k1", `{"amount":5}`)
	second := call("k1", `{"amount":"5"}`) // the same arguments once coerced
	if !first.OK || !second.OK || runs.Load() != 2 {
		t.Fatalf("first %s %s, second %s %s, %d runs", first.Output, first.Error, second.Output, second.Error, runs.Load())
	}
	if diff := cmp.Diff(string(first.Output), string(second.Output)); diff != "" {
		t.Errorf("replayed output (-first +second)\n%s", diff)
	}
	want := map[string]any{"replayed": true, "replay_of": first.CallID}
	if diff := cmp.Diff(want, second.Metadata); diff != "" {
		t.Errorf("metadata (-want +got)\n%s", diff)
	}
	if second.CallID == first.CallID {
		t.Error("the replay has the first call's ID")
	}
	if res := call("k1", `{"amount":6}`); res.ErrorType != wield.ErrValidation {
		t.Errorf("key reused with other arguments: %s %s", res.ErrorType, res.Error)
	}
	if res := call("k2", `{"amount":6}`); !res.OK || runs.Load() != 3 {
		t.Errorf("a new key did not run: %s, %d runs", res.Error, runs.Load())
	}
	recs := store.Records(memstore.Filter{Tool: "charge"})
	if len(recs) != 5 || recs[2].Result.Metadata["replayed"] != true {
		t.Errorf("%d records; the replay's record should say replayed", len(recs))
	}
}

// TestIdempotencyConcurrent: many identical calls at once run the tool once.
func TestIdempotencyConcurrent(t *testing.T) {
	var runs atomic.Int64
	gate := make(chan struct{})
	slow := wield.Func("slow", "x", func(_ context.Context, in chargeIn) (int, error) {
		runs.Add(1)
		<-gate
		return in.Amount, nil
	})
	e := newEngine(t, &engine.Options{Store: memstore.New(0)}, slow)
	var wg sync.WaitGroup
	results := make([]*wield.Result, 20)
	for i := range results {
		wg.Go(func() {
			results[i], _ = e.Call(context.Background(), wield.Call{Tool: "slow", Arguments: json.RawMessage(`{"amount":1}`), IdempotencyKey: "same"})
		})
	}
	for i := 0; runs.Load() == 0; i++ {
		if i > 1e7 {
			t.Fatal("the first call never started")
		}
		runtime.Gosched()
	}
	close(gate)
	wg.Wait()
	if runs.Load() != 1 {
		t.Errorf("the tool ran %d times, want 1", runs.Load())
	}
	for _, r := range results {
		if r == nil || !r.OK || string(r.Output) != "1" {
			t.Errorf("result %+v", r)
		}
	}
}

// TestRecordRedactsSecrets: secret parameters never reach the record, by
// the default names and by the tool's own list, while the handler gets them.
func TestRecordRedactsSecrets(t *testing.T) {
	type in struct {
		User      string            `json:"user"`
		APIKey    string            `json:"api_key"`
		Pin       string            `json:"pin"`
		MaxTokens int               `json:"max_tokens"`
		Headers   map[string]string `json:"headers"`
	}
	var got in
	tool := wield.Func("login", "x", func(_ context.Context, v in) (string, error) { got = v; return "ok", nil })
	tool.Secrets = []string{"pin"}
	store := memstore.New(0)
	e := newEngine(t, &engine.Options{Store: store}, tool)
	args := `{"user":"ann","api_key":"sk-123","pin":"4321","max_tokens":5,"headers":{"Authorization":"Bearer x","X-Trace":"t"}}`
	if res, err := e.Call(context.Background(), wield.Call{Tool: "login", Arguments: json.RawMessage(args)}); err != nil || !res.OK {
		t.Fatal(err, res.Error)
	}
	if got.APIKey != "sk-123" || got.Pin != "4321" || got.Headers["Authorization"] != "Bearer x" {
		t.Errorf("the handler did not get the real values: %+v", got)
	}
	rec := store.Records(memstore.Filter{})[0]
	for _, raw := range []json.RawMessage{rec.Call.Arguments, rec.Arguments} {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"user": "ann", "api_key": "[REDACTED]", "pin": "[REDACTED]", "max_tokens": float64(5),
			"headers": map[string]any{"Authorization": "[REDACTED]", "X-Trace": "t"}}
		if diff := cmp.Diff(want, m); diff != "" {
			t.Errorf("recorded arguments (-want +got)\n%s", diff)
		}
	}
}
