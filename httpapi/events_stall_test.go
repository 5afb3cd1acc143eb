package httpapi

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

// countedWriter counts what a handler writes; Unwrap lets
// http.ResponseController reach the connection's writer.
type countedWriter struct {
	http.ResponseWriter
	n      *atomic.Int64
	writes *atomic.Int64 // nil: not counted
}

func (w countedWriter) Write(b []byte) (int, error) {
	w.n.Add(int64(len(b)))
	if w.writes != nil {
		w.writes.Add(1)
	}
	return w.ResponseWriter.Write(b)
}

func (w countedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// stalledStream opens /v1/events on a server of its own over s's handler
// with a client that reads nothing, and publishes far more than the
// connection's buffers hold (16 MiB in events of 32 KiB; the kernel keeps
// at most a few MiB each side): the stream's writes then wait on the
// client. It returns once the stream has written 1 MiB of them (within
// ten seconds), with a channel closed once the stream's handler has
// returned.
func stalledStream(t *testing.T, s *Server) <-chan struct{} {
	t.Helper()
	returned := make(chan struct{})
	var written atomic.Int64
	h := s.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/events" {
			defer close(returned)
			w = countedWriter{w, &written, nil}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	c, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := c.Write([]byte("GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// The stream is open once its first bytes arrive; reading them takes
	// next to nothing from what follows.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 64)); err != nil {
		t.Fatalf("the stream did not open: %v", err)
	}
	big := strings.Repeat("x", 32<<10)
	bus := s.eng.Bus()
	for range 512 {
		bus.Publish(wield.Event{Type: wield.EventToolUpdated, Tool: "echo", Message: big})
	}
	for i := 0; written.Load() < 1<<20; i++ {
		if i == 1000 {
			t.Fatalf("the stream wrote %d bytes in 10 s, not 1 MiB", written.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return returned
}

// TestEventsStalledClientShutdown: Close ends a stream whose client reads
// nothing at once, even while the stream waits to write to it: one such
// client held wield serve's shutdown for its whole grace period (30 s),
// which then canceled calls it said were "still in flight".
func TestEventsStalledClientShutdown(t *testing.T) {
	s, _ := newTestServer(t, nil)
	returned := stalledStream(t, s)
	s.Close()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream of a client that reads nothing still runs 10 s after Close")
	}
}

// TestEventsStalledClientLetGo: a client that takes nothing the stream
// writes for streamWriteTimeout loses the stream, and the connection, the
// goroutines and the subscription it held are let go, with the server
// running on.
func TestEventsStalledClientLetGo(t *testing.T) {
	old := streamWriteTimeout
	streamWriteTimeout = 300 * time.Millisecond
	t.Cleanup(func() { streamWriteTimeout = old })
	s, _ := newTestServer(t, nil)
	returned := stalledStream(t, s)
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatalf("the event stream of a client that reads nothing still runs 10 s on (write timeout %v)", streamWriteTimeout)
	}
}

// TestEventsBurstOneWrite: the events a stream has at hand go out in one
// write, not one each: 200 events published at once (a busy bus: a call
// publishes two or more) reach the client whole, in order, in far fewer
// writes. Each write is a system call per stream, the most of what a
// stream cost each event.
func TestEventsBurstOneWrite(t *testing.T) {
	s, _ := newTestServer(t, nil)
	var written, writes atomic.Int64
	h := s.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(countedWriter{w, &written, &writes}, r)
	}))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	opened := writes.Load()
	bus := s.eng.Bus()
	for i := range 200 {
		bus.Publish(wield.Event{Type: wield.EventToolUpdated, Tool: fmt.Sprint("t", i)})
	}
	sc := bufio.NewScanner(resp.Body)
	next := 0
	for next < 200 && sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), `"tool":"`); ok {
			if want := fmt.Sprint("t", next); !strings.HasPrefix(rest, want+`"`) {
				t.Fatalf("event %d is %q, want %s", next, sc.Text(), want)
			}
			next++
		}
	}
	if next != 200 {
		t.Fatalf("the stream ended after %d events: %v", next, sc.Err())
	}
	if n := writes.Load() - opened; n > 50 {
		t.Errorf("200 events at hand took %d writes", n)
	}
}
