package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

// benchRecord is a record as `wield serve` keeps an MCP echo call: a
// session's conversation, an MCP caller, small arguments and output.
func benchRecord(i int) *wield.Record {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Microsecond)
	args := json.RawMessage(`{"message":"hello, world"}`)
	c := &wield.Call{ID: fmt.Sprintf("01KBX%021d", i), Tool: "echo", Arguments: args,
		Caller: wield.Caller{ID: "mcp:bench", Type: wield.CallerConversationAgent, ConversationID: fmt.Sprintf("session-%d", i%8)}}
	res := &wield.Result{CallID: c.ID, Tool: "echo", OK: true, Output: json.RawMessage(`{"message":"hello, world"}`),
		Duration: 20 * time.Microsecond, Attempts: 1, StartedAt: at.Add(time.Microsecond), FinishedAt: at.Add(20 * time.Microsecond)}
	return &wield.Record{Call: c, Arguments: args, Result: res, QueuedAt: at}
}

// BenchmarkWrite is the background writer's cost per record, alone: the
// transaction, the INSERTs and their binds, in batches of the sizes the
// committer sees: a sync store without a journal at 8 callers, and the
// background writer of `wield serve` (a tick's records, 50 ms of calls). ns/op is per
// record.
//
//	go test -run '^$' -bench BenchmarkWrite -benchtime 200000x ./sqlite/
func BenchmarkWrite(b *testing.B) {
	for _, batch := range []int{8, 64, 512} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchWrite(b, batch, benchRecord) })
	}
}

// BenchmarkWriteTools is BenchmarkWrite's batches of 512 with the calls
// spread over 8 tools, three calls in a row to each, as an agent's are: an
// index led by the tool gets its entries amid the tree, not at its end.
func BenchmarkWriteTools(b *testing.B) {
	benchWrite(b, 512, func(i int) *wield.Record {
		r := benchRecord(i)
		r.Call.Tool = fmt.Sprintf("tool-%d", (i/3)%8)
		r.Result.Tool = r.Call.Tool
		return r
	})
}

func benchWrite(b *testing.B, batch int, record func(int) *wield.Record) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "wield.db"), &Options{Async: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	rows := make([]*row, b.N)
	for i := range rows {
		if rows[i], err = newRow(record(i), true); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	// The writer's thread alone: the checkpoints and the
	// collector run on others, and vary with the machine's load.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		if err := s.write(ctx, rows[i:min(i+batch, b.N)]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "writer-cpu-µs/record")
}

// BenchmarkSave is Save of an MCP echo call's record from 8 goroutines, in
// sync mode (through the journal, as `wield serve` runs) and in async mode:
// the caller's share and the background writer's, allocations included.
//
//	go test -run '^$' -bench BenchmarkSave -benchtime 100000x ./sqlite/
func BenchmarkSave(b *testing.B) {
	for _, async := range []bool{false, true} {
		b.Run(fmt.Sprintf("async=%v", async), func(b *testing.B) {
			ctx := context.Background()
			s, err := Open(ctx, filepath.Join(b.TempDir(), "wield.db"), &Options{Async: async})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(ctx)
			recs := make([]*wield.Record, b.N)
			for i := range recs {
				recs[i] = benchRecord(i)
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(4) // 8 goroutines on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Save(ctx, recs[next.Add(1)-1]); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}
