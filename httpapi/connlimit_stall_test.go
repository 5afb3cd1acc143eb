package httpapi

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLimitListenerWriteStall: a client that sends requests and reads
// nothing of the answers (here one of 16 MiB, far more than the
// connection's buffers) cannot hold its connection and the handler's
// goroutine: a write it takes nothing of for writeStall fails, and the
// connection closes. Without it the handler waited forever, and wield
// serve's shutdown for its whole grace period.
func TestLimitListenerWriteStall(t *testing.T) {
	old := writeStall
	writeStall = 300 * time.Millisecond
	t.Cleanup(func() { writeStall = old })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	big := []byte(strings.Repeat("x", 16<<20))
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	select {
	case err := <-wrote:
		if err == nil {
			t.Error("16 MiB were written to a client that reads nothing")
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the answer to a client that reads nothing is still being written 10 s on (write stall %v)", writeStall)
	}
}

// TestLimitListenerWriteDeadline: a deadline the server sets (an event
// stream's, or Close's "now") holds when it is earlier than the stall's.
func TestLimitListenerWriteDeadline(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	l := &limitListener{max: 1, open: map[netip.Addr]int{}}
	c := &limitConn{Conn: a, l: l}
	defer c.Close()
	if err := c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Write([]byte("nobody reads this")); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a write nobody read succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write past its deadline still waits 10 s on")
	}
}

// TestLimitListenerSlowReader: a client that reads on gets an answer whole
// however long it takes in all: the bound is on each part of a write, not
// on the whole (here an answer of 16 MiB, written at once, read 64 KiB
// every 10 ms, takes some 3 s, three times the stall).
func TestLimitListenerSlowReader(t *testing.T) {
	old := writeStall
	writeStall = time.Second
	t.Cleanup(func() { writeStall = old })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const size = 16 << 20
	big := []byte(strings.Repeat("x", size))
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write(big)
	})}
	go hs.Serve(LimitListener(ln, 0, nil))
	t.Cleanup(func() { hs.Close() })

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(16 << 10)
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := 0
	buf := make([]byte, 64<<10)
	for {
		n, err := io.ReadFull(resp.Body, buf)
		got += n
		if err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got != size {
		t.Errorf("a client reading 64 KiB every 10 ms got %d bytes of %d", got, size)
	}
}

// deadlineCounter is a net.Conn that counts the write deadlines set on it.
type deadlineCounter struct {
	net.Conn
	sets int
	last time.Time
}

func (c *deadlineCounter) Write(b []byte) (int, error) { return len(b), nil }
func (c *deadlineCounter) SetWriteDeadline(t time.Time) error {
	c.sets++
	c.last = t
	return nil
}

// TestLimitConnDeadlineKept: the answers of a keep-alive connection, one
// write each, do not each move the write deadline (a timer of the
// runtime's, on the serving path of every call): one set covers the
// writes of a thirtieth of writeStall, and a deadline the handler sets
// still comes first.
func TestLimitConnDeadlineKept(t *testing.T) {
	dc := &deadlineCounter{}
	c := &limitConn{Conn: dc}
	for range 1000 {
		if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	if dc.sets != 1 {
		t.Fatalf("1,000 answers set the write deadline %d times, want 1", dc.sets)
	}
	if d := time.Until(dc.last); d < writeStall-time.Minute/60 || d > writeStall {
		t.Fatalf("the write deadline is %v ahead, want about %v", d, writeStall)
	}
	soon := time.Now().Add(time.Second)
	c.SetWriteDeadline(soon)
	c.Write([]byte("x"))
	if !dc.last.Equal(soon) {
		t.Fatalf("after the handler's deadline %v a write set %v", soon, dc.last)
	}
	c.SetWriteDeadline(time.Time{})
	c.Write([]byte("x"))
	if dc.last.IsZero() || time.Until(dc.last) < writeStall-time.Second {
		t.Fatalf("with the handler's deadline cleared a write set %v", dc.last)
	}
}
