package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServePprof: --pprof serves the profiles on a loopback address and
// refuses any other.
func TestServePprof(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060", "nonsense"} {
		if _, err := servePprof(t.Context(), addr, log); err == nil {
			t.Errorf("--pprof %s: no error, want it refused", addr)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	bound, err := servePprof(ctx, "127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get("http://" + bound + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "heap profile") {
		t.Errorf("GET /debug/pprof/heap = %d %.100q, want the heap profile", res.StatusCode, b)
	}
	cancel()
	// The listener closes on a goroutine of its own: poll, at most 5 s.
	for range 500 {
		http.DefaultClient.CloseIdleConnections()
		if _, err = http.Get("http://" + bound + "/debug/pprof/"); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err == nil {
		t.Error("the profiles are still served once the context ended")
	}
}
