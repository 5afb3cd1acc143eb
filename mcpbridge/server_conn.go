package mcpbridge

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
)

// WatchConns makes hs's HTTP/1.1 connections, accepted from the listener
// it returns (ln's), watch for their client going away on behalf of the
// fast path's calls, once a connection instead of once a call: hs must
// then serve from the returned listener, and its ConnContext (kept, if
// set) is wrapped. Without it a session's tools/call watches its request's
// context (context.AfterFunc), which cost ~2% of a default server's CPU
// and five allocations of every call.
//
// What ends a request's context while its handler runs, net/http's
// promise for HTTP/1.1, is watched the same way: the connection's reading
// failing other than by a deadline (net/http reads ahead once the body is
// read, and cancels the request's context when that read fails: the client
// closed or reset the connection), and the end of the server's base
// context (hs.BaseContext, the context ConnContext is given). HTTP/2 and a
// request of a connection not accepted through the returned listener keep
// the request's own watch.
func WatchConns(hs *http.Server, ln net.Listener) net.Listener {
	next := hs.ConnContext
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if next != nil {
			ctx = next(ctx, c)
		}
		if nc, ok := c.(interface{ NetConn() net.Conn }); ok { // a *tls.Conn
			c = nc.NetConn()
		}
		w, ok := c.(*srvConn)
		if !ok {
			return ctx
		}
		w.mu.Lock()
		if !w.closed {
			w.stopBase = context.AfterFunc(ctx, w.fail)
		}
		w.mu.Unlock()
		return context.WithValue(ctx, srvConnKey{}, w)
	}
	return &srvListener{ln}
}

type srvListener struct{ net.Listener }

func (l *srvListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &srvConn{Conn: c}, nil
}

// srvConnKey is the context key of a request's srvConn.
type srvConnKey struct{}

// srvConn is a connection accepted through WatchConns's listener: it
// holds the fast path's call its current request runs (one at a time on
// HTTP/1.1), and tells it when the connection fails.
type srvConn struct {
	net.Conn
	// failed: reading failed other than by a deadline, or the server's
	// base context ended. Set before call is read, and call set before
	// failed is read, so that a failure and a call starting at once meet
	// on one side or the other.
	failed atomic.Bool
	call   atomic.Pointer[srvFastCtx]

	mu       sync.Mutex
	closed   bool
	stopBase func() bool
}

func (c *srvConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	// A deadline is how net/http stops its read ahead when a request ends
	// (and how its timeouts end a read): not the client going away.
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		c.fail()
	}
	return n, err
}

func (c *srvConn) Close() error {
	c.mu.Lock()
	c.closed = true
	if c.stopBase != nil {
		c.stopBase()
		c.stopBase = nil
	}
	c.mu.Unlock()
	return c.Conn.Close()
}

// CloseWrite passes on a half-close, which the HTTP server uses to end a
// connection without resetting it (after a 413, say, so that the client
// reads the answer instead of a reset).
func (c *srvConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom passes on the connection's own, which the HTTP server uses to
// send a file with sendfile(2).
func (c *srvConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// fail marks the connection failed and tells its call, if one runs.
func (c *srvConn) fail() {
	c.failed.Store(true)
	if call := c.call.Load(); call != nil {
		call.requestEnded()
	}
}

// watch has the connection tell call of its failure until unwatch.
func (c *srvConn) watch(call *srvFastCtx) {
	c.call.Store(call)
	if c.failed.Load() {
		call.requestEnded()
	}
}

func (c *srvConn) unwatch(call *srvFastCtx) { c.call.CompareAndSwap(call, nil) }

// srvConnOf is the srvConn that r came in on, when it can watch r: an
// HTTP/1.x request on a connection from WatchConns's listener.
func srvConnOf(r *http.Request) *srvConn {
	if r.ProtoMajor != 1 {
		return nil
	}
	c, _ := r.Context().Value(srvConnKey{}).(*srvConn)
	return c
}
