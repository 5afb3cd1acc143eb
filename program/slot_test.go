package program_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/memstore"
	"github.com/wieldhq/wield/program"
)

// TestProgramsAtTheLimitFinish runs as many programs at once as the
// limiter has slots, each making inner calls: a program lends its slot to
// its inner call while it waits for it, so all finish, and the units in
// flight never pass the limit (a program and its inner call hold one slot
// between them). Before, each program held its slot and its inner calls
// queued behind the others' until the queue timeout: every program ended
// rejected.
func TestProgramsAtTheLimitFinish(t *testing.T) {
	const n = 3
	lim, err := limit.New(limit.Config{MaxConcurrent: n, QueueSize: 50, QueueTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	var over atomic.Int64
	var mu sync.Mutex
	peak := 0
	slow := wield.Func("slow", "Add slowly", func(_ context.Context, in addIn) (int, error) {
		cur := lim.Metrics().Current
		mu.Lock()
		peak = max(peak, cur)
		mu.Unlock()
		if cur > n {
			over.Add(1)
		}
		time.Sleep(20 * time.Millisecond)
		return in.A + in.B, nil
	})
	reg.MustRegister(slow)
	eng := engine.New(reg, &engine.Options{Store: memstore.New(1000), Limiter: lim})
	reg.MustRegister(program.Tool(program.Options{Invoker: eng, Registry: reg}))

	args, _ := json.Marshal(program.Input{Code: "t = 0\nfor i in range(4):\n    t += slow(a=i, b=1)\nresult = t\n"})
	results := make([]*wield.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := eng.Call(ctx, wield.Call{Tool: program.Name, Arguments: args})
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = res
		})
	}
	wg.Wait()
	for i, res := range results {
		if res == nil {
			continue
		}
		if !res.OK {
			t.Errorf("program %d: %s: %s", i, res.ErrorType, res.Error)
			continue
		}
		var out program.Output
		if err := json.Unmarshal(res.Output, &out); err != nil || fmt.Sprint(out.Result) != "10" || out.Calls != 4 {
			t.Errorf("program %d output %s (%v), want result 10 after 4 calls", i, res.Output, err)
		}
	}
	if over.Load() > 0 {
		t.Errorf("%d inner calls saw more than %d units in flight (peak %d)", over.Load(), n, peak)
	}
	m := lim.Metrics()
	if m.Current != 0 || m.TimedOut != 0 || m.Rejected != 0 {
		t.Errorf("after the programs: %d units in flight, %d timed out, %d rejected; want 0, 0, 0", m.Current, m.TimedOut, m.Rejected)
	}
}

// TestProgramSlotAfterTimeout: a program stopped at its deadline while an
// inner call runs gives back every slot (its own is not released twice, nor
// kept).
func TestProgramSlotAfterTimeout(t *testing.T) {
	lim, err := limit.New(limit.Config{MaxConcurrent: 2, QueueSize: 10, QueueTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("nap", "Sleep", func(ctx context.Context, in addIn) (int, error) {
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(in.A) * time.Millisecond):
		}
		return 0, nil
	}))
	eng := engine.New(reg, &engine.Options{Store: memstore.New(1000), Limiter: lim})
	reg.MustRegister(program.Tool(program.Options{Invoker: eng, Registry: reg}))
	args, _ := json.Marshal(program.Input{Code: "nap(a=1)\nnap(a=2000)\n"})
	res, err := eng.Call(context.Background(), wield.Call{Tool: program.Name, Arguments: args, Timeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.ErrorType != wield.ErrTimeout {
		t.Errorf("program = %s %s, want timeout", res.ErrorType, res.Error)
	}
	deadline := time.Now().Add(5 * time.Second)
	for lim.Metrics().Current != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c := lim.Metrics().Current; c != 0 {
		t.Errorf("%d units still in flight after the program ended", c)
	}
}
