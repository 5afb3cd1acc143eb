package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/sqlite"
)

// loadCalls is how many calls TestLoad makes: WIELD_LOAD_CALLS, else
// 20,000 (scripts/load runs 200,000; scripts/soak runs for a duration).
func loadCalls(t *testing.T) int {
	if s := os.Getenv("WIELD_LOAD_CALLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("WIELD_LOAD_CALLS=%q is not a positive number", s)
		}
		return n
	}
	return 20000
}

// TestLoad runs the whole server (as main runs it) in this process and
// puts 256 concurrent clients on it: every call must succeed, every
// acknowledged call must have its record, and memory and goroutines must
// stay flat from the first quarter of the load to the end.
// WIELD_SOAK=10m turns it into a soak: the same load for that long.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	total := loadCalls(t)
	var soak time.Duration
	if s := os.Getenv("WIELD_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("WIELD_SOAK=%q: %v", s, err)
		}
		soak = d
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "load.db")
	t.Setenv("XDG_STATE_HOME", dir)
	// The limiter queues everything the clients send at once: a rejection
	// (back-pressure, when the queue is full) would be intended, and this
	// test wants none.
	cfg := filepath.Join(dir, "wield.yaml")
	if err := os.WriteFile(cfg, []byte("concurrency: {max: 16, queue_size: 1024, queue_timeout: 60s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	server := launchServe(t, []string{"serve", "--config", cfg, "--addr", "127.0.0.1:0", "--db", "sqlite:" + db,
		"--keys", filepath.Join(dir, "keys.json"), "--log-level", "warn"})
	base := server.url

	const clients = 256
	conv := "load-" + wield.NewID()
	body := fmt.Sprintf(`{"arguments":{"message":"hello, load"},"caller":{"id":"load","type":"direct","conversation_id":%q}}`, conv)
	transport := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	client := &http.Client{Transport: transport, Timeout: 60 * time.Second}
	defer transport.CloseIdleConnections()
	var next, acked atomic.Int64
	var failures atomic.Int64
	// Latencies, in microseconds, of one call in 16 (bounded memory).
	var latMu sync.Mutex
	var lat []int64
	errorsByType := map[string]int{}
	type sample struct {
		goroutines int
		heap       uint64
	}
	var samples []sample
	var sampleMu sync.Mutex
	take := func() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		sampleMu.Lock()
		samples = append(samples, sample{runtime.NumGoroutine(), ms.HeapInuse})
		sampleMu.Unlock()
	}
	start := time.Now()
	more := func() bool {
		if soak > 0 {
			return time.Since(start) < soak
		}
		return next.Add(1) <= int64(total)
	}
	quarter := int64(total / 4)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for n := 0; more(); n++ {
				t0 := time.Now()
				resp, err := client.Post(base+"/v1/tools/echo/call", "application/json", strings.NewReader(body))
				if err != nil {
					latMu.Lock()
					errorsByType["transport"]++
					latMu.Unlock()
					failures.Add(1)
					if failures.Load() <= 3 {
						t.Errorf("call: %v", err)
					}
					continue
				}
				var res struct {
					OK        bool   `json:"ok"`
					Error     string `json:"error"`
					ErrorType string `json:"error_type"`
				}
				err = json.NewDecoder(resp.Body).Decode(&res)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n%16 == 0 {
					latMu.Lock()
					lat = append(lat, time.Since(t0).Microseconds())
					latMu.Unlock()
				}
				if err != nil || resp.StatusCode != 200 || !res.OK {
					latMu.Lock()
					switch {
					case res.ErrorType != "":
						errorsByType[res.ErrorType]++
					default:
						errorsByType[fmt.Sprintf("http %d", resp.StatusCode)]++
					}
					latMu.Unlock()
					failures.Add(1)
					if failures.Load() <= 3 {
						t.Errorf("call: status %d, %v, %q", resp.StatusCode, err, res.Error)
					}
					continue
				}
				if n := acked.Add(1); soak == 0 && quarter > 0 && n%quarter == 0 {
					take()
				} else if soak > 0 && n%20000 == 0 {
					take()
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	transport.CloseIdleConnections()
	if code := server.stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, server.stderr.String())
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return time.Duration(lat[min(len(lat)-1, int(p*float64(len(lat))))]) * time.Microsecond
	}
	t.Logf("%d calls at %d clients in %s: %.0f calls/s, latency p50 %s p99 %s, errors by type %v", acked.Load(), clients, elapsed.Round(time.Millisecond),
		float64(acked.Load())/elapsed.Seconds(), pct(0.50), pct(0.99), errorsByType)
	if failures.Load() > 0 {
		t.Errorf("%d calls failed", failures.Load())
	}

	// Memory and goroutines stay flat: the last sample against the first.
	if len(samples) >= 2 {
		first, last := samples[0], samples[len(samples)-1]
		t.Logf("goroutines %d → %d, heap in use %d KiB → %d KiB", first.goroutines, last.goroutines, first.heap>>10, last.heap>>10)
		if last.goroutines > first.goroutines+32 {
			t.Errorf("goroutines grew from %d to %d", first.goroutines, last.goroutines)
		}
		if last.heap > 2*first.heap+32<<20 {
			t.Errorf("heap in use grew from %d KiB to %d KiB", first.heap>>10, last.heap>>10)
		}
	}

	// Every acknowledged call has its record (the server is closed: its
	// records were flushed).
	store, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(context.Background())
	sum, err := store.Summary(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("records: %d acknowledged, %d recorded", acked.Load(), sum.TotalCalls)
	if int64(sum.TotalCalls) != acked.Load() {
		t.Errorf("%d calls acknowledged, %d recorded", acked.Load(), sum.TotalCalls)
	}
}
