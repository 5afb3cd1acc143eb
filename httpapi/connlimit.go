package httpapi

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxConnsPerClient is how many connections [LimitListener] lets
// one IP address hold open when given zero: room for a load test's 256
// clients on loopback, not for a thousand trickling ones.
const DefaultMaxConnsPerClient = 512

// LimitListener returns ln accepting at most max connections open at once
// from one IP address (loopback included; [DefaultMaxConnsPerClient] when
// zero, no bound when negative). A connection past the bound is answered
// 429 with the API's error shape and closed at once, before the server
// reads anything from it: a client cannot hold the server's connections
// (and their goroutines) by opening them faster than they time out.
// Refusals are logged to log (nil: none) at most once a minute per address.
//
// A write to a connection that goes nowhere for 30 s (the client reads
// nothing of what the connection holds, a few MiB) fails, and the
// connection closes: a client that sends requests and reads none
// of the answers cannot hold its connection, nor the goroutine writing to
// it (nor a server's Shutdown, which waits for that goroutine). A deadline
// set on the connection (http.ResponseController.SetWriteDeadline) holds
// when it is earlier. A negative bound leaves writes unbounded too.
//
// Once the listener is closed (http.Server's Shutdown closes it first), the
// bound is a second ([shutdownStall]): a write already waiting on a client
// that stopped reading, and any later one that goes nowhere, fails within
// it, so that Shutdown, which waits for the connection's handler, is not
// held for 30 s. A handler still at work is not cut: its answer, written
// later, goes as long as the client reads it.
func LimitListener(ln net.Listener, max int, log *slog.Logger) net.Listener {
	if max == 0 {
		max = DefaultMaxConnsPerClient
	}
	if max < 0 {
		return ln
	}
	return &limitListener{Listener: ln, max: max, log: log, open: map[netip.Addr]int{}, warned: map[netip.Addr]time.Time{},
		conns: map[*limitConn]struct{}{}}
}

type limitListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu     sync.Mutex
	open   map[netip.Addr]int
	warned map[netip.Addr]time.Time
	conns  map[*limitConn]struct{} // open, for Close to shorten their writes

	closed atomic.Bool // writes are bounded by shutdownStall
}

// Accept returns the next connection within the bound, refusing the others
// on the way.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := connIP(c)
		l.mu.Lock()
		if l.open[ip] >= l.max {
			warn := l.log != nil && time.Since(l.warned[ip]) > time.Minute
			if warn {
				l.warned[ip] = time.Now()
			}
			l.mu.Unlock()
			if warn {
				l.log.Warn("refusing connections: too many open from one address", "client", ip.String(), "max", l.max)
			}
			refuseConn(c, l.max)
			continue
		}
		l.open[ip]++
		if len(l.warned) > 1024 {
			clear(l.warned) // bounded, whatever the addresses
		}
		lc := &limitConn{Conn: c, l: l, ip: ip}
		l.conns[lc] = struct{}{}
		l.mu.Unlock()
		return lc, nil
	}
}

func (l *limitListener) release(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
	if l.open[c.ip]--; l.open[c.ip] <= 0 {
		delete(l.open, c.ip)
	}
}

// Close closes the listener and bounds the writes of its connections by
// shutdownStall from now on, a write already waiting included.
func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closed.Store(true)
	l.mu.Lock()
	conns := make([]*limitConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.shorten(time.Now().Add(shutdownStall))
	}
	return err
}

// stallBound is how long one write may go nowhere: writeStall, or
// shutdownStall once the listener is closed (a connection of none: the
// former).
func (l *limitListener) stallBound() time.Duration {
	if l != nil && l.closed.Load() {
		return min(shutdownStall, writeStall)
	}
	return writeStall
}

// connIP is the remote IP address of c (IPv4 in IPv6 unmapped), or the
// zero address for a connection that is not TCP: all such count together.
func connIP(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// refuseConn answers a refused connection in the API's error shape (the
// client sees why, if it reads) and closes it. The write is bounded: a
// client that does not read costs nothing.
func refuseConn(c net.Conn, max int) {
	body := fmt.Sprintf(`{"error":{"code":"too_many_connections","message":"this address has %d connections open to the server, the most allowed: close some, or reuse them (keep-alive)"}}`+"\n", max)
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	fmt.Fprintf(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	c.Close()
}

// limitConn gives its place back once, however often it is closed, and
// bounds each write by writeStall.
type limitConn struct {
	net.Conn
	l    *limitListener
	ip   netip.Addr
	once sync.Once

	mu       sync.Mutex // serializes the setting of the write deadline
	deadline time.Time  // the write deadline set on the connection; zero: none
	set      time.Time  // the write deadline the connection has now; zero: none
}

// stallChunk is how much of a write goes within one writeStall: the bound
// is on a write that goes nowhere, not on a long answer to a client that
// reads on.
const stallChunk = 64 << 10

// Write writes b a stallChunk at a time, each within writeStall or the
// deadline set on the connection if that comes first. The deadline is set
// under mu, so that one set meanwhile (Close's "now" for an event stream)
// is never put back.
func (c *limitConn) Write(b []byte) (n int, err error) {
	for len(b) > 0 {
		p := b[:min(len(b), stallChunk)]
		c.stall()
		m, err := c.Conn.Write(p)
		n += m
		if err != nil {
			return n, err
		}
		b = b[m:]
	}
	return n, nil
}

// stall puts the write deadline writeStall ahead (or the connection's own,
// if earlier; shutdownStall once the listener is closed). A deadline
// already at most a thirtieth of the bound short of that is left as it
// is: each answer of a keep-alive connection would otherwise move the
// runtime's timer, and a write that goes nowhere still fails within 29 to
// 30 s.
func (c *limitConn) stall() {
	bound := c.l.stallBound()
	d := time.Now().Add(bound)
	c.mu.Lock()
	if !c.deadline.IsZero() && c.deadline.Before(d) {
		d = c.deadline
	}
	if c.set.IsZero() || d.Before(c.set) || d.Sub(c.set) >= bound/30 {
		c.set = d
		_ = c.Conn.SetWriteDeadline(d)
	}
	c.mu.Unlock()
}

// shorten brings the write deadline the connection has now forward to t
// when it is later: a write waiting on it fails by t. With none set, no
// write is under way; the next one's stall sets its own.
func (c *limitConn) shorten(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.set.IsZero() && c.set.After(t) {
		c.set = t
		_ = c.Conn.SetWriteDeadline(t)
	}
}

// SetWriteDeadline sets the deadline that bounds writes besides writeStall.
func (c *limitConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline, c.set = t, t
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline sets the read deadline and the deadline that bounds writes
// besides writeStall.
func (c *limitConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline, c.set = t, t
	return c.Conn.SetDeadline(t)
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// ReadFrom passes on the connection's own, which the HTTP server uses to
// send a file with sendfile(2).
func (c *limitConn) ReadFrom(r io.Reader) (int64, error) {
	c.stall() // for the whole copy: the console's files are small
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// CloseWrite passes on a half-close, which the HTTP server uses to end a
// connection without resetting it.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writeStall bounds one write to a connection of [LimitListener]: a client
// that takes nothing for this long (the connection's buffers full, a few
// MiB) loses the connection. A var for the tests.
var writeStall = 30 * time.Second

// shutdownStall bounds one write once the listener is closed: the server
// shuts down, and a client that stopped reading must not hold it for
// writeStall. A reading client gets a stallChunk well within it.
const shutdownStall = time.Second
