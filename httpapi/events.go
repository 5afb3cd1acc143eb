package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// eventTypes are the types a stream may be filtered by.
var eventTypes = map[wield.EventType]bool{
	wield.EventToolLoaded: true, wield.EventToolAdded: true, wield.EventToolUpdated: true,
	wield.EventToolRemoved: true, wield.EventToolShadowed: true, wield.EventToolHeld: true, wield.EventReloadStarted: true,
	wield.EventReloadCompleted: true, wield.EventLoadError: true, wield.EventValidationError: true,
	wield.EventExecutionStarted: true, wield.EventExecutionCompleted: true, wield.EventExecutionFailed: true,
	wield.EventPermissionRequested: true, wield.EventPermissionDecided: true, wield.EventExecutionProgress: true,
}

// events answers GET /v1/events with a Server-Sent Events stream:
//
//	id: 0ke1x6ajm8c1q3n4w7yq2b5d9fh
//	event: execution_completed
//	data: {"id":"0ke1x6ajm8c1q3n4w7yq2b5d9fh","type":"execution_completed","tool":"echo",...}
//
// Filters: type (repeatable or comma-separated), conversation, tool. A
// key scoped to toolsets gets the events of its tools only, and no caller
// gets an event naming a tool the policies hide from it (see eventShown):
// the filters run on the stream's goroutine, never stalling the bus. Event
// IDs are unique across restarts and servers and increase along a stream
// (see [wield.Event]). A client that reconnects with Last-Event-ID (or
// ?last_event_id=) gets the events it missed that the bus still holds;
// ": lost N" says how many it cannot get, and a bare ": lost" that the
// server cannot tell, because it does not hold the event resumed after (an
// ID from before a restart, from another server, older than the bus keeps,
// or not an event ID): the stream then goes on with the held events that
// came after that ID, then live ones. An idle stream gets a ": ping"
// comment every heartbeat. A client holds at most MaxStreamsPerClient
// streams, and loses one it takes nothing of for streamWriteTimeout.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	bus := s.eng.Bus()
	if bus == nil {
		return apiError(http.StatusNotFound, CodeNotFound, "this server publishes no events")
	}
	q := r.URL.Query()
	types := map[wield.EventType]bool{}
	for _, v := range q["type"] {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			if !eventTypes[wield.EventType(t)] {
				return apiError(http.StatusBadRequest, CodeBadRequest, "unknown event type '"+t+"'")
			}
			types[wield.EventType(t)] = true
		}
	}
	conv, tool := q.Get("conversation"), q.Get("tool")
	scope := s.scope(r)
	if tool != "" && !inScope(scope, tool) {
		return outOfScope(tool)
	}
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = q.Get("last_event_id")
	}
	shown := s.eventShown(r)
	filter := func(e *wield.Event) bool {
		return (len(types) == 0 || types[e.Type]) &&
			(conv == "" || e.ConversationID == conv) &&
			(tool == "" || e.Tool == tool) &&
			(e.Tool == "" || inScope(scope, e.Tool)) &&
			(shown == nil || shown(e))
	}
	release, err := s.streams.hold(r)
	if err != nil {
		return err
	}
	defer release()
	sub, exact := bus.SubscribeAfter(last, filter)
	defer sub.Close()

	ctx, cancel := context.WithCancel(r.Context())
	rc := http.NewResponseController(w)
	// Close ends the stream at once, a write under way included: a write
	// to a client that reads nothing would wait for its deadline, and
	// http.Server.Shutdown for the stream. The watcher is done before the
	// handler returns, so that it never sets the deadline of a connection
	// that has gone on to another request.
	// The stream ends cleanly when it can: the handler returns at once,
	// and the server writes the stream's last chunk; only a write still
	// under way after streamCloseGrace (a client that reads nothing) is
	// cut.
	watched, returned := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-s.done:
			cancel()
			t := time.NewTimer(streamCloseGrace)
			defer t.Stop()
			select {
			case <-returned:
			case <-t.C:
				_ = rc.SetWriteDeadline(time.Now())
			}
		case <-ctx.Done():
		}
	}()
	defer func() {
		cancel()
		close(returned)
		<-watched
		select {
		case <-s.done: // the connection closes once the stream has ended
		default:
			// A stream that ended otherwise leaves its connection, which
			// may serve another request, without its deadline.
			_ = rc.SetWriteDeadline(time.Time{})
		}
	}()
	// send writes b within streamWriteTimeout, and reports whether the
	// stream goes on. The deadline is set before ctx is looked at: once
	// Close has set its own (now), a later one is never written under.
	send := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if ctx.Err() != nil {
			return false
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The retry hint and a first comment let the client see the stream is
	// open before any event.
	open := "retry: 2000\n: connected\n\n"
	if !exact {
		open += ": lost\n\n"
	}
	if !send([]byte(open)) {
		return nil
	}
	var lost int64
	// appendEvent appends e to buf as the stream writes it, after a note
	// of the events the subscription lost before it.
	appendEvent := func(buf []byte, e *wield.Event) []byte {
		if n := sub.Lost(); n > lost {
			buf = append(buf, ": lost "...)
			buf = strconv.AppendInt(buf, n-lost, 10)
			buf = append(buf, "\n\n"...)
			lost = n
		}
		data, err := jsonenc.Marshal(e)
		if err != nil {
			return buf // an event always marshals
		}
		buf = append(buf, "id: "...)
		buf = append(buf, e.ID...) // the bus's own: letters and digits
		// A type is one line, or none: an event relayed from another
		// server (redis share_events) has the type the channel gave it,
		// and one holding a line break would write lines of its own into
		// the stream. Its data says what it was.
		if !strings.ContainsAny(string(e.Type), "\r\n") {
			buf = append(buf, "\nevent: "...)
			buf = append(buf, e.Type...)
		}
		buf = append(buf, "\ndata: "...)
		buf = append(buf, data...)
		return append(buf, "\n\n"...)
	}
	// now is a context already done: Next with it returns an event the
	// subscription has at hand, and waits for none.
	now, stop := context.WithCancel(context.Background())
	stop()
	buf := make([]byte, 0, 512)
	for {
		hctx, hcancel := context.WithTimeout(ctx, s.heartbeat)
		e, err := sub.Next(hctx)
		hcancel()
		buf = buf[:0]
		switch {
		case err == nil:
			buf = appendEvent(buf, &e)
			// The events at hand go in the same write: a burst costs each
			// stream a write, not one per event (a call publishes two or
			// more at once).
			for len(buf) < sseBatch {
				e, err := sub.Next(now)
				if err != nil {
					break
				}
				buf = appendEvent(buf, &e)
			}
		case ctx.Err() != nil, errors.Is(err, wield.ErrClosed):
			return nil
		default: // the heartbeat's time is up
			buf = append(buf, ": ping\n\n"...)
		}
		if !send(buf) {
			return nil
		}
	}
}

// sseBatch is how much of the events at hand an event stream gathers
// into one write.
const sseBatch = 32 << 10

// streamWriteTimeout bounds one write to an event stream: a client that
// takes nothing for this long (its connection's buffers full, a few MiB)
// loses the stream, and with it the connection, the goroutines and the
// subscription it held. A var for the tests.
var streamWriteTimeout = 30 * time.Second

// streamCloseGrace is how long Close lets a stream's write under way go
// on before it cuts it: time to end the stream cleanly with its last
// chunk, where the client reads.
const streamCloseGrace = 500 * time.Millisecond

// DefaultMaxStreamsPerClient is how many event streams one client holds
// open at once when [Options.MaxStreamsPerClient] is zero: a console tab
// holds one. Every stream costs every event published its own filtering,
// encoding and write: 500 from one client made each call some 100 times
// slower (2 shared cores).
const DefaultMaxStreamsPerClient = 32

// streamBound counts the event streams each client holds.
type streamBound struct {
	max  int // no bound when negative
	mu   sync.Mutex
	open map[string]int
}

// hold takes a place for a stream of r's client, and returns what gives it
// back; past the bound it is a 429 that says so.
func (b *streamBound) hold(r *http.Request) (release func(), err error) {
	if b.max < 0 {
		return func() {}, nil
	}
	who, what := "", "address"
	if k := KeyFrom(r.Context()); k != nil {
		who, what = "key:"+k.ID, "API key"
	} else if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		if ip, err := netip.ParseAddr(host); err == nil {
			who = ip.Unmap().String()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open[who] >= b.max {
		return nil, apiError(http.StatusTooManyRequests, CodeTooManyStreams, fmt.Sprintf(
			"this %s has %d event streams open, the most allowed: close one (each console tab holds one)", what, b.max))
	}
	if b.open == nil {
		b.open = map[string]int{}
	}
	b.open[who]++
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.open[who]--; b.open[who] <= 0 {
			delete(b.open, who)
		}
	}, nil
}
