package commit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

type sink struct {
	mu      sync.Mutex
	items   []int
	writes  int
	fail    int // fail this many writes first
	block   chan struct{}
	largest int
	delay   time.Duration // each write takes this long
}

func (s *sink) write(_ context.Context, items []int) error {
	if s.block != nil {
		<-s.block
	}
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	if s.fail > 0 {
		s.fail--
		return errors.New("disk on fire")
	}
	s.items = append(s.items, items...)
	s.largest = max(s.largest, len(items))
	return nil
}

// TestGroupCommit has 64 goroutines add at once while the first write is
// held: everything is written, in few writes, and each Add returns only after
// its item is.
func TestGroupCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{block: make(chan struct{})}
		c := New(s.write, Options{})
		var wg sync.WaitGroup
		var acked atomic.Int64
		for i := range 64 {
			wg.Go(func() {
				if err := c.Add(context.Background(), i); err != nil {
					t.Error(err)
				}
				s.mu.Lock()
				if !slices.Contains(s.items, i) {
					t.Errorf("Add(%d) returned before its write", i)
				}
				s.mu.Unlock()
				acked.Add(1)
			})
		}
		synctest.Wait()
		if acked.Load() != 0 {
			t.Fatal("acknowledged while the write is blocked")
		}
		close(s.block)
		wg.Wait()
		if len(s.items) != 64 || s.writes > 3 {
			t.Errorf("%d items in %d writes; want 64 in at most 3", len(s.items), s.writes)
		}
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if err := c.Add(context.Background(), 1); !errors.Is(err, ErrClosed) {
			t.Errorf("Add after Close: %v", err)
		}
	})
}

func TestSyncError(t *testing.T) {
	s := &sink{fail: 1}
	c := New(s.write, Options{})
	defer c.Close(context.Background())
	if err := c.Add(context.Background(), 1); err == nil {
		t.Error("a failed write was acknowledged")
	}
	if err := c.Add(context.Background(), 2); err != nil {
		t.Error(err)
	}
}

// TestAsync: Add returns at once, the interval or a full batch writes, Close
// writes the rest, and a failed write is retried until it succeeds.
func TestAsync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{fail: 2}
		var errs atomic.Int64
		c := New(s.write, Options{Async: true, MaxBatch: 100, Interval: time.Second, OnError: func(error) { errs.Add(1) }})
		for i := range 250 {
			if err := c.Add(context.Background(), i); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		for i := range 10 {
			_ = c.Add(context.Background(), 1000+i)
		}
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(s.items) != 260 || errs.Load() != 2 || s.largest > 100 {
			t.Errorf("%d items, %d errors, largest batch %d", len(s.items), errs.Load(), s.largest)
		}
		want := make([]int, 250)
		for i := range want {
			want[i] = i
		}
		if !slices.Equal(s.items[:250], want) {
			t.Error("items out of order or lost after retries")
		}
	})
}

// TestAsyncPaced: under a steady trickle of items, an async writer whose
// writes take a while writes once an interval, not again as soon as each
// write ends with the few items that came meanwhile.
func TestAsyncPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{delay: 5 * time.Millisecond}
		c := New(s.write, Options{Async: true, Interval: 50 * time.Millisecond})
		for i := range 1000 { // one a millisecond for a second
			if err := c.Add(context.Background(), i); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Unpaced, a write every 5 ms: about 200.
		if len(s.items) != 1000 || s.writes > 22 {
			t.Errorf("%d items in %d writes; want 1000 in at most 22 (one per 50 ms)", len(s.items), s.writes)
		}
	})
}

// addTen adds 10 items to a committer with room for 4, from a goroutine,
// with its writer stuck until s.block is closed; done is closed when all
// 10 are added.
func addTen() (s *sink, c *Committer[int], done chan struct{}) {
	s = &sink{block: make(chan struct{})}
	c = New(s.write, Options{Async: true, MaxBatch: 2, MaxPending: 4})
	done = make(chan struct{})
	go func() {
		for i := range 10 {
			_ = c.Add(context.Background(), i)
		}
		close(done)
	}()
	return s, c, done
}

// closeWithTen closes c and wants the 10 items written.
func closeWithTen(t *testing.T, s *sink, c *Committer[int]) {
	t.Helper()
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.items) != 10 {
		t.Errorf("%d items written, want 10", len(s.items))
	}
}

// TestBackpressure: with a full buffer Add waits instead of dropping.
func TestBackpressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c, done := addTen()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("10 items accepted into a buffer of 4 with the writer stuck")
		default:
		}
		close(s.block)
		<-done
		closeWithTen(t, s, c)
	})
}

// TestUnbound: Unbound releases an Add waiting for room, and lets later
// ones past the limit, while the writer is still stuck.
func TestUnbound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c, done := addTen()
		synctest.Wait()
		c.Unbound()
		<-done // with the writer still stuck
		close(s.block)
		closeWithTen(t, s, c)
	})
}

func TestCloseGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{fail: 1 << 30}
		c := New(s.write, Options{Async: true})
		_ = c.Add(context.Background(), 1)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Close(ctx); err == nil {
			t.Error("Close reported success with an item never written")
		}
		if c.Pending() != 1 {
			t.Errorf("Pending() = %d, want 1", c.Pending())
		}
	})
}

func BenchmarkSyncParallel(b *testing.B) {
	c := New(func(context.Context, []int) error { return nil }, Options{})
	defer c.Close(context.Background())
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = c.Add(context.Background(), 1)
		}
	})
}

// TestFlush: in async mode Flush writes at once, without waiting for the
// interval, and returns when everything handed over is written.
func TestFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		c := New(s.write, Options{Async: true, Interval: time.Hour})
		defer c.Close(context.Background())
		for i := range 5 {
			_ = c.Add(context.Background(), i)
		}
		start := time.Now()
		if err := c.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		n := len(s.items)
		s.mu.Unlock()
		if n != 5 || time.Since(start) > time.Second {
			t.Errorf("%d items written after Flush, which took %s", n, time.Since(start))
		}
		if err := c.Flush(context.Background()); err != nil {
			t.Errorf("Flush with nothing pending: %v", err)
		}
	})
}
