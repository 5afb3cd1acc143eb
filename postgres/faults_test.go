package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/postgres"
)

type faultIn struct {
	Message string `json:"message"`
}

// TestFaultConnectionsTerminated has the store's server connections
// terminated (pg_terminate_backend, from another connection, as an
// administrator or a failover does) again and again while calls run
// through an engine, in sync and async mode. Calls go on: each either is
// acknowledged, or fails as a system error (Call returns an error); no
// acknowledged call is without its record, and once the connections are
// left alone the store works again. Only this test's connections are
// terminated: the store connects with an application_name of its own.
func TestFaultConnectionsTerminated(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the database")
	}
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			schema := postgres.FreshSchema(t)
			var b [6]byte
			_, _ = rand.Read(b[:])
			app := "wield_fault_" + hex.EncodeToString(b[:])
			dsn, err := withAppName(postgres.ServerDSN(), app)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema, Async: async, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					s.Close(context.Background())
				}
			}()
			reg := wield.NewRegistry(nil)
			reg.MustRegister(wield.Func("echo", "Echo a message", func(_ context.Context, in faultIn) (faultIn, error) { return in, nil }))
			lim, err := limit.New(limit.Config{MaxConcurrent: 16})
			if err != nil {
				t.Fatal(err)
			}
			e := engine.New(reg, &engine.Options{Store: s, Limiter: lim, Logger: slog.New(slog.DiscardHandler)})

			var (
				mu     sync.Mutex
				acked  []string
				failed []error
				count  atomic.Int64 // acknowledged calls
				stop   atomic.Bool
			)
			var wg sync.WaitGroup
			for g := range 6 {
				wg.Go(func() {
					args := json.RawMessage(fmt.Sprintf(`{"message":"from %d"}`, g))
					for i := 0; i < 100_000 && !stop.Load() && ctx.Err() == nil; i++ {
						res, err := e.Call(ctx, wield.Call{Tool: "echo", Arguments: args, Caller: wield.ForConversation("agent", fmt.Sprint(g))})
						mu.Lock()
						if err != nil {
							failed = append(failed, err)
						} else {
							acked = append(acked, res.CallID)
							count.Add(1)
						}
						mu.Unlock()
					}
				})
			}
			// waitFor waits until n more calls are acknowledged, at most 60 s.
			waitFor := func(n int64) bool {
				target := count.Load() + n
				for range 6000 {
					if count.Load() >= target {
						return true
					}
					time.Sleep(10 * time.Millisecond)
				}
				return false
			}

			admin, err := pgx.Connect(ctx, postgres.ServerDSN())
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(context.Background())
			const rounds = 5
			terminated := 0
			for round := range rounds {
				if !waitFor(50) {
					stop.Store(true)
					wg.Wait()
					t.Fatalf("round %d: calls stopped being acknowledged (%d so far, %d system errors)", round, count.Load(), len(failed))
				}
				var n int
				err := admin.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()) t`, app).Scan(&n)
				if err != nil {
					t.Fatalf("terminate: %v", err)
				}
				terminated += n
			}
			// The store comes back: calls are acknowledged after the last blow.
			recovered := waitFor(200)
			stop.Store(true)
			wg.Wait()
			if !recovered {
				t.Errorf("calls were not acknowledged again after the connections were terminated (%d acknowledged, %d system errors)", count.Load(), len(failed))
			}
			if terminated == 0 {
				t.Fatalf("no connection of %s was terminated", app)
			}
			if err := e.Close(ctx); err != nil {
				t.Errorf("close engine: %v", err)
			}
			if err := s.Flush(ctx); err != nil {
				t.Errorf("flush: %v", err)
			}
			closed = true
			if err := s.Close(ctx); err != nil {
				t.Errorf("close store: %v", err)
			}
			t.Logf("%d connections terminated in %d rounds; %d calls acknowledged, %d failed as system errors", terminated, rounds, len(acked), len(failed))
			for i, err := range failed {
				if i == 3 {
					break
				}
				t.Logf("system error: %v", err)
			}

			check := postgres.OpenSchema(t, &postgres.Options{Schema: schema})
			missing := 0
			for _, id := range acked {
				r, err := check.Call(context.Background(), id)
				if err != nil || !r.Result.OK {
					missing++
					if missing <= 5 {
						t.Errorf("call %s was acknowledged and has no record (%v)", id, err)
					}
				}
			}
			if missing > 0 {
				t.Errorf("%d of %d acknowledged calls have no record", missing, len(acked))
			}
		})
	}
}

// withAppName returns dsn with application_name set, so that the test
// can tell its store's connections from everyone else's.
func withAppName(dsn, app string) (string, error) {
	if _, err := pgx.ParseConfig(dsn); err != nil {
		return "", err
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "application_name=" + app, nil
}
