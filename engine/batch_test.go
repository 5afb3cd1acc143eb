package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

type sleepIn struct {
	MS  int    `json:"ms"`
	Tag string `json:"tag"`
}

// sleepTool answers its tag after sleeping ms milliseconds of the bubble's time.
func sleepTool() *wield.Tool {
	return wield.Func("sleep", "Sleep, then answer", func(ctx context.Context, in sleepIn) (string, error) {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
			return in.Tag, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
}

func TestCallAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(t, nil, sleepTool(), echoTool())
		calls := []wield.Call{
			{Tool: "sleep", Arguments: args(`{"ms":300,"tag":"a"}`)},
			{Tool: "echo", Arguments: args(`{"message":"b"}`)},
			{Tool: "nope"},
			{Tool: "sleep", Arguments: args(`{"ms":100,"tag":"d"}`)},
			{Tool: "sleep", Arguments: args(`{"ms":200,"tag":"e"}`)},
			{Tool: "sleep", Arguments: args(`{"ms":"x"}`)},
			{Tool: "sleep", Arguments: args(`{"ms":500,"tag":"g"}`), Timeout: 50 * time.Millisecond},
		}
		start := time.Now()
		results, err := e.CallAll(context.Background(), calls)
		if err != nil {
			t.Fatal(err)
		}
		// In parallel: as long as the slowest, not the sum.
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Errorf("CallAll took %v, want 300ms", d)
		}
		type row struct {
			Tool      string
			OK        bool
			Output    string
			ErrorType wield.ErrorType
		}
		var got []row
		for _, r := range results {
			got = append(got, row{r.Tool, r.OK, string(r.Output), r.ErrorType})
		}
		want := []row{
			{"sleep", true, `"a"`, ""},
			{"echo", true, `{"message":"b"}`, ""},
			{"nope", false, "", wield.ErrToolNotFound},
			{"sleep", true, `"d"`, ""},
			{"sleep", true, `"e"`, ""},
			{"sleep", false, "", wield.ErrValidation},
			{"sleep", false, "", wield.ErrTimeout},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		ids := map[string]bool{}
		for _, r := range results {
			ids[r.CallID] = true
		}
		if len(ids) != len(calls) {
			t.Errorf("%d distinct call ids for %d calls", len(ids), len(calls))
		}

		if rs, err := e.CallAll(context.Background(), nil); err != nil || len(rs) != 0 {
			t.Errorf("CallAll(nil) = %v, %v", rs, err)
		}
	})
}

func TestCallAllStoreFailure(t *testing.T) {
	errDown := errors.New("store down")
	e := newEngine(t, &engine.Options{Store: failStore{errDown}}, echoTool())
	results, err := e.CallAll(context.Background(), []wield.Call{
		{Tool: "echo", Arguments: args(`{"message":"a"}`)},
		{Tool: "echo", Arguments: args(`{"message":"b"}`)},
	})
	if !errors.Is(err, errDown) {
		t.Errorf("err = %v, want one wrapping %v", err, errDown)
	}
	if len(results) != 2 || results[0] == nil || results[1] == nil || !results[0].OK || !results[1].OK {
		t.Errorf("results = %v, want both, ran", results)
	}
}

func TestGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(t, nil, sleepTool())
		ctx := context.Background()
		start := time.Now()
		p := e.Go(ctx, wield.Call{Tool: "sleep", Arguments: args(`{"ms":1000,"tag":"late"}`)})
		if time.Since(start) != 0 {
			t.Error("Go waited for the call")
		}
		select {
		case <-p.Done():
			t.Fatal("Done before the call finished")
		default:
		}

		// A Wait that gives up leaves the call running.
		wctx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
		defer cancel()
		res, err := p.Wait(wctx)
		if !errors.Is(err, context.DeadlineExceeded) || res != nil {
			t.Errorf("Wait with a short ctx = %v, %v; want nil, DeadlineExceeded", res, err)
		}

		<-p.Done()
		if d := time.Since(start); d != time.Second {
			t.Errorf("Done after %v, want 1s", d)
		}
		res, err = p.Wait(ctx)
		if err != nil || !res.OK || string(res.Output) != `"late"` {
			t.Errorf("Wait = %+v, %v", res, err)
		}
		// Wait can be called again.
		if again, err := p.Wait(ctx); again != res || err != nil {
			t.Errorf("second Wait = %v, %v", again, err)
		}
	})
}

func TestGoCallerCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(t, nil, sleepTool())
		ctx, cancel := context.WithCancel(context.Background())
		p := e.Go(ctx, wield.Call{Tool: "sleep", Arguments: args(`{"ms":1000,"tag":"x"}`)})
		time.AfterFunc(100*time.Millisecond, cancel)
		res, err := p.Wait(context.Background())
		if err != nil || res.ErrorType != wield.ErrCanceled {
			t.Errorf("Wait = %+v, %v; want canceled", res, err)
		}
	})
}

// TestCallAllUnderLimit checks that a batch larger than the limiter's queue
// runs whatever fits and rejects the rest, each in its own result.
func TestCallAllUnderLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(t, nil, sleepTool()) // the default limiter: 10 at once, 100 waiting
		calls := make([]wield.Call, 150)
		for i := range calls {
			calls[i] = wield.Call{Tool: "sleep", Arguments: json.RawMessage(`{"ms":100,"tag":"t"}`)}
		}
		start := time.Now()
		results, err := e.CallAll(context.Background(), calls)
		if err != nil {
			t.Fatal(err)
		}
		ok, rejected := 0, 0
		for _, r := range results {
			switch {
			case r.OK:
				ok++
			case r.ErrorType == wield.ErrRejected:
				rejected++
			default:
				t.Errorf("unexpected result %+v", failureOf(r))
			}
		}
		if ok != 110 || rejected != 40 {
			t.Errorf("%d ok, %d rejected; want 110 (10 running + 100 queued), 40", ok, rejected)
		}
		// Eleven rounds of ten calls of 100 ms each.
		if d := time.Since(start); d != 1100*time.Millisecond {
			t.Errorf("CallAll took %v, want 1.1s", d)
		}
	})
}

// TestGoHandle: the handle of a background call names its ID at once (the
// one its result carries), answers TryResult without waiting, and Cancel
// ends the call as canceled.
func TestGoHandle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(t, nil, sleepTool())
		p := e.Go(context.Background(), wield.Call{Tool: "sleep", Arguments: args(`{"ms":1000,"tag":"x"}`)})
		id := p.ID()
		if id == "" {
			t.Fatal("ID is empty before the call ends")
		}
		if res, err, ok := p.TryResult(); ok || res != nil || err != nil {
			t.Errorf("TryResult while running = %v, %v, %v; want nil, nil, false", res, err, ok)
		}
		time.Sleep(100 * time.Millisecond)
		p.Cancel()
		<-p.Done()
		res, err, ok := p.TryResult()
		if !ok || err != nil || res.ErrorType != wield.ErrCanceled || res.CallID != id {
			t.Errorf("TryResult after Cancel = %+v, %v, %v; want canceled with call ID %s", res, err, ok, id)
		}
		p.Cancel() // after the end: nothing

		// A caller's own ID is the handle's, and stays claimed as chosen.
		q := e.Go(context.Background(), wield.Call{ID: "mine-1", Tool: "sleep", Arguments: args(`{"ms":10,"tag":"y"}`)})
		if q.ID() != "mine-1" {
			t.Errorf("ID = %q, want mine-1", q.ID())
		}
		if res, err := q.Wait(context.Background()); err != nil || !res.OK || res.CallID != "mine-1" {
			t.Errorf("Wait = %+v, %v", res, err)
		}
		// Two handles never share an ID.
		a, b := e.Go(context.Background(), wield.Call{Tool: "sleep", Arguments: args(`{"ms":1,"tag":"a"}`)}),
			e.Go(context.Background(), wield.Call{Tool: "sleep", Arguments: args(`{"ms":1,"tag":"b"}`)})
		if a.ID() == b.ID() {
			t.Errorf("two calls share the ID %s", a.ID())
		}
		a.Wait(context.Background())
		b.Wait(context.Background())
	})
}
