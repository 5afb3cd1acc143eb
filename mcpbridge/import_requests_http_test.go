package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestImportHTTPServerRequestFlood: a streamable HTTP server that answers a
// call with an event stream of 4000 pings of its own (16 KiB each) and
// never takes wield's answers (their posts hang) cannot make wield hold a
// goroutine and a request for each: at most 64 answers wait at once, each
// for at most 10 s, and closing the importer does not wait for ever.
// Before, every ping held a goroutine (11,000 of them, with the server's)
// and Close never returned.
func TestImportHTTPServerRequestFlood(t *testing.T) {
	pad := strings.Repeat("x", 16<<10)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(b, &m)
		switch {
		case m.Method == "": // an answer of wield's: never taken
			<-r.Context().Done()
			return
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
			return
		case m.Method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 4000 {
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"q%d\",\"method\":\"ping\",\"params\":{\"_meta\":{\"pad\":%q}}}\n\n", i, pad)
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"ask","inputSchema":{"type":"object"}}]}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(hs.CloseClientConnections)
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "r", URL: hs.URL, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	tool, ok := reg.Tool("r__ask")
	if !ok {
		t.Fatal("r__ask is not registered")
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { _, _ = tool.Handler.Handle(ctx, []byte(`{}`)); close(done) }()
	var peakG int
	var peakHeap uint64
	for end := false; !end; {
		select {
		case <-done:
			end = true
		case <-time.After(20 * time.Millisecond):
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peakG = max(peakG, runtime.NumGoroutine())
		peakHeap = max(peakHeap, m.HeapInuse)
	}
	// The server's goroutines count too, and each post waiting holds a
	// connection of its own (three goroutines with the server's).
	if grew := peakG - g0; grew > 600 {
		t.Errorf("%d goroutines more while the server flooded 4000 requests", grew)
	}
	if grew := int64(peakHeap) - int64(before.HeapInuse); grew > 48<<20 {
		t.Errorf("heap grew %d MiB while the server flooded 64 MiB of requests", grew>>20)
	}
	closed := make(chan struct{})
	began := time.Now()
	go func() { _ = im.Close(); close(closed) }()
	select {
	case <-closed:
		t.Logf("Close took %v; goroutines +%d, heap +%d MiB", time.Since(began), peakG-g0, (int64(peakHeap)-int64(before.HeapInuse))>>20)
	case <-time.After(20 * time.Second):
		t.Fatal("Close still waits after 20s")
	}
}
