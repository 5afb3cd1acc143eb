package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wieldhq/wield"
)

// cutMargin is how long, once the grace period is over, the calls it cut
// have to record how they ended and answer their callers, and the engine
// to let them go.
const cutMargin = 2 * time.Second

// serverStopped is the cause given to the calls a shutdown cuts: the
// engine puts it in their results (and records), so a caller and a model
// read why the call ended.
func serverStopped(why string) error {
	return &wield.Error{Type: wield.ErrCanceled, Message: "the server shut down: " + why}
}

// gracePeriod starts the grace period of a shutdown, when the first signal
// (or the end of the command's context) has come. The context it returns
// ends when the period is over, or at once on a second SIGINT or SIGTERM
// (a person pressing Ctrl-C twice wants out); its cause, made by
// serverStopped, says which. hurried reports whether a second signal
// came. release stops watching for signals.
func gracePeriod(d time.Duration, log *slog.Logger) (grace context.Context, hurried func() bool, release func()) {
	ctx, end := context.WithCancelCause(context.Background())
	timer := time.AfterFunc(d, func() { end(serverStopped(fmt.Sprintf("its grace period of %v ended", d))) })
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// second is set before the grace period ends, so that hurried() says
	// true as soon as grace is done (it read a flag set after end, and a
	// caller that looked at once could see false).
	var second atomic.Bool
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case sig := <-sigs:
			name := "SIGTERM"
			if sig == os.Interrupt {
				name = "interrupt (Ctrl-C)"
			}
			log.Warn("shutdown: a second signal: stopping now", "signal", name)
			second.Store(true)
			end(serverStopped("it was stopped at once by a second " + name))
		case <-done:
		}
	}()
	hurried = second.Load
	release = func() {
		signal.Stop(sigs)
		timer.Stop()
		close(done)
		<-watched
	}
	return ctx, hurried, release
}

// closeUnusedOnShutdown makes hs close, when it shuts down, the connections
// on which no request has come yet (and those that open meanwhile):
// net/http's Shutdown waits up to 5 s for such a connection, and HTTP
// clients often dial one more than they use, so an idle server would take
// that long to stop. A connection whose first request is still on its way
// is cut as a new one would be refused.
func closeUnusedOnShutdown(hs *http.Server) {
	u := &unusedConns{conns: map[net.Conn]struct{}{}}
	next := hs.ConnState
	hs.ConnState = func(c net.Conn, s http.ConnState) {
		u.track(c, s)
		if next != nil {
			next(c, s)
		}
	}
	hs.RegisterOnShutdown(u.closeAll)
}

// endMCPStreamsOnShutdown wraps the handler of hs so that, when hs shuts
// down, the MCP streams that stay open as long as their clients want end:
// a session's standing GET stream and a subscriptions/listen. They are no
// calls in flight, and net/http's Shutdown would wait for them the whole
// grace period; their clients reconnect once the server is back. Only the
// requests to the MCP endpoints are touched.
func endMCPStreamsOnShutdown(hs *http.Server) {
	streams, end := context.WithCancel(context.Background())
	hs.RegisterOnShutdown(end)
	next := hs.Handler
	hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.URL.Path == "/mcp" || strings.HasPrefix(r.URL.Path, "/mcp/")) &&
			(r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen") {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(streams, cancel)()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// unusedConns are a server's connections in state new.
type unusedConns struct {
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closing bool
}

func (u *unusedConns) track(c net.Conn, s http.ConnState) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case s != http.StateNew:
		delete(u.conns, c)
	case u.closing:
		c.Close()
	default:
		u.conns[c] = struct{}{}
	}
}

func (u *unusedConns) closeAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closing = true
	for c := range u.conns {
		c.Close()
	}
	clear(u.conns)
}

// drain shuts hs down within the grace period: requests in flight may
// finish until grace ends; those still running then are canceled through
// cancelBase (the cancel of hs's BaseContext) with grace's cause, and have
// cutMargin to record how they ended and answer their callers before their
// connections are closed.
func drain(hs *http.Server, grace context.Context, cancelBase context.CancelCauseFunc, log *slog.Logger) {
	if hs.Shutdown(grace) == nil {
		return
	}
	why := context.Cause(grace)
	log.Warn("shutdown: canceling the calls still in flight", "why", why.Error())
	cancelBase(why)
	cut, cancel := context.WithTimeout(context.Background(), cutMargin)
	defer cancel()
	if hs.Shutdown(cut) != nil {
		hs.Close()
	}
}
