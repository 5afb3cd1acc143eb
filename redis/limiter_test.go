package redis_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goredis "github.com/redis/go-redis/v9"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/redis"
)

// client connects to the machine's Redis (scripts/redis-up starts one).
func client(t *testing.T) *goredis.Client {
	t.Helper()
	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis at 127.0.0.1:6379 is not reachable (run scripts/redis-up): %v", err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// cluster returns n limiters sharing one fresh prefix, as n servers would.
func cluster(t *testing.T, n int, cfg limit.Config, ttl, poll time.Duration) []*redis.Limiter {
	t.Helper()
	prefix := "wield:test:" + wield.NewID()
	cleanup := client(t)
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := cleanup.Keys(ctx, "{"+prefix+"}*").Result()
		if len(keys) > 0 {
			cleanup.Del(ctx, keys...)
		}
	})
	var out []*redis.Limiter
	for range n {
		l, err := redis.New(client(t), &redis.Options{Config: cfg, Prefix: prefix, LeaseTTL: ttl, PollInterval: poll})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		out = append(out, l)
	}
	return out
}

// waitQueue waits, boundedly, until the shared queue holds n waiters.
func waitQueue(t *testing.T, l *redis.Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.Metrics().QueueLength != n {
		if time.Now().After(deadline) {
			t.Fatalf("queue length %d, want %d", l.Metrics().QueueLength, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLimitsHoldAcrossServers(t *testing.T) {
	cfg := limit.Config{MaxConcurrent: 4, QueueSize: 200, QueueTimeout: 60 * time.Second, Buckets: map[string]limit.Bucket{
		"http": {Limit: 2},
		"ai":   {Limit: 2, Weight: 2},
	}}
	servers := cluster(t, 3, cfg, 5*time.Second, 20*time.Millisecond)
	var global, http, ai, maxGlobal, maxHTTP, maxAI atomic.Int64
	raise := func(m *atomic.Int64, v int64) {
		for {
			old := m.Load()
			if v <= old || m.CompareAndSwap(old, v) {
				return
			}
		}
	}
	buckets := []string{"http", "ai", "data"}
	var wg sync.WaitGroup
	var failures atomic.Int64
	for g := range 30 {
		l := servers[g%3]
		bucket := buckets[g%3]
		wg.Go(func() {
			for range 4 {
				p, err := l.Acquire(context.Background(), limit.Request{Bucket: bucket})
				if err != nil {
					failures.Add(1)
					t.Error(err)
					return
				}
				w := int64(p.Weight())
				raise(&maxGlobal, global.Add(w))
				switch bucket {
				case "http":
					raise(&maxHTTP, http.Add(w))
				case "ai":
					raise(&maxAI, ai.Add(w))
				}
				time.Sleep(2 * time.Millisecond) // the tool's work
				switch bucket {
				case "http":
					http.Add(-w)
				case "ai":
					ai.Add(-w)
				}
				global.Add(-w)
				p.Release()
			}
		})
	}
	wg.Wait()
	if maxGlobal.Load() > 4 || maxHTTP.Load() > 2 || maxAI.Load() > 2 {
		t.Errorf("limits exceeded: global %d/4, http %d/2, ai %d/2", maxGlobal.Load(), maxHTTP.Load(), maxAI.Load())
	}
	if maxGlobal.Load() < 2 {
		t.Errorf("no concurrency at all (max %d): the test proves nothing", maxGlobal.Load())
	}
	m := servers[0].Metrics()
	if m.Current != 0 || m.QueueLength != 0 {
		t.Errorf("after the load: %+v", m)
	}
	var acquired int64
	for _, s := range servers {
		acquired += s.Metrics().Acquired
	}
	if acquired != 120 || failures.Load() != 0 {
		t.Errorf("acquired %d, want 120 (%d failures)", acquired, failures.Load())
	}
}

func TestCrashedServerFreesItsSlots(t *testing.T) {
	ttl := 300 * time.Millisecond
	s := cluster(t, 2, limit.Config{MaxConcurrent: 1, QueueTimeout: time.Minute}, ttl, 20*time.Millisecond)
	held, err := s[0].Acquire(context.Background(), limit.Request{})
	if err != nil {
		t.Fatal(err)
	}
	_ = held // never released: the server "dies" below
	// While the holder renews its lease, nobody else gets the slot, well
	// beyond the lease's lifetime.
	ctx, cancel := context.WithTimeout(context.Background(), 4*ttl)
	_, err = s[1].Acquire(ctx, limit.Request{})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slot taken while its holder lives: %v", err)
	}
	// The holder stops renewing, as a crashed server would: its slot comes
	// back once the lease expires.
	s[0].Close()
	ctx, cancel = context.WithTimeout(context.Background(), 20*ttl)
	defer cancel()
	p, err := s[1].Acquire(ctx, limit.Request{})
	if err != nil {
		t.Fatalf("the dead server's slot never came back: %v", err)
	}
	p.Release()
	if m := s[1].Metrics(); m.Current != 0 {
		t.Errorf("units in flight after release: %d", m.Current)
	}
}

// served runs waiters, each started only once the one before is queued, and
// returns the order in which they got the slot.
func served(t *testing.T, s []*redis.Limiter, reqs []limit.Request) []int {
	t.Helper()
	hold, err := s[0].Acquire(context.Background(), limit.Request{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i, r := range reqs {
		l := s[i%len(s)]
		wg.Go(func() {
			p, err := l.Acquire(context.Background(), r)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			p.Release()
		})
		waitQueue(t, s[0], i+1)
	}
	hold.Release()
	wg.Wait()
	return order
}

func TestFIFOAcrossServers(t *testing.T) {
	s := cluster(t, 3, limit.Config{MaxConcurrent: 1, QueueTimeout: time.Minute}, 5*time.Second, 20*time.Millisecond)
	reqs := make([]limit.Request, 6)
	if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5}, served(t, s, reqs)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestPriorityAcrossServers(t *testing.T) {
	s := cluster(t, 3, limit.Config{MaxConcurrent: 1, Strategy: limit.Priority, QueueTimeout: time.Minute}, 5*time.Second, 20*time.Millisecond)
	reqs := []limit.Request{{Priority: 1}, {Priority: 5}, {Priority: 1}, {Priority: 9}, {Priority: 5}, {Priority: -3}}
	if diff := cmp.Diff([]int{3, 1, 4, 0, 2, 5}, served(t, s, reqs)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestRejectQueueFullTimeoutCancel(t *testing.T) {
	rej := cluster(t, 2, limit.Config{MaxConcurrent: 1, Strategy: limit.Reject}, 5*time.Second, 20*time.Millisecond)
	p, err := rej[0].Acquire(context.Background(), limit.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rej[1].Acquire(context.Background(), limit.Request{}); !errors.Is(err, limit.ErrRejected) {
		t.Errorf("reject strategy: %v", err)
	}
	p.Release()

	s := cluster(t, 2, limit.Config{MaxConcurrent: 1, QueueSize: 1, QueueTimeout: 200 * time.Millisecond}, 5*time.Second, 20*time.Millisecond)
	hold, err := s[0].Acquire(context.Background(), limit.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Release()
	done := make(chan error, 1)
	go func() {
		_, err := s[1].Acquire(context.Background(), limit.Request{})
		done <- err
	}()
	waitQueue(t, s[0], 1)
	if _, err := s[0].Acquire(context.Background(), limit.Request{}); !errors.Is(err, limit.ErrRejected) {
		t.Errorf("queue full: %v", err)
	}
	if err := <-done; !errors.Is(err, limit.ErrQueueTimeout) {
		t.Errorf("queue timeout: %v", err)
	}
	waitQueue(t, s[0], 0)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := s[1].Acquire(ctx, limit.Request{})
		done <- err
	}()
	waitQueue(t, s[0], 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	waitQueue(t, s[0], 0)
	if m := s[1].Metrics(); m.TimedOut != 1 || m.Acquired != 0 {
		t.Errorf("metrics %+v", m)
	}
}

func TestFullBucketIsPassedOver(t *testing.T) {
	cfg := limit.Config{MaxConcurrent: 3, QueueTimeout: time.Minute, Buckets: map[string]limit.Bucket{"http": {Limit: 1}}}
	s := cluster(t, 2, cfg, 5*time.Second, 20*time.Millisecond)
	h, err := s[0].Acquire(context.Background(), limit.Request{Bucket: "http"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan limit.Permit, 1)
	go func() {
		p, err := s[1].Acquire(context.Background(), limit.Request{Bucket: "http"})
		if err != nil {
			t.Error(err)
		}
		got <- p
	}()
	waitQueue(t, s[0], 1)
	// The http waiter ahead is held back by its bucket; an ai call passes it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, err := s[1].Acquire(ctx, limit.Request{Bucket: "ai"})
	if err != nil {
		t.Fatalf("a call of another bucket waited behind a full one: %v", err)
	}
	a.Release()
	h.Release()
	(<-got).Release()
	m := s[0].Metrics()
	if diff := cmp.Diff(limit.BucketMetrics{Limit: 1, Weight: 1, Acquired: 1}, m.Buckets["http"]); diff != "" {
		t.Errorf("http bucket on server 0 (-want +got):\n%s", diff)
	}
}

func TestEngineWithRedisLimiter(t *testing.T) {
	s := cluster(t, 1, limit.Config{MaxConcurrent: 2}, 5*time.Second, 20*time.Millisecond)
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("twice", "Double a number", func(_ context.Context, in struct {
		N int `json:"n"`
	}) (int, error) {
		return 2 * in.N, nil
	}))
	e := engine.New(reg, &engine.Options{Limiter: s[0]})
	defer e.Close(context.Background())
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			res, err := e.Call(context.Background(), wield.Call{Tool: "twice", Arguments: []byte(fmt.Sprintf(`{"n":%d}`, i))})
			if err != nil || !res.OK || string(res.Output) != fmt.Sprint(2*i) {
				t.Errorf("call %d: %+v %v", i, res, err)
			}
		})
	}
	wg.Wait()
	if m := s[0].Metrics(); m.Acquired != 20 || m.Current != 0 {
		t.Errorf("metrics %+v", m)
	}
}
