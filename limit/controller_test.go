package limit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// outcome is what a goroutine's Acquire returned.
type outcome struct {
	id  int
	p   Permit
	err error
}

func mustNew(t testing.TB, cfg Config) *Controller {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return c
}

func mustAcquire(t testing.TB, c *Controller, req Request) Permit {
	t.Helper()
	p, err := c.Acquire(context.Background(), req)
	if err != nil {
		t.Fatalf("Acquire(%+v): %v", req, err)
	}
	return p
}

// enqueue starts Acquire in a goroutine and returns once that goroutine is
// blocked (queued, or finished). It must run inside a synctest bubble.
func enqueue(ctx context.Context, c *Controller, id int, req Request, out chan<- outcome) {
	go func() {
		p, err := c.Acquire(ctx, req)
		out <- outcome{id: id, p: p, err: err}
	}()
	synctest.Wait()
}

// poll reports the outcome on ch if there is one once every goroutine of the
// bubble is blocked.
func poll(ch <-chan outcome) (outcome, bool) {
	synctest.Wait()
	select {
	case o := <-ch:
		return o, true
	default:
		return outcome{}, false
	}
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name       string
		strategy   Strategy
		priorities []int
		want       []int // ids in the order they get the permit
	}{
		{"fifo", FIFO, []int{0, 0, 0, 0, 0}, []int{0, 1, 2, 3, 4}},
		{"fifo ignores priority", FIFO, []int{1, 5, 3, 5, 1}, []int{0, 1, 2, 3, 4}},
		{"zero strategy is fifo", "", []int{9, 0, 9}, []int{0, 1, 2}},
		{"priority", Priority, []int{1, 5, 3, 5, 1}, []int{1, 3, 2, 0, 4}},
		{"priority ties in arrival order", Priority, []int{2, 2, 2, 2}, []int{0, 1, 2, 3}},
		{"priority negative", Priority, []int{-1, 0, -5, 7, -1, 0}, []int{3, 1, 5, 0, 4, 2}},
		{"priority rising", Priority, []int{1, 2, 3, 4}, []int{3, 2, 1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := mustNew(t, Config{MaxConcurrent: 1, Strategy: tt.strategy})
				held := mustAcquire(t, c, Request{})
				out := make(chan outcome, len(tt.priorities))
				for id, prio := range tt.priorities {
					enqueue(t.Context(), c, id, Request{Priority: prio}, out)
				}
				if got := c.Metrics().QueueLength; got != len(tt.priorities) {
					t.Fatalf("QueueLength = %d, want %d", got, len(tt.priorities))
				}
				var got []int
				for range tt.priorities {
					held.Release()
					o := <-out
					if o.err != nil {
						t.Fatalf("waiter %d: %v", o.id, o.err)
					}
					got = append(got, o.id)
					held = o.p
				}
				held.Release()
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("grant order (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestReject(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		waiters  int // requests queued before the one that must be rejected
		wantQLen int
	}{
		{"reject strategy, no capacity", Config{MaxConcurrent: 1, Strategy: Reject}, 0, 0},
		{"reject strategy ignores QueueSize", Config{MaxConcurrent: 1, QueueSize: 5, Strategy: Reject}, 0, 0},
		{"fifo, queue full", Config{MaxConcurrent: 1, QueueSize: 2}, 2, 2},
		{"priority, queue full", Config{MaxConcurrent: 1, QueueSize: 1, Strategy: Priority}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tt.cfg.Buckets = map[string]Bucket{"http": {}}
				c := mustNew(t, tt.cfg)
				held := mustAcquire(t, c, Request{Bucket: "http"})
				out := make(chan outcome, tt.waiters)
				for i := range tt.waiters {
					enqueue(t.Context(), c, i, Request{Bucket: "http"}, out)
				}
				start := time.Now()
				// A high priority does not buy a place in a full queue.
				_, err := c.Acquire(t.Context(), Request{Bucket: "http", Priority: 100})
				if !errors.Is(err, ErrRejected) {
					t.Fatalf("Acquire = %v, want ErrRejected", err)
				}
				if d := time.Since(start); d != 0 {
					t.Errorf("rejection took %v, want no wait", d)
				}
				m := c.Metrics()
				got := [4]int64{m.Rejected, m.Buckets["http"].Rejected, int64(m.QueueLength), int64(m.Current)}
				if diff := cmp.Diff([4]int64{1, 1, int64(tt.wantQLen), 1}, got); diff != "" {
					t.Errorf("[Rejected, http Rejected, QueueLength, Current] (-want +got):\n%s", diff)
				}
				for range tt.waiters {
					held.Release()
					held = (<-out).p
				}
				held.Release()
			})
		})
	}
}

func TestRejectStrategyGrantsFreeCapacity(t *testing.T) {
	c := mustNew(t, Config{MaxConcurrent: 2, Strategy: Reject})
	p1 := mustAcquire(t, c, Request{})
	p2 := mustAcquire(t, c, Request{})
	if _, err := c.Acquire(context.Background(), Request{}); !errors.Is(err, ErrRejected) {
		t.Fatalf("third Acquire = %v, want ErrRejected", err)
	}
	p1.Release()
	p3 := mustAcquire(t, c, Request{})
	p2.Release()
	p3.Release()
	if m := c.Metrics(); m.Acquired != 3 || m.Rejected != 1 || m.Current != 0 {
		t.Errorf("Metrics = %+v, want Acquired 3, Rejected 1, Current 0", m)
	}
}

func TestBypass(t *testing.T) {
	for _, s := range []Strategy{FIFO, Priority, Reject} {
		t.Run(string(s), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := mustNew(t, Config{MaxConcurrent: 1, QueueSize: 1, Strategy: s, Buckets: map[string]Bucket{"ai": {Limit: 1}}})
				held := mustAcquire(t, c, Request{Bucket: "ai"})
				out := make(chan outcome, 1)
				if s != Reject {
					enqueue(t.Context(), c, 0, Request{Bucket: "ai"}, out) // the queue is full too
				}
				start := time.Now()
				var bypass []Permit
				for range 3 {
					p, err := c.Acquire(t.Context(), Request{Bucket: "ai", Bypass: true})
					if err != nil {
						t.Fatalf("bypass Acquire: %v", err)
					}
					bypass = append(bypass, p)
				}
				if d := time.Since(start); d != 0 {
					t.Errorf("bypass waited %v", d)
				}
				for _, p := range bypass {
					if p.Weight() != 0 || p.Lease() != 0 || p.Bucket() != "ai" {
						t.Errorf("bypass permit: Weight %d, Lease %d, Bucket %q; want 0, 0, ai", p.Weight(), p.Lease(), p.Bucket())
					}
					p.Release()
					c.Release(p) // both no-ops
				}
				m := c.Metrics()
				got := [4]int64{int64(m.Current), int64(m.Buckets["ai"].Current), m.Acquired, m.Bypassed}
				if diff := cmp.Diff([4]int64{1, 1, 1, 3}, got); diff != "" {
					t.Errorf("[Current, ai Current, Acquired, Bypassed] (-want +got):\n%s", diff)
				}
				held.Release()
				if s != Reject {
					(<-out).p.Release()
				}
			})
		})
	}
}

func TestQueueTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := mustNew(t, Config{MaxConcurrent: 1, QueueTimeout: 5 * time.Second, Buckets: map[string]Bucket{"ai": {}}})
		held := mustAcquire(t, c, Request{Bucket: "ai"})
		start := time.Now()
		_, err := c.Acquire(t.Context(), Request{Bucket: "ai"})
		if !errors.Is(err, ErrQueueTimeout) {
			t.Fatalf("Acquire = %v, want ErrQueueTimeout", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("waited %v, want 5s", d)
		}
		m := c.Metrics()
		got := [4]int64{m.TimedOut, m.Buckets["ai"].TimedOut, int64(m.QueueLength), int64(m.Buckets["ai"].Queue)}
		if diff := cmp.Diff([4]int64{1, 1, 0, 0}, got); diff != "" {
			t.Errorf("[TimedOut, ai TimedOut, QueueLength, ai Queue] (-want +got):\n%s", diff)
		}
		held.Release()
	})
}

func TestDefaultQueueTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := mustNew(t, Config{MaxConcurrent: 1})
		held := mustAcquire(t, c, Request{})
		start := time.Now()
		if _, err := c.Acquire(t.Context(), Request{}); !errors.Is(err, ErrQueueTimeout) {
			t.Fatalf("Acquire = %v, want ErrQueueTimeout", err)
		}
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("waited %v, want the default 30s", d)
		}
		held.Release()
	})
}

func TestContextEndsWhileQueued(t *testing.T) {
	tests := []struct {
		name     string
		ctx      func(context.Context) (context.Context, context.CancelFunc)
		end      func(cancel context.CancelFunc) // ends the context; nil: wait for its deadline
		wantErr  error
		wantWait time.Duration
	}{
		{
			name:     "cancel",
			ctx:      context.WithCancel,
			end:      func(cancel context.CancelFunc) { cancel() },
			wantErr:  context.Canceled,
			wantWait: 0,
		},
		{
			name: "deadline before QueueTimeout",
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, time.Second)
			},
			wantErr:  context.DeadlineExceeded,
			wantWait: time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := mustNew(t, Config{MaxConcurrent: 1, Buckets: map[string]Bucket{"http": {}}})
				held := mustAcquire(t, c, Request{Bucket: "http"})
				ctx, cancel := tt.ctx(t.Context())
				defer cancel()
				out := make(chan outcome, 1)
				start := time.Now()
				enqueue(ctx, c, 0, Request{Bucket: "http"}, out)
				if m := c.Metrics(); m.QueueLength != 1 || m.Buckets["http"].Queue != 1 {
					t.Fatalf("before: QueueLength %d, http Queue %d; want 1, 1", m.QueueLength, m.Buckets["http"].Queue)
				}
				if tt.end != nil {
					tt.end(cancel)
				}
				o := <-out
				if !errors.Is(o.err, tt.wantErr) {
					t.Fatalf("Acquire = %v, want %v", o.err, tt.wantErr)
				}
				if d := time.Since(start); d != tt.wantWait {
					t.Errorf("waited %v, want %v", d, tt.wantWait)
				}
				m := c.Metrics()
				got := [4]int64{int64(m.QueueLength), int64(m.Buckets["http"].Queue), m.TimedOut, int64(m.Current)}
				if diff := cmp.Diff([4]int64{0, 0, 0, 1}, got); diff != "" {
					t.Errorf("after: [QueueLength, http Queue, TimedOut, Current] (-want +got):\n%s", diff)
				}
				held.Release()
				if m := c.Metrics(); m.Current != 0 {
					t.Errorf("Current after release = %d, want 0 (the canceled waiter must not be granted)", m.Current)
				}
			})
		})
	}
}

func TestContextDoneBeforeAcquire(t *testing.T) {
	c := mustNew(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, req := range []Request{{}, {Bypass: true}} {
		if _, err := c.Acquire(ctx, req); !errors.Is(err, context.Canceled) {
			t.Errorf("Acquire(%+v) = %v, want context.Canceled", req, err)
		}
	}
	if m := c.Metrics(); m.Acquired != 0 || m.Bypassed != 0 || m.Current != 0 {
		t.Errorf("Metrics = %+v, want nothing acquired", m)
	}
}

func TestBucketSkip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := mustNew(t, Config{MaxConcurrent: 2, Buckets: map[string]Bucket{"ai": {Limit: 1}, "http": {Limit: 2}}})
		ai := mustAcquire(t, c, Request{Bucket: "ai"})
		out := make(chan outcome, 2)
		enqueue(t.Context(), c, 0, Request{Bucket: "ai"}, out) // ai is full
		// Global room is left, and the only waiter is held back by its own
		// bucket: a new http request goes straight through.
		start := time.Now()
		http := mustAcquire(t, c, Request{Bucket: "http"})
		if d := time.Since(start); d != 0 {
			t.Fatalf("http Acquire waited %v behind an ai waiter", d)
		}
		// Now the global capacity is full: the http waiter queues behind the ai one.
		enqueue(t.Context(), c, 1, Request{Bucket: "http"}, out)
		if got := c.Metrics().QueueLength; got != 2 {
			t.Fatalf("QueueLength = %d, want 2", got)
		}
		// Releasing http frees one global unit; the ai waiter's bucket is
		// still full, so the http waiter behind it gets the unit.
		http.Release()
		o, ok := poll(out)
		if !ok || o.id != 1 || o.err != nil {
			t.Fatalf("after http release got %+v (granted %v), want waiter 1 granted", o, ok)
		}
		ai.Release()
		o2, ok := poll(out)
		if !ok || o2.id != 0 || o2.err != nil {
			t.Fatalf("after ai release got %+v (granted %v), want waiter 0 granted", o2, ok)
		}
		o.p.Release()
		o2.p.Release()
	})
}

func TestHeavyWaiterNotStarved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := mustNew(t, Config{MaxConcurrent: 4, Buckets: map[string]Bucket{"heavy": {Weight: 3}}})
		l1 := mustAcquire(t, c, Request{Bucket: "light"})
		l2 := mustAcquire(t, c, Request{Bucket: "light"})
		out := make(chan outcome, 3)
		enqueue(t.Context(), c, 0, Request{Bucket: "heavy"}, out) // needs 3, 2 free
		// One unit would fit the light request, but it must not overtake the
		// heavy waiter, nor may the one after it.
		enqueue(t.Context(), c, 1, Request{Bucket: "light"}, out)
		enqueue(t.Context(), c, 2, Request{Bucket: "light"}, out)
		if _, ok := poll(out); ok {
			t.Fatal("a waiter was granted while the heavy one waits")
		}
		l1.Release() // 3 free: the heavy waiter fits, the light ones then do not
		heavy, ok := poll(out)
		if !ok || heavy.id != 0 {
			t.Fatalf("after first release got %+v (granted %v), want the heavy waiter", heavy, ok)
		}
		if _, ok := poll(out); ok {
			t.Fatal("a light waiter was granted with the capacity full")
		}
		heavy.p.Release() // 3 free: both light waiters
		byLease := map[uint64]int{}
		for range 2 {
			o, ok := poll(out)
			if !ok {
				t.Fatalf("light waiters granted %v, want both", byLease)
			}
			byLease[o.p.Lease()] = o.id
			defer o.p.Release()
		}
		// Leases number the grants, so they give the order the waiters were served in.
		got := []int{byLease[heavy.p.Lease()+1], byLease[heavy.p.Lease()+2]}
		if diff := cmp.Diff([]int{1, 2}, got); diff != "" {
			t.Errorf("light grant order (-want +got):\n%s", diff)
		}
		l2.Release()
	})
}

func TestPriorityPassesLowerWaiter(t *testing.T) {
	tests := []struct {
		strategy Strategy
		wantWait bool
	}{
		{Priority, false}, // queued in front of the heavy waiter, where it fits
		{FIFO, true},      // behind the heavy waiter, which it must not overtake
	}
	for _, tt := range tests {
		t.Run(string(tt.strategy), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := mustNew(t, Config{MaxConcurrent: 3, Strategy: tt.strategy, Buckets: map[string]Bucket{"heavy": {Weight: 3}}})
				held := mustAcquire(t, c, Request{})
				heavy := make(chan outcome, 1)
				enqueue(t.Context(), c, 0, Request{Bucket: "heavy", Priority: 0}, heavy)
				urgent := make(chan outcome, 1)
				enqueue(t.Context(), c, 1, Request{Priority: 5}, urgent)
				o, granted := poll(urgent)
				if granted == tt.wantWait {
					t.Fatalf("urgent request granted = %v, want %v", granted, !tt.wantWait)
				}
				held.Release()
				if granted {
					o.p.Release()
				}
				(<-heavy).p.Release()
				if !granted {
					(<-urgent).p.Release()
				}
			})
		})
	}
}

func TestAbandonedHeavyWaiterUnblocksOthers(t *testing.T) {
	for _, tt := range []struct {
		name    string
		end     func(cancel context.CancelFunc)
		wantErr error
	}{
		{"canceled", func(cancel context.CancelFunc) { cancel() }, context.Canceled},
		{"timed out", func(context.CancelFunc) {}, ErrQueueTimeout}, // 30s after it queued
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := mustNew(t, Config{MaxConcurrent: 4, Buckets: map[string]Bucket{"heavy": {Weight: 4}}})
				held := mustAcquire(t, c, Request{})
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				heavy := make(chan outcome, 1)
				enqueue(ctx, c, 0, Request{Bucket: "heavy"}, heavy)
				time.Sleep(time.Second) // so that the light waiter's own timeout comes later
				light := make(chan outcome, 1)
				enqueue(t.Context(), c, 1, Request{}, light) // 3 free, but behind the heavy waiter
				if _, ok := poll(light); ok {
					t.Fatal("light waiter overtook the heavy one")
				}
				tt.end(cancel)
				if o := <-heavy; !errors.Is(o.err, tt.wantErr) {
					t.Fatalf("heavy waiter = %v, want %v", o.err, tt.wantErr)
				}
				o, ok := poll(light)
				if !ok || o.err != nil {
					t.Fatalf("light waiter after the heavy one left: %+v (granted %v), want granted", o, ok)
				}
				o.p.Release()
				held.Release()
			})
		})
	}
}

func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := mustNew(t, Config{
			MaxConcurrent: 3,
			QueueSize:     1,
			QueueTimeout:  10 * time.Second,
			Buckets:       map[string]Bucket{"http": {Limit: 2}, "ai": {Limit: 2, Weight: 2}},
		})
		p1 := mustAcquire(t, c, Request{Bucket: "http"})
		p2 := mustAcquire(t, c, Request{Bucket: "ai"})
		mustAcquire(t, c, Request{Bucket: "http", Bypass: true})
		out := make(chan outcome, 1)
		enqueue(t.Context(), c, 0, Request{Bucket: "http"}, out)
		if _, err := c.Acquire(t.Context(), Request{Bucket: "ai"}); !errors.Is(err, ErrRejected) {
			t.Fatalf("Acquire with a full queue = %v, want ErrRejected", err)
		}
		want := Metrics{
			Current: 3, QueueLength: 1, Acquired: 2, Rejected: 1, Bypassed: 1, Limit: 3,
			Buckets: map[string]BucketMetrics{
				"http": {Current: 1, Limit: 2, Weight: 1, Queue: 1, Acquired: 1},
				"ai":   {Current: 2, Limit: 2, Weight: 2, Acquired: 1, Rejected: 1},
			},
		}
		if diff := cmp.Diff(want, c.Metrics()); diff != "" {
			t.Errorf("Metrics while full (-want +got):\n%s", diff)
		}

		time.Sleep(11 * time.Second)
		if o := <-out; !errors.Is(o.err, ErrQueueTimeout) {
			t.Fatalf("waiter = %v, want ErrQueueTimeout", o.err)
		}
		p1.Release() // ran 11s
		p3 := mustAcquire(t, c, Request{Bucket: "misc"})
		time.Sleep(time.Second)
		p3.Release() // ran 1s
		p2.Release() // ran 12s

		want = Metrics{
			Acquired: 3, Rejected: 1, TimedOut: 1, Bypassed: 1, Limit: 3,
			AvgExecution: 8 * time.Second, // (11+1+12)/3
			Buckets: map[string]BucketMetrics{
				"http": {Limit: 2, Weight: 1, Acquired: 1, TimedOut: 1},
				"ai":   {Limit: 2, Weight: 2, Acquired: 1, Rejected: 1},
			},
		}
		got := c.Metrics()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("final Metrics (-want +got):\n%s", diff)
		}

		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		const wantJSON = `{"current_concurrent":0,"queue_length":0,"total_acquired":3,"total_rejected":1,` +
			`"total_timeout":1,"total_bypassed":1,"avg_execution_time":8000000000,"limit":3,"buckets":{` +
			`"ai":{"current":0,"limit":2,"weight":2,"queue":0,"acquired":1,"rejected":1,"timed_out":0},` +
			`"http":{"current":0,"limit":2,"weight":1,"queue":0,"acquired":1,"rejected":0,"timed_out":1}}}`
		if diff := cmp.Diff(wantJSON, string(b)); diff != "" {
			t.Errorf("JSON (-want +got):\n%s", diff)
		}
	})
}

func TestMetricsWithoutBuckets(t *testing.T) {
	got := mustNew(t, Config{}).Metrics()
	if diff := cmp.Diff(Metrics{Limit: 10}, got); diff != "" {
		t.Errorf("Metrics of a new default Controller (-want +got):\n%s", diff)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"zero", Config{}, ""},
		{"all set", Config{MaxConcurrent: 4, QueueSize: 1, QueueTimeout: time.Second, Strategy: Priority,
			Buckets: map[string]Bucket{"ai": {Limit: 4, Weight: 4}, "http": {Limit: 100}}}, ""},
		{"weight equals MaxConcurrent", Config{MaxConcurrent: 3, Buckets: map[string]Bucket{"db": {Weight: 3}}}, ""},
		{"weight within default MaxConcurrent", Config{Buckets: map[string]Bucket{"db": {Weight: 10}}}, ""},
		{"negative MaxConcurrent", Config{MaxConcurrent: -1},
			"limit: new controller: MaxConcurrent is negative (-1)"},
		{"negative QueueSize", Config{QueueSize: -2},
			"limit: new controller: QueueSize is negative (-2)"},
		{"negative QueueTimeout", Config{QueueTimeout: -time.Second},
			"limit: new controller: QueueTimeout is negative (-1s)"},
		{"unknown strategy", Config{Strategy: "lifo"},
			`limit: new controller: unknown Strategy "lifo" (want "fifo", "priority" or "reject")`},
		{"strategy is case-sensitive", Config{Strategy: "FIFO"},
			`limit: new controller: unknown Strategy "FIFO" (want "fifo", "priority" or "reject")`},
		{"negative bucket limit", Config{Buckets: map[string]Bucket{"http": {Limit: -5}}},
			`limit: new controller: bucket "http": Limit is negative (-5)`},
		{"negative bucket weight", Config{Buckets: map[string]Bucket{"ai": {Weight: -1}}},
			`limit: new controller: bucket "ai": Weight is negative (-1)`},
		{"weight above MaxConcurrent", Config{MaxConcurrent: 2, Buckets: map[string]Bucket{"ai": {Weight: 3}}},
			`limit: new controller: bucket "ai": Weight 3 exceeds MaxConcurrent 2, so its calls could never run`},
		{"weight above default MaxConcurrent", Config{Buckets: map[string]Bucket{"ai": {Weight: 11}}},
			`limit: new controller: bucket "ai": Weight 11 exceeds MaxConcurrent 10, so its calls could never run`},
		{"limit below weight", Config{Buckets: map[string]Bucket{"ai": {Limit: 1, Weight: 2}}},
			`limit: new controller: bucket "ai": Limit 1 is below its Weight 2, so its calls could never run`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			var got string
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, got); diff != "" {
				t.Fatalf("New error (-want +got):\n%s", diff)
			}
			if (c == nil) == (err == nil) {
				t.Errorf("New returned Controller %v with error %v", c, err)
			}
		})
	}
}

func TestNewCopiesBuckets(t *testing.T) {
	buckets := map[string]Bucket{"ai": {Limit: 1}}
	c := mustNew(t, Config{Buckets: buckets})
	buckets["ai"] = Bucket{Limit: 5}
	buckets["http"] = Bucket{Limit: 1}
	want := map[string]BucketMetrics{"ai": {Limit: 1, Weight: 1}}
	if diff := cmp.Diff(want, c.Metrics().Buckets); diff != "" {
		t.Errorf("Buckets after the caller's map changed (-want +got):\n%s", diff)
	}
}

func TestPermit(t *testing.T) {
	c := mustNew(t, Config{Buckets: map[string]Bucket{"ai": {Weight: 2}}})
	p1 := mustAcquire(t, c, Request{Bucket: "ai"})
	p2 := mustAcquire(t, c, Request{Bucket: "other"})
	got := []string{
		fmt.Sprintf("%s %d %d", p1.Bucket(), p1.Weight(), p1.Lease()),
		fmt.Sprintf("%s %d %d", p2.Bucket(), p2.Weight(), p2.Lease()),
	}
	if diff := cmp.Diff([]string{"ai 2 1", "other 1 2"}, got); diff != "" {
		t.Errorf("permits as [Bucket Weight Lease] (-want +got):\n%s", diff)
	}
	p1.Release()
	c.Release(p2)
	Permit{}.Release()
	c.Release(Permit{})
	if m := c.Metrics(); m.Current != 0 {
		t.Errorf("Current = %d, want 0", m.Current)
	}
}

// recorder is a Limiter that records the permits it is given back.
type recorder struct{ released []Permit }

func (r *recorder) Acquire(context.Context, Request) (Permit, error) { return Permit{}, nil }
func (r *recorder) Release(p Permit)                                 { r.released = append(r.released, p) }
func (r *recorder) Metrics() Metrics                                 { return Metrics{} }

func TestNewPermit(t *testing.T) {
	r := &recorder{}
	p := NewPermit(r, "http", 3, 42)
	if p.Bucket() != "http" || p.Weight() != 3 || p.Lease() != 42 {
		t.Errorf("NewPermit = %q %d %d, want http 3 42", p.Bucket(), p.Weight(), p.Lease())
	}
	p.Release()
	if len(r.released) != 1 || r.released[0].Lease() != 42 {
		t.Errorf("limiter got %+v, want the permit with lease 42", r.released)
	}
}

func TestReleaseMisuse(t *testing.T) {
	tests := []struct {
		name string
		do   func(c *Controller)
		want string
	}{
		{"twice", func(c *Controller) {
			p := mustAcquire(t, c, Request{Bucket: "ai"})
			p.Release()
			p.Release()
		}, `limit: Release of permit 1 (bucket "ai") that is not held; was it released twice?`},
		{"foreign permit", func(c *Controller) {
			c.Release(NewPermit(&recorder{}, "ai", 1, 1))
		}, "limit: Release of a permit from another Limiter"},
		{"another controller's permit", func(c *Controller) {
			other := mustNew(t, Config{})
			c.Release(mustAcquire(t, other, Request{}))
		}, "limit: Release of a permit from another Limiter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, Config{Buckets: map[string]Bucket{"ai": {}}})
			var got any
			func() {
				defer func() { got = recover() }()
				tt.do(c)
			}()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("panic (-want +got):\n%s", diff)
			}
			if m := c.Metrics(); m.Current != 0 {
				t.Errorf("Current = %d after the misuse, want 0", m.Current)
			}
		})
	}
}
