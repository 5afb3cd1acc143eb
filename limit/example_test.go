package limit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/wieldhq/wield/limit"
)

func Example() {
	c, err := limit.New(limit.Config{
		MaxConcurrent: 3,
		Strategy:      limit.Reject,
		Buckets: map[string]limit.Bucket{
			"http": {Limit: 2},
			"ai":   {Limit: 2, Weight: 2},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	ai, err := c.Acquire(ctx, limit.Request{Bucket: "ai"})
	fmt.Println("ai:", err, "weight", ai.Weight())
	http, err := c.Acquire(ctx, limit.Request{Bucket: "http"})
	fmt.Println("http:", err)
	_, err = c.Acquire(ctx, limit.Request{Bucket: "http"})
	fmt.Println("second http:", err, errors.Is(err, limit.ErrRejected))
	node, err := c.Acquire(ctx, limit.Request{Bucket: "http", Bypass: true})
	fmt.Println("workflow node:", err)

	node.Release()
	http.Release()
	ai.Release()
	m := c.Metrics()
	fmt.Printf("current %d, acquired %d, rejected %d, bypassed %d\n", m.Current, m.Acquired, m.Rejected, m.Bypassed)
	// Output:
	// ai: <nil> weight 2
	// http: <nil>
	// second http: limit: rejected true
	// workflow node: <nil>
	// current 0, acquired 2, rejected 1, bypassed 1
}

func ExampleNew() {
	_, err := limit.New(limit.Config{
		MaxConcurrent: 4,
		Buckets:       map[string]limit.Bucket{"ai": {Limit: 1, Weight: 2}},
	})
	fmt.Println(err)
	// Output:
	// limit: new controller: bucket "ai": Limit 1 is below its Weight 2, so its calls could never run
}

func ExampleController_Metrics() {
	c, _ := limit.New(limit.Config{Buckets: map[string]limit.Bucket{"http": {Limit: 5}}})
	p, _ := c.Acquire(context.Background(), limit.Request{Bucket: "http"})
	defer p.Release()

	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(c.Metrics())
	// Output:
	// {
	//   "current_concurrent": 1,
	//   "queue_length": 0,
	//   "total_acquired": 1,
	//   "total_rejected": 0,
	//   "total_timeout": 0,
	//   "total_bypassed": 0,
	//   "avg_execution_time": 0,
	//   "limit": 10,
	//   "buckets": {
	//     "http": {
	//       "current": 1,
	//       "limit": 5,
	//       "weight": 1,
	//       "queue": 0,
	//       "acquired": 1,
	//       "rejected": 0,
	//       "timed_out": 0
	//     }
	//   }
	// }
}
