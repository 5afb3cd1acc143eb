package limit_test

import (
	"context"
	"testing"

	"github.com/wieldhq/wield/limit"
)

// TestCheck: Check answers as Acquire then does, and takes nothing.
func TestCheck(t *testing.T) {
	for _, strategy := range []limit.Strategy{limit.FIFO, limit.Priority, limit.Reject} {
		t.Run(string(strategy), func(t *testing.T) {
			c, err := limit.New(limit.Config{MaxConcurrent: 2, QueueSize: 1, Strategy: strategy, Buckets: map[string]limit.Bucket{"ai": {Limit: 2, Weight: 2}}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			req := limit.Request{Bucket: "ai"}
			if ch := c.Check(req); ch.Outcome != limit.Run || ch.Weight != 2 || ch.BucketLimit != 2 {
				t.Errorf("empty: %+v, want run with weight 2", ch)
			}
			p, err := c.Acquire(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Release()
			ch := c.Check(req)
			want := limit.Queue
			if strategy == limit.Reject {
				want = limit.Rejected
			}
			if ch.Outcome != want || ch.Current != 2 || ch.BucketCurrent != 2 {
				t.Errorf("full: %+v, want %s", ch, want)
			}
			if got := c.Check(limit.Request{Bucket: "ai", Bypass: true}); got.Outcome != limit.Bypassed {
				t.Errorf("bypass: %s", got.Outcome)
			}
			m := c.Metrics()
			if m.Acquired != 1 || m.Rejected != 0 || m.QueueLength != 0 {
				t.Errorf("Check counted: %+v", m)
			}
		})
	}
}
