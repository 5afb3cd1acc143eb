package storebench

// PostgreSQL's cases: recorded calls per second through the engine, and
// queries among a million records. They need the server of
// scripts/postgres-up (or $WIELD_TEST_POSTGRES) and skip without it, unless
// $CI is set.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/postgres"
)

func pgDSN() string {
	if dsn := os.Getenv("WIELD_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return "postgres://postgres@127.0.0.1:5432/wield_test?sslmode=disable"
}

// pgOpen opens a store in a fresh schema, dropped when the benchmark ends.
func pgOpen(b *testing.B, async bool) *postgres.Store {
	b.Helper()
	var r [6]byte
	_, _ = rand.Read(r[:])
	schema := "b_" + hex.EncodeToString(r[:])
	ctx := context.Background()
	s, err := postgres.Open(ctx, pgDSN(), &postgres.Options{Schema: schema, Async: async})
	if err != nil {
		if os.Getenv("CI") != "" {
			b.Fatal(err)
		}
		b.Skipf("PostgreSQL unreachable (run scripts/postgres-up): %v", err)
	}
	b.Cleanup(func() {
		if err := s.Close(ctx); err != nil {
			b.Error(err)
		}
		conn, err := pgx.Connect(ctx, pgDSN())
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			b.Error(err)
		}
	})
	return s
}

// BenchmarkPostgresCalls is sustained recorded calls through the engine:
// the echo tool (inline), each call's record saved in the store, from 1 and
// 64 concurrent callers. In sync mode a call returns after its record is
// committed; in async mode the time includes writing the last buffered
// records (Flush).
func BenchmarkPostgresCalls(b *testing.B) {
	for _, async := range []bool{false, true} {
		for _, callers := range []int{1, 64} {
			mode := "sync"
			if async {
				mode = "async"
			}
			b.Run(fmt.Sprintf("%s/callers=%d", mode, callers), func(b *testing.B) {
				s := pgOpen(b, async)
				runCalls(b, s, callers)
			})
		}
	}
}

func runCalls(b *testing.B, s *postgres.Store, callers int) {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.Echo())
	lim, err := limit.New(limit.Config{MaxConcurrent: 2 * callers, QueueSize: 4 * callers})
	if err != nil {
		b.Fatal(err)
	}
	e := engine.New(reg, &engine.Options{Store: s, Limiter: lim})
	defer e.Close(context.Background())
	ctx := context.Background()
	args := json.RawMessage(`{"message":"hello, world"}`)
	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			call := wield.Call{Tool: "echo", Arguments: args, Caller: wield.ForConversation("agent", fmt.Sprint("conv-", c))}
			for next.Add(1) <= int64(b.N) {
				res, err := e.Call(ctx, call)
				if err != nil || !res.OK {
					b.Error(err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkPostgresQueries reads among 1,000,000 records: 10,000
// conversations of 100 calls each, interleaved in time as concurrent
// conversations are, over 20 tools.
func BenchmarkPostgresQueries(b *testing.B) {
	s := pgOpen(b, false)
	ctx := context.Background()
	start := time.Now()
	load1M(b, s.Schema())
	b.Logf("loaded 1,000,000 records in %v", time.Since(start).Round(time.Millisecond))

	queries := []struct {
		name string
		run  func() (int, error)
	}{
		{"conversation", func() (int, error) {
			p, err := s.Calls(ctx, wield.CallQuery{ConversationID: "conv-4242"})
			return len(p.Records), err
		}},
		{"conversation/page2", func() (int, error) {
			p, err := s.Calls(ctx, wield.CallQuery{ConversationID: "conv-4242", Limit: 50})
			if err != nil {
				return 0, err
			}
			p, err = s.Calls(ctx, wield.CallQuery{ConversationID: "conv-4242", Limit: 50, Cursor: p.Next})
			return len(p.Records), err
		}},
		{"tool/errors", func() (int, error) {
			p, err := s.Calls(ctx, wield.CallQuery{Tool: "tool-7", Status: "error"})
			return len(p.Records), err
		}},
		{"errors", func() (int, error) {
			p, err := s.Calls(ctx, wield.CallQuery{Status: "error"})
			return len(p.Records), err
		}},
		{"time-range", func() (int, error) {
			from := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC) // 60,000 records in
			p, err := s.Calls(ctx, wield.CallQuery{Since: from, Until: from.Add(time.Second)})
			return len(p.Records), err
		}},
		{"caller", func() (int, error) {
			p, err := s.Calls(ctx, wield.CallQuery{CallerID: "agent-42"})
			return len(p.Records), err
		}},
		{"summary", func() (int, error) {
			sum, err := s.Summary(ctx, "conv-4242")
			return sum.TotalCalls, err
		}},
		{"statistics/conversation", func() (int, error) {
			st, err := s.Statistics(ctx, wield.StatsQuery{ConversationID: "conv-4242"})
			return int(st.Overall.Count), err
		}},
		{"statistics/all", func() (int, error) {
			st, err := s.Statistics(ctx, wield.StatsQuery{})
			return int(st.Overall.Count), err
		}},
		{"replay", func() (int, error) {
			r, err := s.Replay(ctx, "tool-2", "key-4242")
			if r == nil {
				return 0, err
			}
			return 1, err
		}},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n, err := q.run()
				if err != nil {
					b.Fatal(err)
				}
				if n == 0 {
					b.Fatal("no records")
				}
			}
		})
	}
}

// load1M writes the records with one INSERT ... SELECT, much faster than
// saving them one by one, and then lets the planner see them.
func load1M(b *testing.B, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgDSN())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	calls := pgx.Identifier{schema, "calls"}.Sanitize()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	_, err = conn.Exec(ctx, `INSERT INTO `+calls+` (id, tool, category, caller_id, caller_type, conversation_id,
			idempotency_key, ok, error_type, error, attempts, queued_at, started_at, finished_at, duration, queue_wait,
			raw_arguments, arguments, output)
		SELECT lpad(to_hex(i), 26, '0'), 'tool-' || (i % 20), 'custom', 'agent-' || (i % 1000), 'conversation_agent',
			'conv-' || (i % 10000), CASE WHEN i % 10 = 2 THEN 'key-' || (i / 10) ELSE '' END,
			i % 17 <> 0, CASE WHEN i % 17 = 0 THEN 'execution_error' ELSE '' END,
			CASE WHEN i % 17 = 0 THEN 'it broke' ELSE '' END, 1,
			$1::bigint + i * 1000000, $1::bigint + i * 1000000 + 1000, $1::bigint + i * 1000000 + 21000,
			(i % 5000) * 1000 + 20000, 0,
			'\x7b226d657373616765223a2268656c6c6f227d'::bytea, '\x7b226d657373616765223a2268656c6c6f227d'::bytea,
			'\x7b226d657373616765223a2268656c6c6f227d'::bytea
		FROM generate_series(1::bigint, 1000000) AS i`, t0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE "+calls); err != nil {
		b.Fatal(err)
	}
}
