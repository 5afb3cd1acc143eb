package mcpbridge_test

// A server that floods its client with notifications (issue 19): log
// lines, progress for the call's token and for tokens nobody asked for,
// list_changed during a call and with none pending, many small ones or
// fewer large ones. The call still gets its answer, the importer's heap
// does not keep what the server sent, its goroutines return to what they
// were, and a flood of list_changed costs a few listings, not one each.

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/hostilemcp"
	"github.com/wieldhq/wield/internal/racedetect"
	"github.com/wieldhq/wield/mcpbridge"
)

// floodEnv makes the test binary a flooding stdio MCP server (see
// TestImportFloodStdioServer), its value the flood's options as JSON ([floodOpts]).
const floodEnv = "WIELD_TEST_HOSTILE_FLOOD"

// TestImportFloodStdioServer is not a test: run with floodEnv set, the test
// binary serves a flooding MCP server over stdio, in a process of its own,
// so that what it holds is not counted in the importer's heap.
func TestImportFloodStdioServer(t *testing.T) {
	v, ok := os.LookupEnv(floodEnv)
	if !ok {
		t.Skip("the helper process of TestImportFlood")
	}
	var f floodOpts
	var srv *mcp.Server
	err := json.Unmarshal([]byte(v), &f)
	if err == nil {
		srv, err = hostilemcp.New(hostilemcp.Options{FloodLog: f.Log, FloodProgress: f.Progress,
			FloodListChanged: f.ListChanged, FloodSize: f.Size})
	}
	if err == nil {
		err = srv.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: impNopCloser{os.Stdout}})
	}
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(1)
	}
	os.Exit(0)
}

// floodOpts are the flood options a stdio helper process is given.
type floodOpts struct{ Log, Progress, ListChanged, Size int }

// floodCases are the floods of TestImportFlood: sixty thousand small
// notifications, and three hundred of 256 KiB (75 MiB in all). peak bounds
// the growth of the importer's live heap while the call runs: generous for
// a busy machine (the SDK queues what it reads for a handler that takes
// them one at a time, so some backlog is live: 5 to 40 MiB were measured
// for 100,000 small ones on a loaded 2-core machine), yet below what
// keeping the large flood would take.
var floodCases = []struct {
	name string
	o    hostilemcp.Options
	peak uint64
}{
	{"many", hostilemcp.Options{FloodLog: flood(25_000), FloodProgress: flood(25_000), FloodListChanged: flood(10_000)}, 64 << 20},
	{"large", hostilemcp.Options{FloodLog: flood(100), FloodProgress: flood(100), FloodListChanged: flood(100), FloodSize: 256 << 10}, 64 << 20},
}

// flood is the number of notifications of a flood: n, or a tenth of it
// under the race detector, where each costs about ten times the CPU
// (TestImportFlood's cases and TestRelayFlood took 71 s of a 2-core
// machine there, 2026-11-28). The race detector still sees every path of
// a flood at a tenth; the test command runs both tests again without it,
// at full size, in its memory stage, where their heap figures mean most.
func flood(n int) int {
	if racedetect.Enabled {
		return max(n/10, 1)
	}
	return n
}

// TestImportFlood: over stdio and streamable HTTP, a call during a flood
// (see floodCases and flood)
// completes with its answer, the live heap grows by less than a bound
// while it runs, and the goroutines come back to their number before it.
// Over HTTP the server runs in this process, so its own buffers count
// against the same bound.
func TestImportFlood(t *testing.T) {
	for _, tc := range floodCases {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(tc.name+"/"+transport, func(t *testing.T) {
				reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
				im := impImporter(t, reg, nil)
				cfg := mcpbridge.ServerConfig{Name: "h", Enabled: true, Timeout: 30 * time.Second}
				if transport == "stdio" {
					o, err := json.Marshal(floodOpts{tc.o.FloodLog, tc.o.FloodProgress, tc.o.FloodListChanged, tc.o.FloodSize})
					if err != nil {
						t.Fatal(err)
					}
					cfg.Command = []string{os.Args[0], "-test.run=^TestImportFloodStdioServer$"}
					cfg.Env = map[string]string{floodEnv: string(o)}
				} else {
					cfg.URL = impHostile(t, tc.o).url()
				}
				if err := im.Add(t.Context(), cfg); err != nil {
					t.Fatal(err)
				}
				tool, ok := reg.Tool("h__echo")
				if !ok {
					t.Fatal("h__echo is not registered")
				}
				heap0, gor0 := floodBaseline()
				out, peak := floodCall(t, tool)
				if !bytes.Contains(out, []byte("hostile answered echo")) {
					t.Errorf("the call answered %.300s, want hostile answered echo", out)
				}
				if grew := int64(peak) - int64(heap0); grew > int64(tc.peak) {
					t.Errorf("the live heap grew by %d MiB during the flood (from %d MiB), want under %d MiB",
						grew>>20, heap0>>20, tc.peak>>20)
				}
				t.Logf("live heap %.1f MiB before, %.1f MiB at most during the flood", float64(heap0)/(1<<20), float64(peak)/(1<<20))
				floodGoroutines(t, gor0)
			})
		}
	}
}

// TestImportFloodListChanged: a flood of list_changed, with no call pending
// and during one, is coalesced: the importer lists the server's tools a
// few times, not once a notification, and its tools stay registered.
func TestImportFloodListChanged(t *testing.T) {
	const n = 10_000
	var listed atomic.Int64
	g := impHostile(t, hostilemcp.Options{FloodListChanged: n, FloodIdle: true, Listed: &listed})
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "h", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	tool, ok := reg.Tool("h__echo")
	if !ok {
		t.Fatal("h__echo is not registered")
	}
	_, gor0 := floodBaseline()
	out, _ := floodCall(t, tool)
	if !bytes.Contains(out, []byte("hostile answered echo")) {
		t.Errorf("the call answered %.300s, want hostile answered echo", out)
	}
	floodGoroutines(t, gor0)
	// 2n list_changed were sent (idle, then during the call).
	// Notices that come during a listing ask for one more, whatever their
	// number: one listing per 55 to 76 notices was measured on a loaded
	// 2-core machine.
	if got := listed.Load(); got > 2*n/20 {
		t.Errorf("%d tools/list for %d list_changed, want them coalesced (at most %d)", got, 2*n, 2*n/20)
	} else {
		t.Logf("%d tools/list for %d list_changed", got, 2*n)
	}
	if _, ok := reg.Tool("h__echo"); !ok {
		t.Error("h__echo is no longer registered after the flood")
	}
}

// floodBaseline is the heap in use and the number of goroutines (apart from
// HTTP connections', see floodCount) once the
// garbage is collected.
func floodBaseline() (heap uint64, goroutines floodGor) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	all, conns := floodCount()
	return m.HeapInuse, floodGor{other: all - conns, conns: conns}
}

// floodGor counts goroutines: those of HTTP keep-alive connections, and
// the others.
type floodGor struct{ other, conns int }

// floodCall calls tool, within a minute, and meanwhile measures the live
// heap every 100 ms (heap in use right after a collection: without one,
// the garbage of a busy flood, left for the collector's pace, would be
// counted); it returns the answer and the largest measure.
func floodCall(t *testing.T, tool *wield.Tool) (json.RawMessage, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	peak := make(chan uint64, 1)
	go func() {
		var top uint64
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				peak <- top
				return
			case <-tick.C:
			}
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapInuse)
		}
	}()
	out, err := tool.Handler.Handle(ctx, json.RawMessage(`{}`))
	close(done)
	top := <-peak
	if err != nil {
		t.Fatalf("the call during the flood: %v", err)
	}
	return out, top
}

// floodGoroutines waits, up to 10 s, for the goroutines to come back to
// within a few of n (a finished call's transport may still be closing).
// The goroutines of HTTP keep-alive connections (the client's read and
// write loops, the test server's connection) are counted apart, against a
// bound of their own: over streamable HTTP the importer opens a second
// connection when it lists the tools (list_changed) while the call's
// request is open, and the transport keeps it idle for the next request.
// That pool is bounded by the transport (2 idle connections per host),
// not a leak; anything else left over is. n is the count before the flood
// (floodBaseline), which holds the connections of other tests too.
func floodGoroutines(t *testing.T, n floodGor) {
	t.Helper()
	// Two more idle connections, each with its client read and write
	// loops, server conn and background read.
	const moreConns = 2 * 4
	var got, conns int
	for range 1000 {
		if got, conns = floodCount(); got-conns <= n.other+3 && conns <= n.conns+moreConns {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Errorf("%d goroutines 10 s after the flood (%d of them HTTP connections'), %d before it (%d):\n%s", got, conns, n.other+n.conns, n.conns, buf[:runtime.Stack(buf, true)])
}

// floodCount returns the number of goroutines and, of those, the ones an
// HTTP keep-alive connection holds (net/http's persistConn loops, a
// server's conn.serve and its background read).
func floodCount() (all, conns int) {
	buf := make([]byte, 4<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for g := range strings.SplitSeq(stacks, "\n\n") {
		if g == "" {
			continue
		}
		all++
		if strings.Contains(g, "net/http.(*persistConn).readLoop") || strings.Contains(g, "net/http.(*persistConn).writeLoop") ||
			strings.Contains(g, "net/http.(*conn).serve") || strings.Contains(g, "net/http.(*connReader).backgroundRead") {
			conns++
		}
	}
	return all, conns
}
