// Package storebench measures the stores against the targets of issue 3:
// recorded calls per second through the engine, sync and async, at 1 and 64
// concurrent callers, and the query of one conversation among 1,000,000
// records. Each backend is a row of [backends]:
//
//	go test -run '^$' -bench . -benchtime 200000x ./internal/storebench/
package storebench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/sqlite"
)

// backend opens empty stores of one kind.
type backend struct {
	name string
	// open returns a new, empty store; the benchmark closes it.
	open func(b *testing.B, async bool) wield.Storage
}

// backends are the stores measured. A backend that is not available here
// skips in its open.
var backends = []backend{
	{"sqlite", openSQLite},
}

func openSQLite(b *testing.B, async bool) wield.Storage {
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "wield.db"), &sqlite.Options{Async: async})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

type echoIn struct {
	Message string `json:"message"`
}

func echo(_ context.Context, in echoIn) (echoIn, error) { return in, nil }

// flush waits for a buffering store's records.
func flush(b *testing.B, s wield.Storage) {
	if f, ok := s.(interface{ Flush(context.Context) error }); ok {
		if err := f.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordedCalls is sustained recorded calls per second through
// the engine: an inline echo tool, every call recorded, from 1 or 64
// goroutines calling in a loop. The time includes writing the last
// buffered records (async), so it is what the store sustains.
func BenchmarkRecordedCalls(b *testing.B) {
	for _, be := range backends {
		for _, mode := range []string{"sync", "async"} {
			for _, callers := range []int{1, 64} {
				b.Run(fmt.Sprintf("%s/%s/callers=%d", be.name, mode, callers), func(b *testing.B) {
					benchCalls(b, be.open(b, mode == "async"), callers)
				})
			}
		}
	}
}

func benchCalls(b *testing.B, s wield.Storage, callers int) {
	defer func() {
		if err := s.Close(context.Background()); err != nil {
			b.Error(err)
		}
	}()
	reg := wield.NewRegistry(nil)
	tool := wield.Func("echo", "Echo a message", echo)
	tool.Inline = true
	reg.MustRegister(tool)
	lim, err := limit.New(limit.Config{MaxConcurrent: 128, QueueSize: 1024})
	if err != nil {
		b.Fatal(err)
	}
	e := engine.New(reg, &engine.Options{Store: s, Limiter: lim})
	defer e.Close(context.Background())
	args := json.RawMessage(`{"message":"hello, world"}`)

	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			call := wield.Call{Tool: "echo", Arguments: args, Caller: wield.ForConversation("agent", fmt.Sprintf("conv-%d", g))}
			for next.Add(1) <= int64(b.N) {
				res, err := e.Call(context.Background(), call)
				if err != nil || !res.OK {
					b.Error(err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	flush(b, s)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkQueryConversation is one page (100 records, newest first) of
// one conversation among 1,000,000 records of 10,000 conversations, the
// conversations interleaved as they would be in a busy store.
func BenchmarkQueryConversation(b *testing.B) {
	const records, conversations = 1_000_000, 10_000
	for _, be := range backends {
		// Filled once per backend: sub-benchmarks run their function again
		// for each b.N, this function runs once.
		s := be.open(b, true)
		start := time.Now()
		fill(b, s, records, conversations)
		b.Logf("%s: %d records written in %v", be.name, records, time.Since(start).Round(time.Millisecond))
		b.Run(be.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				conv := fmt.Sprintf("conv-%d", rng.IntN(conversations))
				page, err := s.Calls(ctx, wield.CallQuery{ConversationID: conv, Limit: 100})
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Records) != 100 {
					b.Fatalf("%s: %d records, want 100", conv, len(page.Records))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
		})
		if err := s.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// fill saves n records, round-robin over the conversations, straight into
// the store (not through an engine) from a few goroutines, and waits until
// they are written.
func fill(b *testing.B, s wield.Storage, n, conversations int) {
	const workers = 4
	t0 := time.Now().Add(-time.Duration(n) * time.Millisecond)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				at := t0.Add(time.Duration(i) * time.Millisecond)
				id := wield.NewIDAt(at)
				r := &wield.Record{
					Call: &wield.Call{ID: id, Tool: "http_get", Arguments: json.RawMessage(`{"url":"https://example.com/a/b?c=d"}`),
						Caller: wield.ForConversation("agent", fmt.Sprintf("conv-%d", i%conversations))},
					Category:  wield.CategoryHTTP,
					Arguments: json.RawMessage(`{"url":"https://example.com/a/b?c=d","timeout":30}`),
					Result: &wield.Result{CallID: id, Tool: "http_get", OK: i%17 != 0, Attempts: 1,
						Output:    json.RawMessage(`{"status":200,"body":"<html><head><title>Example</title></head><body>hello</body></html>"}`),
						StartedAt: at, FinishedAt: at.Add(12 * time.Millisecond), Duration: 12 * time.Millisecond},
					QueuedAt: at,
				}
				if err := s.Save(context.Background(), r); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	flush(b, s)
}
