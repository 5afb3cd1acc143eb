package httpapi

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLimitListenerShutdownStalledWrite: a client that stopped reading an
// answer (16 MiB, far more than the connection's buffers) just before the
// server shuts down does not hold the shutdown for writeStall (30 s): once
// the listener is closed, a write that goes nowhere fails within a second
// or so, and http.Server.Shutdown returns.
func TestLimitListenerShutdownStalledWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	wrote := make(chan error, 1)
	big := []byte(strings.Repeat("x", 16<<20))
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		_, err := w.Write(big)
		wrote <- err
	})}
	go hs.Serve(LimitListener(ln, 0, nil))
	t.Cleanup(func() { hs.Close() })

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	<-started
	time.Sleep(300 * time.Millisecond) // the buffers fill; the write waits

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	start := time.Now()
	go func() { shut <- hs.Shutdown(ctx) }()
	select {
	case err := <-shut:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		t.Logf("Shutdown returned %v after it began", time.Since(start))
	case <-time.After(8 * time.Second):
		t.Fatalf("Shutdown still waits 8 s on for a write to a client that reads nothing (write stall %v)", writeStall)
	}
	select {
	case err := <-wrote:
		if err == nil {
			t.Error("16 MiB were written to a client that reads nothing")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler still writes 5 s after Shutdown returned")
	}
}

// TestLimitListenerShutdownKeepsCalls: what the shutdown cuts is a write
// that goes nowhere, not a call in flight. A request on a keep-alive
// connection that already carried an answer (so a write deadline was set
// on it) is still running when Shutdown begins; it answers 2 s later, 1
// MiB, to a client that reads slowly but on, and the client gets it all.
func TestLimitListenerShutdownKeepsCalls(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	big := []byte(strings.Repeat("y", size))
	slow := make(chan struct{})
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(slow)
			time.Sleep(2 * time.Second)
			w.Header().Set("Content-Length", strconv.Itoa(size))
			w.Write(big)
			return
		}
		io.WriteString(w, "ok")
	})}
	go hs.Serve(LimitListener(ln, 0, nil))
	t.Cleanup(func() { hs.Close() })

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(16 << 10)
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	if _, err := c.Write([]byte("GET /first HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if _, err := c.Write([]byte("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	<-slow
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(ctx) }()

	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the call in flight at the shutdown: %v", err)
	}
	got := 0
	buf := make([]byte, 32<<10)
	for {
		n, err := io.ReadFull(resp.Body, buf)
		got += n
		if err != nil {
			break
		}
		time.Sleep(20 * time.Millisecond) // slow, about 1.6 MiB/s, but on
	}
	resp.Body.Close()
	if got != size {
		t.Errorf("the call in flight at the shutdown answered %d bytes of %d", got, size)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Shutdown still waits 10 s after the call answered")
	}
}
