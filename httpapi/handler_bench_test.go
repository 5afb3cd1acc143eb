package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/internal/racedetect"
)

// sinkWriter is a ResponseWriter that keeps nothing: what a handler costs
// without the network.
type sinkWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *sinkWriter) Header() http.Header         { return w.h }
func (w *sinkWriter) WriteHeader(code int)        { w.status = code }
func (w *sinkWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

// BenchmarkCallHandler measures POST /v1/tools/echo/call in process,
// without a network, records or logs, beside the plain handler of
// BenchmarkServeEcho: what differs is the API's own work (routing, the
// key and body checks, decoding, the call's checks, the answer, the
// request metrics) and the engine's. The rest of a call's cost in `wield
// serve` (HTTP, the record, the log line) is BenchmarkServeEcho's.
func BenchmarkCallHandler(b *testing.B) {
	body := []byte(`{"arguments":{"message":"hello"},"caller":{"conversation_id":"bench"}}`)
	run := func(b *testing.B, h http.Handler) {
		b.ReportAllocs()
		w := &sinkWriter{h: http.Header{}}
		rd := bytes.NewReader(body)
		req, err := http.NewRequest("POST", "http://127.0.0.1/v1/tools/echo/call", rd)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for b.Loop() {
			rd.Reset(body)
			r := *req
			r.Body = io.NopCloser(rd)
			clear(w.h)
			w.status = 0
			h.ServeHTTP(w, &r)
			if w.status != http.StatusOK && w.status != 0 {
				b.Fatalf("status %d", w.status)
			}
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, http.HandlerFunc(referenceHandler)) })
	b.Run("wield", func(b *testing.B) { run(b, echoHandler(b)) })
}

// echoHandler is a server's handler of echo with no records and no log
// lines (see BenchmarkCallHandler).
func echoHandler(tb testing.TB) http.Handler {
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo())
	m := NewMetrics()
	discard := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store := nopStore{}
	eng := engine.New(reg, &engine.Options{Store: m.Observe(store, discard), Logger: discard})
	tb.Cleanup(func() { eng.Close(context.Background()) })
	s, err := New(Options{Engine: eng, Store: store, Metrics: m, Logger: discard})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s.Handler()
}

// TestCallHandlerAllocs holds the REST call's own allocations (counted,
// as steady as the code where time is not on a shared machine): the body
// is read into a pooled buffer, the answer encoded into one, and jsondec
// decodes into the caller's value instead of a copy: 12 → 9 allocations
// an echo call (2026-11-28). What is left: the request's status writer,
// the call request, the tool's input and a copy of the arguments, the
// engine's call, the normalised arguments, the tool's output and its
// decoded message. net/http's own (the request, its headers, the answer's
// headers) come on top in a server.
func TestCallHandlerAllocs(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("the race detector's sync.Pool drops a share of what is put back: allocation counts measure it, not the code")
	}
	h := echoHandler(t)
	body := []byte(`{"arguments":{"message":"hello"},"caller":{"conversation_id":"bench"}}`)
	rd := bytes.NewReader(body)
	req, err := http.NewRequest("POST", "http://127.0.0.1/v1/tools/echo/call", rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	rb := io.NopCloser(rd)
	r := *req
	w := &sinkWriter{h: http.Header{}}
	n := testing.AllocsPerRun(200, func() {
		rd.Reset(body)
		r = *req
		r.Body = rb
		clear(w.h)
		w.status, w.n = 0, 0
		h.ServeHTTP(w, &r)
		if w.status != http.StatusOK || w.n == 0 {
			t.Fatalf("status %d, %d bytes", w.status, w.n)
		}
	})
	t.Logf("allocations per call: %.0f", n)
	const most = 9
	if n > most {
		t.Errorf("POST /v1/tools/echo/call makes %.0f allocations in process, want at most %d", n, most)
	}
}

// nopStore keeps no record: the REST layer and the engine alone. Only
// Save is ever called on a call of echo.
type nopStore struct{ wield.Storage }

func (nopStore) Save(context.Context, *wield.Record) error { return nil }
