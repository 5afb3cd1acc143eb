package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// referenceHandler is a plain net/http JSON handler of the same shape as
// a call of echo: decode the arguments, answer them back in a result.
func referenceHandler(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var args struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(req.Arguments, &args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, _ := json.Marshal(args)
	writeJSON(w, http.StatusOK, struct {
		CallID string          `json:"call_id"`
		Tool   string          `json:"tool"`
		OK     bool            `json:"ok"`
		Output json.RawMessage `json:"output"`
	}{wield.NewID(), "echo", true, out})
}

// echoServer serves echo over the API with SQLite records in sync or async
// mode, as `wield serve` does without configuration (the default limiter,
// metrics included, logs discarded).
func echoServer(b *testing.B, async bool) http.Handler {
	b.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "w.db"), &sqlite.Options{Async: async})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close(context.Background()) })
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo())
	m := NewMetrics()
	discard := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	eng := engine.New(reg, &engine.Options{Store: m.Observe(store, discard), Logger: discard})
	b.Cleanup(func() { eng.Close(context.Background()) })
	s, err := New(Options{Engine: eng, Store: store, Metrics: m, Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s.Handler()
}

// benchClient is a client with room for every concurrent connection.
func benchClient(clients int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2}}
}

// load sends n calls of echo to url from the given number of concurrent
// clients and returns how long they took together.
func load(b *testing.B, client *http.Client, url string, clients, n int) time.Duration {
	body := []byte(`{"arguments":{"message":"hello"},"caller":{"conversation_id":"bench"}}`)
	start := time.Now()
	var wg sync.WaitGroup
	for g := range clients {
		share := n / clients
		if g < n%clients {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range share {
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkServeEcho measures POST /v1/tools/echo/call at 8 and 64
// concurrent clients, with records in SQLite in sync and in async mode,
// beside a plain net/http JSON handler measured in the same run: the two
// take turns in chunks of requests, so that a machine shared with other
// work slows both alike, and x_reference is wield's throughput as a
// fraction of the reference's (the time the reference took for the same
// requests over the time wield took). ns/op is wield's alone.
func BenchmarkServeEcho(b *testing.B) {
	for _, clients := range []int{8, 64} {
		for _, mode := range []string{"sync", "async"} {
			b.Run(fmt.Sprintf("%s/clients=%d", mode, clients), func(b *testing.B) {
				ref := httptest.NewServer(http.HandlerFunc(referenceHandler))
				defer ref.Close()
				srv := httptest.NewServer(echoServer(b, mode == "async"))
				defer srv.Close()
				refClient, client := benchClient(clients), benchClient(clients)
				defer refClient.CloseIdleConnections()
				defer client.CloseIdleConnections()
				refURL, url := ref.URL+"/v1/tools/echo/call", srv.URL+"/v1/tools/echo/call"
				// Warm both up: connections, the database, the workers.
				load(b, refClient, refURL, clients, clients*4)
				load(b, client, url, clients, clients*4)
				chunk := clients * 16
				var refTime, wieldTime time.Duration
				b.ReportAllocs()
				b.ResetTimer()
				for done := 0; done < b.N; done += chunk {
					n := min(chunk, b.N-done)
					wieldTime += load(b, client, url, clients, n)
					b.StopTimer()
					refTime += load(b, refClient, refURL, clients, n)
					b.StartTimer()
				}
				b.ReportMetric(float64(refTime)/float64(wieldTime), "x_reference")
			})
		}
	}
}
