package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield/httpapi"
)

// serveOn serves h on a loopback port through LimitListener, as wield
// serve does, and returns the address.
func serveOn(t *testing.T, h http.Handler, maxConns int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(httpapi.LimitListener(ln, maxConns, nil))
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// dial opens a raw connection, closed at the test's end.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends a GET on c and returns the status line.
func get(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Status
}

// TestLimitListener holds the bound's connections open, idle: the next one
// is answered 429 and closed at once, and a place freed is taken again.
func TestLimitListener(t *testing.T) {
	addr := serveOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), 3)
	var held []net.Conn
	for range 3 {
		c := dial(t, addr)
		if got := get(t, c); got != "200 OK" {
			t.Fatalf("connection within the bound: %s", got)
		}
		held = append(held, c)
	}
	for range 3 {
		c := dial(t, addr)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		start := time.Now()
		b, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("connection past the bound: %v after %v, want an answer and the end", err, time.Since(start))
		}
		if !strings.HasPrefix(string(b), "HTTP/1.1 429 ") || !strings.Contains(string(b), `"code":"too_many_connections"`) || !strings.Contains(string(b), "3 connections open") {
			t.Errorf("connection past the bound answered %q", b)
		}
	}
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := dial(t, addr)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a place freed by a closed connection was not given again")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLimitListenerUnbounded passes a negative bound through.
func TestLimitListenerUnbounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := httpapi.LimitListener(ln, -1, nil); got != ln {
		t.Errorf("LimitListener(ln, -1) = %T, want ln itself", got)
	}
}
