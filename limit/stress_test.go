package limit

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gauge measures units in flight and the most seen at once.
type gauge struct{ now, max atomic.Int64 }

func (g *gauge) add(n int64) {
	v := g.now.Add(n)
	for {
		m := g.max.Load()
		if v <= m || g.max.CompareAndSwap(m, v) {
			return
		}
	}
}

func TestLimitsHoldUnderLoad(t *testing.T) {
	const callers = 1000
	buckets := map[string]Bucket{
		"http": {Limit: 5},
		"ai":   {Limit: 4, Weight: 2},
		"db":   {Limit: 3, Weight: 3},
		"fs":   {Weight: 2}, // global limit only
	}
	names := []string{"http", "ai", "db", "fs", "misc"} // misc: unconfigured, weight 1
	for _, s := range []Strategy{FIFO, Priority, Reject} {
		t.Run(string(s), func(t *testing.T) {
			c := mustNew(t, Config{MaxConcurrent: 8, QueueSize: callers, QueueTimeout: time.Hour, Strategy: s, Buckets: buckets})
			var global gauge
			per := make(map[string]*gauge, len(names))
			for _, n := range names {
				per[n] = &gauge{}
			}
			var granted, rejected atomic.Int64
			errs := make(chan error, callers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range callers {
				name := names[i%len(names)]
				wg.Go(func() {
					<-start
					p, err := c.Acquire(context.Background(), Request{Bucket: name, Priority: i % 7})
					if errors.Is(err, ErrRejected) && s == Reject {
						rejected.Add(1)
						return
					}
					if err != nil {
						errs <- err
						return
					}
					w := int64(p.Weight())
					per[name].add(w)
					global.add(w)
					for range 3 {
						runtime.Gosched() // let others try to get in
					}
					per[name].add(-w)
					global.add(-w)
					p.Release()
					granted.Add(1)
				})
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("Acquire: %v", err)
			}

			if got := granted.Load() + rejected.Load(); got != callers {
				t.Errorf("%d calls completed or rejected, want %d", got, callers)
			}
			if s != Reject && rejected.Load() != 0 {
				t.Errorf("%d calls rejected under %s", rejected.Load(), s)
			}
			if m := global.max.Load(); m > 8 || m < 1 {
				t.Errorf("global in flight peaked at %d, want 1..8", m)
			}
			for _, n := range names {
				limit := int64(buckets[n].Limit)
				if limit == 0 {
					limit = 8
				}
				if m := per[n].max.Load(); m > limit {
					t.Errorf("bucket %s in flight peaked at %d, limit %d", n, m, limit)
				}
			}
			m := c.Metrics()
			got := [4]int64{int64(m.Current), int64(m.QueueLength), m.Acquired, m.Rejected}
			if diff := cmp.Diff([4]int64{0, 0, granted.Load(), rejected.Load()}, got); diff != "" {
				t.Errorf("[Current, QueueLength, Acquired, Rejected] (-want +got):\n%s", diff)
			}
			t.Logf("peaks: global %d, http %d, ai %d, db %d, fs %d, misc %d; rejected %d",
				global.max.Load(), per["http"].max.Load(), per["ai"].max.Load(), per["db"].max.Load(),
				per["fs"].max.Load(), per["misc"].max.Load(), rejected.Load())
		})
	}
}

// checkIdle asserts that c holds nothing and that a new request is granted at
// once, so no capacity leaked. It must run inside a synctest bubble.
func checkIdle(t *testing.T, c *Controller) {
	t.Helper()
	synctest.Wait()
	if m := c.Metrics(); m.Current != 0 || m.QueueLength != 0 {
		t.Fatalf("Current %d, QueueLength %d; want 0, 0", m.Current, m.QueueLength)
	}
	start := time.Now()
	p, err := c.Acquire(t.Context(), Request{})
	if err != nil || time.Since(start) != 0 {
		t.Fatalf("Acquire on an idle Controller: %v after %v", err, time.Since(start))
	}
	p.Release()
}

// TestGrantRacesTimeout releases the only unit in the same instant as the
// waiter's queue timeout fires: whichever wins, the unit is not lost.
func TestGrantRacesTimeout(t *testing.T) {
	var granted, timedOut int
	for range 200 {
		synctest.Test(t, func(t *testing.T) {
			c := mustNew(t, Config{MaxConcurrent: 1, QueueTimeout: time.Second})
			held := mustAcquire(t, c, Request{})
			go func() {
				time.Sleep(time.Second) // the waiter's timer fires now too
				held.Release()
			}()
			p, err := c.Acquire(t.Context(), Request{})
			switch {
			case err == nil:
				granted++
				p.Release()
			case errors.Is(err, ErrQueueTimeout):
				timedOut++
			default:
				t.Fatalf("Acquire = %v, want a permit or ErrQueueTimeout", err)
			}
			synctest.Wait()
			if m := c.Metrics(); m.Acquired+m.TimedOut != 2 {
				t.Errorf("Acquired %d + TimedOut %d, want 2", m.Acquired, m.TimedOut)
			}
			checkIdle(t, c)
		})
	}
	t.Logf("granted %d, timed out %d", granted, timedOut)
}

// TestGrantRacesCancel cancels a waiter while another goroutine releases the
// unit it waits for.
func TestGrantRacesCancel(t *testing.T) {
	var granted, canceled int
	for range 200 {
		synctest.Test(t, func(t *testing.T) {
			c := mustNew(t, Config{MaxConcurrent: 1})
			held := mustAcquire(t, c, Request{})
			ctx, cancel := context.WithCancel(t.Context())
			out := make(chan outcome, 1)
			enqueue(ctx, c, 0, Request{}, out)
			start := make(chan struct{})
			go func() { <-start; cancel() }()
			go func() { <-start; held.Release() }()
			close(start)
			o := <-out
			switch {
			case o.err == nil:
				granted++
				o.p.Release()
			case errors.Is(o.err, context.Canceled):
				canceled++
			default:
				t.Fatalf("Acquire = %v, want a permit or context.Canceled", o.err)
			}
			checkIdle(t, c)
		})
	}
	t.Logf("granted %d, canceled %d", granted, canceled)
}

func BenchmarkAcquireRelease(b *testing.B) {
	c := mustNew(b, Config{Buckets: map[string]Bucket{"http": {Limit: 5}}})
	ctx := context.Background()
	req := Request{Bucket: "http"}
	b.ReportAllocs()
	for b.Loop() {
		p, err := c.Acquire(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		p.Release()
	}
}

// BenchmarkAcquireReleaseParallel has room for every goroutine: the fast path
// under mutex contention.
func BenchmarkAcquireReleaseParallel(b *testing.B) {
	c := mustNew(b, Config{MaxConcurrent: 1024, Buckets: map[string]Bucket{"http": {Limit: 1024}}})
	req := Request{Bucket: "http"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			p, err := c.Acquire(ctx, req)
			if err != nil {
				b.Error(err)
				return
			}
			p.Release()
		}
	})
}

// BenchmarkAcquireReleaseQueued has one unit for 8 goroutines per CPU, so
// most calls wait in the queue: the slow path with its channel and timer.
func BenchmarkAcquireReleaseQueued(b *testing.B) {
	for _, s := range []Strategy{FIFO, Priority} {
		b.Run(string(s), func(b *testing.B) {
			c := mustNew(b, Config{MaxConcurrent: 1, QueueSize: 1 << 16, Strategy: s})
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				req := Request{Priority: int(n.Add(1) % 3)}
				for pb.Next() {
					p, err := c.Acquire(ctx, req)
					if err != nil {
						b.Error(err)
						return
					}
					p.Release()
				}
			})
		})
	}
}

func BenchmarkBypass(b *testing.B) {
	c := mustNew(b, Config{})
	ctx := context.Background()
	req := Request{Bucket: "http", Bypass: true}
	b.ReportAllocs()
	for b.Loop() {
		p, _ := c.Acquire(ctx, req)
		p.Release()
	}
}
