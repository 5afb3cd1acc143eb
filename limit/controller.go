package limit

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Controller is the in-process [Limiter]: a weighted semaphore with per-bucket
// limits and a bounded wait queue. Make one with [New]; it is safe for
// concurrent use.
//
// A request that finds room and nobody it would overtake is granted under one
// mutex, without allocating and without a timer; only requests that wait pay
// for a channel and a timer.
type Controller struct {
	limit        int
	queueSize    int
	queueTimeout time.Duration
	strategy     Strategy
	buckets      map[string]*bucketState // read-only after New; entries guarded by mu

	bypassed atomic.Int64 // bypass requests never take mu

	mu       sync.Mutex
	current  int
	queue    waitList
	lease    uint64
	acquired int64
	rejected int64
	timedOut int64
	released int64
	sampled  int64   // released permits whose execution time was measured
	execNS   float64 // total execution time of the sampled permits; float so it cannot overflow
}

// bucketState is the live state of one configured bucket, guarded by the
// Controller's mutex.
type bucketState struct {
	limit    int // 0: global capacity only
	weight   int
	current  int
	queued   int
	acquired int64
	rejected int64
	timedOut int64
}

// full reports whether a call of weight units would exceed b's limit; a nil
// bucket (unconfigured category) is never full.
func (b *bucketState) full(weight int) bool {
	return b != nil && b.limit > 0 && b.current+weight > b.limit
}

// New returns a Controller for cfg, with defaults for its zero fields. It
// fails on a negative number, an unknown strategy, a bucket weight above
// MaxConcurrent, or a bucket limit below its weight; the error names the field
// or bucket.
func New(cfg Config) (*Controller, error) {
	if cfg.MaxConcurrent < 0 {
		return nil, fmt.Errorf("limit: new controller: MaxConcurrent is negative (%d)", cfg.MaxConcurrent)
	}
	if cfg.QueueSize < 0 {
		return nil, fmt.Errorf("limit: new controller: QueueSize is negative (%d)", cfg.QueueSize)
	}
	if cfg.QueueTimeout < 0 {
		return nil, fmt.Errorf("limit: new controller: QueueTimeout is negative (%v)", cfg.QueueTimeout)
	}
	c := &Controller{
		limit:        cmp.Or(cfg.MaxConcurrent, defaultMaxConcurrent),
		queueSize:    cmp.Or(cfg.QueueSize, defaultQueueSize),
		queueTimeout: cmp.Or(cfg.QueueTimeout, defaultQueueTimeout),
		strategy:     cmp.Or(cfg.Strategy, FIFO),
		buckets:      make(map[string]*bucketState, len(cfg.Buckets)),
	}
	switch c.strategy {
	case FIFO, Priority, Reject:
	default:
		return nil, fmt.Errorf("limit: new controller: unknown Strategy %q (want %q, %q or %q)", cfg.Strategy, FIFO, Priority, Reject)
	}
	for name, b := range cfg.Buckets {
		if b.Limit < 0 {
			return nil, fmt.Errorf("limit: new controller: bucket %q: Limit is negative (%d)", name, b.Limit)
		}
		if b.Weight < 0 {
			return nil, fmt.Errorf("limit: new controller: bucket %q: Weight is negative (%d)", name, b.Weight)
		}
		w := cmp.Or(b.Weight, 1)
		if w > c.limit {
			return nil, fmt.Errorf("limit: new controller: bucket %q: Weight %d exceeds MaxConcurrent %d, so its calls could never run", name, w, c.limit)
		}
		if b.Limit > 0 && b.Limit < w {
			return nil, fmt.Errorf("limit: new controller: bucket %q: Limit %d is below its Weight %d, so its calls could never run", name, b.Limit, w)
		}
		c.buckets[name] = &bucketState{limit: b.Limit, weight: w}
	}
	return c, nil
}

// Acquire returns a permit for req, waiting in the queue if there is no room
// or if an earlier waiter could use the room first. It returns [ErrRejected]
// when it may not wait (Reject strategy, or the queue is full),
// [ErrQueueTimeout] after waiting QueueTimeout, and ctx.Err() when ctx is done
// before the permit is granted; in every error case the request holds nothing
// and has left the queue. A waiter granted in the same instant as its timeout
// or cancellation keeps the permit and returns it with a nil error.
//
// A Bypass request is granted at once with a permit whose Release does nothing.
func (c *Controller) Acquire(ctx context.Context, req Request) (Permit, error) {
	if err := ctx.Err(); err != nil {
		return Permit{}, err
	}
	if req.Bypass {
		c.bypassed.Add(1)
		return Permit{bucket: req.Bucket}, nil
	}
	b := c.buckets[req.Bucket]
	weight := 1
	if b != nil {
		weight = b.weight
	}

	c.mu.Lock()
	if c.mayRunLocked(b, weight, req.Priority) {
		p := c.grantLocked(b, req.Bucket, weight, 0)
		c.mu.Unlock()
		return p, nil
	}
	if c.strategy == Reject || c.queue.len >= c.queueSize {
		c.rejected++
		if b != nil {
			b.rejected++
		}
		c.mu.Unlock()
		return Permit{}, ErrRejected
	}
	w := &waiter{bucket: b, name: req.Bucket, weight: weight, priority: req.Priority, ready: make(chan struct{})}
	if c.strategy == Priority {
		c.queue.insertByPriority(w)
	} else {
		c.queue.pushBack(w)
	}
	if b != nil {
		b.queued++
	}
	c.mu.Unlock()

	timer := time.NewTimer(c.queueTimeout)
	defer timer.Stop()
	select {
	case <-w.ready:
		return w.permit, nil
	case <-timer.C:
		return c.abandon(w, ErrQueueTimeout)
	case <-ctx.Done():
		return c.abandon(w, ctx.Err())
	}
}

// mayRunLocked reports whether a new request may be granted at once: it fits
// the global capacity and its bucket, and no waiter it would queue behind is
// blocked on the global capacity. Waiters held back only by their own full
// bucket do not count, as dispatch would pass over them too.
func (c *Controller) mayRunLocked(b *bucketState, weight, priority int) bool {
	if c.current+weight > c.limit || b.full(weight) {
		return false
	}
	for w := c.queue.head; w != nil; w = w.next {
		if c.strategy == Priority && w.priority < priority {
			break // the new request would queue in front of w
		}
		if !w.bucket.full(w.weight) {
			return false
		}
	}
	return true
}

// grantLocked takes weight units for a permit of bucket name.
// now, when not zero, is the current monotonic() reading, which the caller
// has already taken.
func (c *Controller) grantLocked(b *bucketState, name string, weight int, now time.Duration) Permit {
	c.current += weight
	c.acquired++
	c.lease++
	if b != nil {
		b.current += weight
		b.acquired++
	}
	p := Permit{limiter: c, bucket: name, weight: weight, lease: c.lease}
	if sampled(c.lease) {
		// Reading the clock costs more than the rest of a grant on some
		// machines, so only a sample of the permits is timed: all of the
		// first thousand, then one in eight. The mean stays true.
		if now == 0 {
			now = monotonic()
		}
		p.acquired = now
	}
	return p
}

func sampled(lease uint64) bool { return lease <= 1024 || lease%8 == 0 }

// abandon takes w out of the queue after its timeout or cancellation and
// returns err, unless a release granted w first: then w keeps its permit, so
// no capacity is lost either way.
func (c *Controller) abandon(w *waiter, err error) (Permit, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.granted {
		return w.permit, nil
	}
	c.queue.remove(w)
	if w.bucket != nil {
		w.bucket.queued--
	}
	if err == ErrQueueTimeout {
		c.timedOut++
		if w.bucket != nil {
			w.bucket.timedOut++
		}
	}
	// w may have been the waiter that stopped the walk; those behind it may fit now.
	c.dispatchLocked()
	return Permit{}, err
}

// dispatchLocked grants every waiter that fits, walking the queue in service
// order: a waiter whose bucket is full is passed over, and the first waiter
// that does not fit the global capacity ends the walk so that lighter waiters
// behind it cannot starve it.
func (c *Controller) dispatchLocked() {
	var (
		now    time.Duration // read once, on the first grant
		hasNow bool
	)
	for w := c.queue.head; w != nil && c.current < c.limit; {
		next := w.next
		if w.bucket.full(w.weight) {
			w = next
			continue
		}
		if c.current+w.weight > c.limit {
			return
		}
		if !hasNow {
			now, hasNow = monotonic(), true
		}
		c.queue.remove(w)
		if w.bucket != nil {
			w.bucket.queued--
		}
		w.permit = c.grantLocked(w.bucket, w.name, w.weight, now)
		w.permit.queued = true
		w.granted = true
		close(w.ready)
		w = next
	}
}

// Release gives back the units p holds and grants waiters that now fit. It
// does nothing for the zero Permit and for bypass permits. It panics if p
// comes from another Limiter, or if it would release more units than are in
// flight, which happens when a permit is released twice.
func (c *Controller) Release(p Permit) {
	if p.limiter == nil {
		return
	}
	if p.limiter != Limiter(c) {
		panic("limit: Release of a permit from another Limiter")
	}
	var elapsed time.Duration
	timed := p.acquired != 0
	if timed {
		elapsed = monotonic() - p.acquired
	}
	b := c.buckets[p.bucket]

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current < p.weight || (b != nil && b.current < p.weight) {
		panic(fmt.Sprintf("limit: Release of permit %d (bucket %q) that is not held; was it released twice?", p.lease, p.bucket))
	}
	c.current -= p.weight
	if b != nil {
		b.current -= p.weight
	}
	c.released++
	if timed {
		c.sampled++
		c.execNS += float64(elapsed)
	}
	c.dispatchLocked()
}

// Metrics returns a snapshot of the counters. Buckets lists the configured
// buckets; calls of other categories count only in the global numbers.
func (c *Controller) Metrics() Metrics {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := Metrics{
		Current:     c.current,
		QueueLength: c.queue.len,
		Acquired:    c.acquired,
		Rejected:    c.rejected,
		TimedOut:    c.timedOut,
		Bypassed:    c.bypassed.Load(),
		Limit:       c.limit,
	}
	if c.sampled > 0 {
		m.AvgExecution = time.Duration(c.execNS / float64(c.sampled))
	}
	if len(c.buckets) > 0 {
		m.Buckets = make(map[string]BucketMetrics, len(c.buckets))
		for name, b := range c.buckets {
			m.Buckets[name] = BucketMetrics{
				Current:  b.current,
				Limit:    b.limit,
				Weight:   b.weight,
				Queue:    b.queued,
				Acquired: b.acquired,
				Rejected: b.rejected,
				TimedOut: b.timedOut,
			}
		}
	}
	return m
}

var _ Limiter = (*Controller)(nil)
