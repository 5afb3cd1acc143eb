// Package redis is the limiter that several wield servers share: the global
// capacity and the per-category buckets of package limit, held in Redis.
//
// # Use
//
//	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
//	lim, err := redis.New(rdb, &redis.Options{Config: limit.Config{MaxConcurrent: 20}})
//	if err != nil { ... }
//	defer lim.Close()
//	eng := engine.New(reg, &engine.Options{Limiter: lim})
//
// Every server must use the same Config and Prefix: the limits are checked
// with each server's own copy of them.
//
// # Leases
//
// A permit is a lease in Redis with an expiry (LeaseTTL, 10 s by default)
// that its server renews while the call runs, every LeaseTTL/4. A server
// that dies stops renewing, and its units come back within LeaseTTL: a
// crashed server never keeps slots for ever. A server that stalls longer
// than LeaseTTL (a long GC pause, a frozen VM) loses its leases the same
// way; the loss is logged, and for that moment the limit may be exceeded by
// the calls it still runs.
//
// # Fairness
//
// Waiters from every server stand in one queue in Redis, ordered by arrival
// (fifo) or by priority, then arrival (priority). The rule of package limit
// holds across servers: a request takes capacity only when every waiter
// ahead of it is held back by its own bucket. Waiters do not hold a
// connection open: each retries when a slot is given back (Redis pub/sub)
// and at least every PollInterval, so the order is kept, but a freed slot
// may stay unused for up to one round trip. A waiter whose server died is
// dropped after three poll intervals without news. Priorities are clamped
// to ±1000.
package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/limit"
)

// Options configure a [Limiter]. Config is required in spirit: its zero
// value is package limit's defaults (10 units, a queue of 100, 30 s).
type Options struct {
	// Config is the limits, as for limit.New; every server must use the same.
	Config limit.Config
	// Prefix names the limiter's keys in Redis ("wield:limit" by default);
	// servers with the same Prefix share the limits.
	Prefix string
	// LeaseTTL is how long a permit outlives its server's last renewal;
	// 10 s by default.
	LeaseTTL time.Duration
	// PollInterval bounds how long a waiter sleeps between two tries when
	// no release is announced; 100 ms by default.
	PollInterval time.Duration
	// Logger receives renewal failures and lost leases; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Limiter is a [limit.Limiter] whose capacity lives in Redis. It is safe
// for concurrent use.
type Limiter struct {
	rdb    goredis.UniversalClient
	keys   []string // the hash tag, KEYS[1] of every script
	cfg    limit.Config
	limits string // {"max":N,"buckets":{...}} for the scripts
	ttl    time.Duration
	poll   time.Duration
	log    *slog.Logger
	id     string // this limiter's name in lease and waiter ids

	seq  atomic.Uint64
	mu   sync.Mutex
	held map[uint64]heldLease
	wake chan struct{} // closed and replaced when a release is announced

	acquired, rejected, timedOut, bypassed atomic.Int64
	execNanos, execCount                   atomic.Int64
	bucketStats                            map[string]*bucketCounters

	cancel context.CancelFunc
	done   sync.WaitGroup
}

type heldLease struct {
	member string
	at     time.Time
}

type bucketCounters struct{ acquired, rejected, timedOut atomic.Int64 }

// New returns a limiter over rdb. It checks the configuration as limit.New
// does and that Redis answers; the error says which. Close stops it.
func New(rdb goredis.UniversalClient, opts *Options) (*Limiter, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if _, err := limit.New(o.Config); err != nil {
		return nil, fmt.Errorf("redis limiter: %w", err)
	}
	cfg := o.Config
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = 10
	}
	if cfg.QueueSize == 0 {
		cfg.QueueSize = 100
	}
	if cfg.QueueTimeout == 0 {
		cfg.QueueTimeout = 30 * time.Second
	}
	if cfg.Strategy == "" {
		cfg.Strategy = limit.FIFO
	}
	if o.Prefix == "" {
		o.Prefix = "wield:limit"
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 10 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 100 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	buckets := map[string]int{}
	stats := map[string]*bucketCounters{}
	for name, b := range cfg.Buckets {
		buckets[name] = b.Limit
		stats[name] = &bucketCounters{}
	}
	limits, _ := json.Marshal(map[string]any{"max": cfg.MaxConcurrent, "buckets": buckets})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis limiter: ping: %w", err)
	}
	l := &Limiter{
		rdb: rdb, keys: []string{"{" + o.Prefix + "}"}, cfg: cfg, limits: string(limits),
		ttl: o.LeaseTTL, poll: o.PollInterval, log: o.Logger, id: wield.NewID(),
		held: map[uint64]heldLease{}, wake: make(chan struct{}), bucketStats: stats,
	}
	bg, stop := context.WithCancel(context.Background())
	l.cancel = stop
	sub := rdb.Subscribe(bg, l.keys[0]+":released")
	l.done.Add(2)
	go l.listen(bg, sub)
	go l.renew(bg)
	return l, nil
}

// Close stops renewing leases and listening for releases. Leases still
// held expire within LeaseTTL, as a dead server's would; Close does not
// close rdb.
func (l *Limiter) Close() error {
	l.cancel()
	l.done.Wait()
	return nil
}

// listen turns release announcements into wake-ups of local waiters.
func (l *Limiter) listen(ctx context.Context, sub *goredis.PubSub) {
	defer l.done.Done()
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			l.broadcast()
		}
	}
}

func (l *Limiter) broadcast() {
	l.mu.Lock()
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
}

func (l *Limiter) wakeup() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wake
}

// renew extends the leases of the calls still running.
func (l *Limiter) renew(ctx context.Context) {
	defer l.done.Done()
	t := time.NewTicker(l.ttl / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l.mu.Lock()
		args := make([]any, 0, len(l.held)+1)
		args = append(args, l.ttl.Milliseconds())
		for _, h := range l.held {
			args = append(args, h.member)
		}
		l.mu.Unlock()
		if len(args) == 1 {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, l.ttl/4)
		gone, err := renewScript.Run(rctx, l.rdb, l.keys, args...).StringSlice()
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				l.log.Warn("renew limiter leases", "error", err, "leases", len(args)-1)
			}
			continue
		}
		// A lease released while the renewal was on its way is gone too;
		// only those still held here were lost.
		lost := 0
		l.mu.Lock()
		for _, m := range gone {
			for _, h := range l.held {
				if h.member == m {
					lost++
					break
				}
			}
		}
		l.mu.Unlock()
		if lost > 0 {
			l.log.Warn("limiter leases expired before renewal; their calls run beyond the limit", "lost", lost)
		}
	}
}

// Acquire implements limit.Limiter. Errors: limit.ErrRejected,
// limit.ErrQueueTimeout, ctx's error, or Redis's (wrapped) when it cannot
// be reached — the request then did not get a slot.
func (l *Limiter) Acquire(ctx context.Context, req limit.Request) (limit.Permit, error) {
	if req.Bypass {
		l.bypassed.Add(1)
		return limit.NewPermit(l, req.Bucket, 0, 0), nil
	}
	weight := 1
	if b, ok := l.cfg.Buckets[req.Bucket]; ok && b.Weight > 0 {
		weight = b.Weight
	}
	n := l.seq.Add(1)
	member := l.id + ":" + strconv.FormatUint(n, 10)
	prio := min(max(req.Priority, -1000), 1000)
	try := func(ctx context.Context) (int, error) {
		return acquireScript.Run(ctx, l.rdb, l.keys, l.limits, member, req.Bucket, weight, member,
			l.ttl.Milliseconds(), string(l.cfg.Strategy), prio, l.cfg.QueueSize, (3 * l.poll).Milliseconds()).Int()
	}
	grant := func() limit.Permit {
		l.mu.Lock()
		l.held[n] = heldLease{member: member, at: time.Now()}
		l.mu.Unlock()
		l.acquired.Add(1)
		if s := l.bucketStats[req.Bucket]; s != nil {
			s.acquired.Add(1)
		}
		return limit.NewPermit(l, req.Bucket, weight, n)
	}
	wake := l.wakeup()
	got, err := try(ctx)
	if err != nil {
		return limit.Permit{}, l.fail(ctx, err)
	}
	switch got {
	case 1:
		return grant(), nil
	case -1:
		l.rejected.Add(1)
		if s := l.bucketStats[req.Bucket]; s != nil {
			s.rejected.Add(1)
		}
		return limit.Permit{}, limit.ErrRejected
	}
	deadline := time.NewTimer(l.cfg.QueueTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(l.poll)
	defer tick.Stop()
	leave := func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := leaveScript.Run(lctx, l.rdb, l.keys, member).Err(); err != nil {
			l.log.Warn("leave limiter queue", "error", err) // it expires by itself
		}
	}
	for {
		select {
		case <-ctx.Done():
			leave()
			return limit.Permit{}, ctx.Err()
		case <-deadline.C:
			leave()
			l.timedOut.Add(1)
			if s := l.bucketStats[req.Bucket]; s != nil {
				s.timedOut.Add(1)
			}
			return limit.Permit{}, limit.ErrQueueTimeout
		case <-wake:
		case <-tick.C:
		}
		wake = l.wakeup()
		got, err := try(ctx)
		if err != nil {
			if ctx.Err() != nil {
				continue // reported by the select
			}
			leave()
			return limit.Permit{}, l.fail(ctx, err)
		}
		if got == 1 {
			return grant(), nil
		}
	}
}

func (l *Limiter) fail(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return fmt.Errorf("redis limiter: %w", err)
}

// Release implements limit.Limiter: the lease's units go back at once, and
// every server's waiters are told.
func (l *Limiter) Release(p limit.Permit) {
	if p.Weight() == 0 {
		return
	}
	l.mu.Lock()
	h, ok := l.held[p.Lease()]
	delete(l.held, p.Lease())
	l.mu.Unlock()
	if !ok {
		panic("redis limiter: permit released twice or not granted here")
	}
	l.execNanos.Add(int64(time.Since(h.at)))
	l.execCount.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := releaseScript.Run(ctx, l.rdb, l.keys, h.member).Err(); err != nil && !errors.Is(err, goredis.Nil) {
		l.log.Warn("release limiter lease; it expires by itself", "error", err)
	}
}

// Metrics implements limit.Limiter: units in flight and queue length are
// those of every server (read from Redis, with a one-second bound); the
// totals are this server's.
func (l *Limiter) Metrics() limit.Metrics {
	m := limit.Metrics{
		Acquired: l.acquired.Load(), Rejected: l.rejected.Load(), TimedOut: l.timedOut.Load(), Bypassed: l.bypassed.Load(),
		Limit: l.cfg.MaxConcurrent,
	}
	if c := l.execCount.Load(); c > 0 {
		m.AvgExecution = time.Duration(l.execNanos.Load() / c)
	}
	names := make([]any, 0, len(l.cfg.Buckets))
	for name := range l.cfg.Buckets {
		names = append(names, name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	state, err := stateScript.Run(ctx, l.rdb, l.keys, names...).Int64Slice()
	if err == nil && len(state) == 2+len(names) {
		m.Current, m.QueueLength = int(state[0]), int(state[1])
	}
	if len(names) > 0 {
		m.Buckets = make(map[string]limit.BucketMetrics, len(names))
		for i, name := range names {
			b := l.cfg.Buckets[name.(string)]
			s := l.bucketStats[name.(string)]
			bm := limit.BucketMetrics{Limit: b.Limit, Weight: max(b.Weight, 1),
				Acquired: s.acquired.Load(), Rejected: s.rejected.Load(), TimedOut: s.timedOut.Load()}
			if err == nil && len(state) == 2+len(names) {
				bm.Current = int(state[2+i])
			}
			m.Buckets[name.(string)] = bm
		}
	}
	return m
}
