package limit

import "time"

// Outcome is what [Limiter.Acquire] would do with a request now.
type Outcome string

// The outcomes a [Checker] reports.
const (
	// Run: the request would be granted at once.
	Run Outcome = "run"
	// Queue: the request would wait in the queue.
	Queue Outcome = "queue"
	// Rejected: the request would fail with ErrRejected (the Reject
	// strategy without room, or the queue full).
	Rejected Outcome = "reject"
	// Bypassed: a workflow node's request, granted without taking units.
	Bypassed Outcome = "bypass"
)

// Check is a [Checker]'s answer: what Acquire would do with a request now,
// and the state it would meet.
type Check struct {
	Outcome  Outcome
	Bucket   string
	Weight   int
	Current  int // units in flight
	Limit    int // the global capacity
	Queued   int // requests waiting, every bucket
	Strategy Strategy
	// QueueSize is the most requests that may wait; 0 under Reject.
	QueueSize    int
	QueueTimeout time.Duration
	// BucketCurrent and BucketLimit are those of the request's bucket, when
	// it is configured.
	BucketCurrent int
	BucketLimit   int
}

// Checker is a [Limiter] that can tell what Acquire would do with a
// request now without acquiring anything, for dry runs. The answer is a
// snapshot: a call made a moment later may meet another state.
type Checker interface {
	Check(req Request) Check
}

// Check answers as Acquire would decide now: with the same test of room
// (mayRunLocked) and of the queue, under the same mutex, taking nothing
// and counting nothing.
func (c *Controller) Check(req Request) Check {
	ch := Check{Bucket: req.Bucket, Weight: 1, Strategy: c.strategy, QueueTimeout: c.queueTimeout}
	if c.strategy != Reject {
		ch.QueueSize = c.queueSize
	}
	b := c.buckets[req.Bucket]
	if b != nil {
		ch.Weight = b.weight
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ch.Current, ch.Limit, ch.Queued = c.current, c.limit, c.queue.len
	if b != nil {
		ch.BucketCurrent, ch.BucketLimit = b.current, b.limit
	}
	switch {
	case req.Bypass:
		ch.Outcome, ch.Weight = Bypassed, 0
	case c.mayRunLocked(b, ch.Weight, req.Priority):
		ch.Outcome = Run
	case c.strategy == Reject || c.queue.len >= c.queueSize:
		ch.Outcome = Rejected
	default:
		ch.Outcome = Queue
	}
	return ch
}

var _ Checker = (*Controller)(nil)
