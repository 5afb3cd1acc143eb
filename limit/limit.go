// Package limit bounds how many tool calls run at once, globally and per tool
// category, and decides who waits, in which order, and for how long.
//
// The engine asks a [Limiter] for a [Permit] before it runs a tool and gives the
// permit back when the tool returns. [Controller] is the in-process Limiter;
// an implementation shared between processes (Redis, say) satisfies the same
// interface and builds its permits with [NewPermit].
//
// # Getting a permit
//
//	c, err := limit.New(limit.Config{MaxConcurrent: 10})
//	if err != nil { ... }
//	p, err := c.Acquire(ctx, limit.Request{Bucket: "http"})
//	if err != nil {
//		// ErrRejected, ErrQueueTimeout, or ctx.Err()
//	}
//	defer p.Release()
//
// The zero [Config] is usable: 10 units, a queue of 100 waiters, 30 seconds of
// waiting at most, first come first served.
//
// # Buckets
//
// Tools of one category share a [Bucket]. Its Limit caps the units that
// category may hold at once, so a burst of slow AI calls cannot take every slot
// from quick HTTP calls; its Weight says how many units one call takes, from the
// bucket and from the global capacity alike:
//
//	limit.Config{
//		MaxConcurrent: 10,
//		Buckets: map[string]limit.Bucket{
//			"http": {Limit: 5},
//			"ai":   {Limit: 4, Weight: 2}, // two AI calls at most
//		},
//	}
//
// When a slot frees up, the waiters are walked in order. A waiter whose bucket
// is full is passed over, so one busy category does not hold up the others; a
// waiter that does not fit the global capacity ends the walk, so a heavy call is
// not starved by lighter ones behind it.
//
// # Strategies
//
// [FIFO] serves waiters in arrival order; [Priority] serves the highest
// [Request.Priority] first, ties in arrival order; [Reject] never queues and
// fails with [ErrRejected] when there is no room. A new request never takes
// room that a waiter it would queue behind is waiting for.
//
// # Workflow nodes
//
// Calls made by a workflow node are already paced by the workflow, so they set
// [Request.Bypass]: they never wait, take no units, and are counted apart in
// [Metrics.Bypassed].
//
// # Metrics
//
// [Controller.Metrics] returns a snapshot that marshals to the JSON the
// monitoring endpoint serves: units in flight, queue length, totals, mean
// execution time, and the same per bucket.
package limit

import (
	"context"
	"errors"
	"time"
)

// Strategy says what happens to a request that finds no free capacity.
type Strategy string

// The strategies a [Config] accepts; the empty Strategy means FIFO.
const (
	// FIFO queues the request; waiters are served in arrival order.
	FIFO Strategy = "fifo"
	// Priority queues the request; waiters with a higher Request.Priority are
	// served first, ties in arrival order.
	Priority Strategy = "priority"
	// Reject fails the request at once with ErrRejected; nothing ever queues.
	Reject Strategy = "reject"
)

// The defaults [New] gives the zero fields of a [Config], those of the
// original ToolEngine design.
const (
	defaultMaxConcurrent = 10
	defaultQueueSize     = 100
	defaultQueueTimeout  = 30 * time.Second
)

// Config describes a [Controller]. The zero value is usable: a zero field takes
// its default (10 units, 100 waiters, 30 seconds, FIFO). Negative numbers are errors, which
// also means a queue cannot be switched off with QueueSize; use [Reject] for that.
type Config struct {
	// MaxConcurrent is the global capacity in units.
	MaxConcurrent int
	// QueueSize is the most requests that may wait at once, across all
	// buckets. It is ignored by Reject.
	QueueSize int
	// QueueTimeout is the longest a request waits in the queue before it fails
	// with ErrQueueTimeout.
	QueueTimeout time.Duration
	// Strategy orders the waiters; see the constants.
	Strategy Strategy
	// Buckets maps a tool category ("http", "ai", ...) to its limits.
	Buckets map[string]Bucket
}

// Bucket limits one tool category.
type Bucket struct {
	// Limit is the most units the category holds at once; 0 leaves only the
	// global capacity. A non-zero Limit must be at least Weight.
	Limit int
	// Weight is the units one call takes from the bucket and from the global
	// capacity; 0 means 1. It must not exceed Config.MaxConcurrent.
	Weight int
}

// Request describes a call that wants to run.
type Request struct {
	// Bucket is the tool's category. A category without a configured Bucket
	// takes one unit and is bound by the global capacity only.
	Bucket string
	// Priority orders waiters under the Priority strategy: higher runs first.
	// Other strategies ignore it.
	Priority int
	// Bypass marks a call made by a workflow node: it is granted at once, takes
	// no capacity and is counted in Metrics.Bypassed only.
	Bypass bool
}

// Limiter hands out permits to run tool calls. The engine depends on this
// interface so that a limit shared between processes can replace [Controller].
type Limiter interface {
	// Acquire blocks until the request may run and returns its permit. It
	// returns ErrRejected when there is no room and the request may not wait,
	// ErrQueueTimeout when it waited too long, and an error matching ctx.Err()
	// when ctx ended first.
	Acquire(ctx context.Context, req Request) (Permit, error)
	// Release gives back the capacity a permit holds. Each permit is released
	// once.
	Release(p Permit)
	// Metrics returns a snapshot of the counters.
	Metrics() Metrics
}

// ErrRejected is returned by Acquire when the queue is full, or when the Reject
// strategy finds no free capacity.
var ErrRejected = errors.New("limit: rejected")

// ErrQueueTimeout is returned by Acquire when a request waited the whole
// QueueTimeout without getting a slot.
var ErrQueueTimeout = errors.New("limit: queue timeout")

// Permit is the right to run one call, handed out by a [Limiter]. It is a small
// value, copied freely; the zero Permit holds nothing.
type Permit struct {
	limiter  Limiter
	bucket   string
	weight   int
	acquired time.Duration // monotonic() when granted, if timed; else 0
	lease    uint64
	queued   bool
}

// epoch anchors the clock readings permits carry. Only the monotonic clock is
// read (time.Since of a monotonic time), which costs half of a time.Now.
var epoch = time.Now()

// monotonic returns the time elapsed since epoch.
func monotonic() time.Duration { return time.Since(epoch) }

// NewPermit builds a permit for a [Limiter] implementation outside this
// package: bucket and weight are what the permit holds, lease is whatever the
// implementation needs to find it again (a Redis key suffix, say). Its
// [Permit.Release] calls l.Release.
func NewPermit(l Limiter, bucket string, weight int, lease uint64) Permit {
	return Permit{limiter: l, bucket: bucket, weight: weight, acquired: monotonic(), lease: lease}
}

// Release gives the permit's capacity back to the limiter that granted it, so
// the engine can write defer p.Release(). It does nothing for the zero Permit
// and for bypass permits.
//
// Release a permit exactly once. Releasing it twice is a programmer error: the
// second release returns units another call holds. [Controller] panics when it
// can tell (more units released than are in flight), but it cannot always tell.
func (p Permit) Release() {
	if p.limiter != nil {
		p.limiter.Release(p)
	}
}

// Bucket returns the category the permit was granted for.
func (p Permit) Bucket() string { return p.bucket }

// Weight returns the units the permit holds; 0 for bypass and zero permits.
func (p Permit) Weight() int { return p.weight }

// Queued reports whether the request waited in the queue for this permit;
// a permit granted at once did not.
func (p Permit) Queued() bool { return p.queued }

// Lease returns the identifier the limiter gave the permit. [Controller]
// numbers its permits from 1; bypass and zero permits have 0.
func (p Permit) Lease() uint64 { return p.lease }

// Metrics is a snapshot of a limiter's counters; its JSON form is what the
// monitoring endpoint serves. The totals count since the limiter was made.
type Metrics struct {
	// Current is the units in flight, bypass calls not counted.
	Current int `json:"current_concurrent"`
	// QueueLength is the number of requests waiting.
	QueueLength int `json:"queue_length"`
	// Acquired counts permits granted, bypass permits not counted.
	Acquired int64 `json:"total_acquired"`
	// Rejected counts ErrRejected answers.
	Rejected int64 `json:"total_rejected"`
	// TimedOut counts ErrQueueTimeout answers; a ctx that ends while its
	// request waits is not counted.
	TimedOut int64 `json:"total_timeout"`
	// Bypassed counts bypass permits.
	Bypassed int64 `json:"total_bypassed"`
	// AvgExecution is the mean time between acquire and release over the
	// permits released so far.
	AvgExecution time.Duration `json:"avg_execution_time"`
	// Limit is the global capacity.
	Limit int `json:"limit"`
	// Buckets holds the configured buckets by name.
	Buckets map[string]BucketMetrics `json:"buckets,omitempty"`
}

// BucketMetrics is the part of [Metrics] about one bucket.
type BucketMetrics struct {
	// Current is the units the bucket holds.
	Current int `json:"current"`
	// Limit is the bucket's limit; 0 means the global capacity only.
	Limit int `json:"limit"`
	// Weight is the units one call takes.
	Weight int `json:"weight"`
	// Queue is the number of the bucket's requests waiting.
	Queue int `json:"queue"`
	// Acquired counts the bucket's permits.
	Acquired int64 `json:"acquired"`
	// Rejected counts the bucket's ErrRejected answers.
	Rejected int64 `json:"rejected"`
	// TimedOut counts the bucket's ErrQueueTimeout answers.
	TimedOut int64 `json:"timed_out"`
}
