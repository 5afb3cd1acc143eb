package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
)

// The bounds of HTTP sessions when [ServerOptions] leaves them zero. A
// session costs the go-sdk a goroutine and about 8 KB of live memory, some
// 20 KB of a process's RSS with the collector's headroom; without bounds, a
// client looping on initialize holds memory until the server dies.
const (
	// DefaultSessionTimeout is how long a session may stay idle.
	DefaultSessionTimeout = 10 * time.Minute
	// DefaultMaxSessions bounds the sessions open at once, on every
	// endpoint together: about 100 MB at most.
	DefaultMaxSessions = 5000
	// DefaultMaxSessionsPerClient bounds the sessions one client has open.
	DefaultMaxSessionsPerClient = 100
)

// CodeSessionLimit is the JSON-RPC error code of a new session refused
// because a bound of [ServerOptions] is reached (HTTP 429 for the client's
// bound, 503 for the server's). It is in the range JSON-RPC leaves to
// servers.
const CodeSessionLimit = -32029

// srvSessions are the HTTP sessions of a server, on every endpoint: how
// many each client has, when each was last used, and the sweep that closes
// idle ones. The go-sdk's own idle timer is not used: the fast path answers
// requests it never sees. One sweep closes sessions one after another, where
// a timer per session would close them all at once, each in a goroutine
// waiting for the session's own to end: after a flood, thousands more.
type srvSessions struct {
	idle      time.Duration // <= 0: never
	max       int           // <= 0: no bound
	perClient int           // <= 0: no bound
	clientKey func(*http.Request) string

	fresh sync.Map // session ID to *mcp.ServerSession, initialised, not yet claimed

	mu       sync.Mutex
	total    int                    // open and reserved
	per      map[string]int         // the same, by client
	byID     map[string]*srvSession // open
	closed   bool
	sweeping bool          // the sweep runs
	stop     chan struct{} // ends the sweep

	// ended is canceled by closeAll: it ends the subscriptions/listen
	// streams of the stateless era, which are no sessions of the SDK's.
	ended context.Context
	end   context.CancelFunc

	// forget lets go of what the server remembers of a session that
	// ended (its in-core tasks list); nil: nothing.
	forget func(id string)
}

// srvSession is one open HTTP session.
type srvSession struct {
	sessions *srvSessions
	id       string
	ss       *mcp.ServerSession
	ep       *srvEndpoint
	client   string

	mu    sync.Mutex
	busy  int       // requests in progress, a standing GET stream included
	last  time.Time // when the last request ended
	ended bool

	// calls are the tools/calls the fast path runs for this session, by
	// JSON-RPC ID, so that the client's notifications/cancelled reaches
	// them as it reaches the SDK's. Guarded by mu.
	calls map[string]context.CancelCauseFunc

	// caller is the session's caller (srvCaller), made once its client
	// has said who it is.
	made atomic.Pointer[wield.Caller]
}

// caller is s.srvCaller(sess.ss), made once: the client's name and the
// session's ID do not change.
func (sess *srvSession) caller(s *Server) wield.Caller {
	if c := sess.made.Load(); c != nil {
		return *c
	}
	c := s.srvCaller(sess.ss)
	if sess.ss.InitializeParams() != nil {
		sess.made.Store(&c)
	}
	return c
}

func newSrvSessions(o *ServerOptions) *srvSessions {
	ss := &srvSessions{idle: o.SessionTimeout, max: o.MaxSessions, perClient: o.MaxSessionsPerClient, clientKey: o.ClientKey,
		per: map[string]int{}, byID: map[string]*srvSession{}, stop: make(chan struct{})}
	ss.ended, ss.end = context.WithCancel(context.Background())
	if ss.idle == 0 {
		ss.idle = DefaultSessionTimeout
	}
	if ss.max == 0 {
		ss.max = DefaultMaxSessions
	}
	if ss.perClient == 0 {
		ss.perClient = DefaultMaxSessionsPerClient
	}
	return ss
}

// client names the client of a request: what ClientKey says, else the
// remote IP address.
func (ss *srvSessions) client(r *http.Request) string {
	if ss.clientKey != nil {
		if k := ss.clientKey(r); k != "" {
			return k
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// reserve takes a place for a session of client, or reports which bound
// stops it: "client" or "server".
func (ss *srvSessions) reserve(client string) (ok bool, bound string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.closed:
		return false, "server"
	case ss.perClient > 0 && ss.per[client] >= ss.perClient:
		return false, "client"
	case ss.max > 0 && ss.total >= ss.max:
		return false, "server"
	}
	ss.total++
	ss.per[client]++
	return true, ""
}

// release gives back a place taken by reserve.
func (ss *srvSessions) release(client string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.total--
	if ss.per[client]--; ss.per[client] <= 0 {
		delete(ss.per, client)
	}
	if len(ss.per) == 0 {
		ss.per = map[string]int{} // a map keeps its size: a flood's, after it
	}
}

// initialized notes a session the go-sdk has just initialised, for
// claim.
func (ss *srvSessions) initialized(s *mcp.ServerSession) {
	if id := s.ID(); id != "" {
		ss.fresh.Store(id, s)
	}
}

// claim binds the place reserved for client to the session the go-sdk
// opened (its ID is in the response's header), or gives the place back
// when no session was opened.
func (ss *srvSessions) claim(ep *srvEndpoint, id, client string) {
	v, ok := ss.fresh.LoadAndDelete(id)
	if id == "" || !ok {
		ss.release(client)
		return
	}
	s := &srvSession{sessions: ss, id: id, ss: v.(*mcp.ServerSession), ep: ep, client: client, last: time.Now()}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		s.ss.Close()
		ss.release(client)
		return
	}
	ss.byID[id] = s
	if ss.idle > 0 && !ss.sweeping {
		ss.sweeping = true
		go ss.sweep()
	}
	ss.mu.Unlock()
}

// sweep closes the sessions idle for ss.idle, looking every tenth of it
// (between 10 ms and 10 s), until closeAll.
func (ss *srvSessions) sweep() {
	tick := time.NewTicker(min(max(ss.idle/10, 10*time.Millisecond), 10*time.Second))
	defer tick.Stop()
	var idle []*srvSession
	for {
		select {
		case <-ss.stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		ss.mu.Lock()
		for _, s := range ss.byID {
			if s.idleSince(now) >= ss.idle {
				idle = append(idle, s)
			}
		}
		ss.mu.Unlock()
		for i, s := range idle {
			s.end()
			idle[i] = nil
		}
		idle = idle[:0]
	}
}

// lookup returns the open session of an ID on ep, or nil.
func (ss *srvSessions) lookup(ep *srvEndpoint, id string) *srvSession {
	if id == "" {
		return nil
	}
	ss.mu.Lock()
	s := ss.byID[id]
	ss.mu.Unlock()
	if s == nil || s.ep != ep {
		return nil // another endpoint's session: the go-sdk says it is unknown here
	}
	return s
}

// open returns how many sessions are open.
func (ss *srvSessions) open() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.byID)
}

// closeAll ends every session and takes no more.
func (ss *srvSessions) closeAll() {
	ss.mu.Lock()
	if !ss.closed {
		close(ss.stop)
	}
	ss.closed = true
	ss.end()
	all := make([]*srvSession, 0, len(ss.byID))
	for _, s := range ss.byID {
		all = append(all, s)
	}
	ss.mu.Unlock()
	for _, s := range all {
		s.end()
	}
}

// begin marks a request of the session in progress: the session is not
// idle until the matching done.
func (s *srvSession) begin() {
	s.mu.Lock()
	s.busy++
	s.mu.Unlock()
}

func (s *srvSession) done() {
	s.mu.Lock()
	s.busy--
	s.last = time.Now()
	s.mu.Unlock()
}

// idleSince is how long the session has been idle at now: zero while a
// request of it is in progress.
func (s *srvSession) idleSince(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy > 0 {
		return 0
	}
	return now.Sub(s.last)
}

// end closes the session (the go-sdk forgets it, and its goroutine ends)
// and gives its place back, once.
func (s *srvSession) end() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.mu.Unlock()
	s.ss.Close()
	ss := s.sessions
	ss.mu.Lock()
	delete(ss.byID, s.id)
	if len(ss.byID) == 0 {
		ss.byID = map[string]*srvSession{} // a map keeps its size: a flood's, after it
	}
	ss.mu.Unlock()
	ss.release(s.client)
	if ss.forget != nil {
		ss.forget(s.id)
	}
}

// srvServeSessions serves a request of a stateful endpoint: a request of a
// session keeps it alive, a DELETE ends it, and a request that would open
// a session is refused past the bounds (see [CodeSessionLimit]).
func (s *Server) srvServeSessions(w http.ResponseWriter, r *http.Request, ep *srvEndpoint) {
	ss := s.sessions
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		sess := ss.lookup(ep, id)
		if sess != nil {
			sess.begin()
			defer sess.done()
			if !s.srvPlainFastCall(r, ep) && s.srvServeCoreTasks(w, r, ep, sess) {
				return
			}
		}
		s.srvServeSDK(w, r, ep, sess)
		if sess != nil && r.Method == http.MethodDelete {
			sess.end()
		}
		return
	}
	if r.Method != http.MethodPost {
		ep.http.ServeHTTP(w, r) // the go-sdk says what is missing
		return
	}
	client := ss.client(r)
	if ok, bound := ss.reserve(client); !ok {
		s.srvRefuseSession(w, r, bound)
		return
	}
	// Claimed even if the handler panics: a session left unclaimed would
	// never expire.
	defer func() { ss.claim(ep, w.Header().Get("Mcp-Session-Id"), client) }()
	s.srvServeInitialize(w, r, ep.http)
}

// srvServeSDK answers by the fast path when it can, else by the go-sdk.
func (s *Server) srvServeSDK(w http.ResponseWriter, r *http.Request, ep *srvEndpoint, sess *srvSession) {
	if !s.opts.DisableFastPath && r.Method == http.MethodPost && s.srvFast(w, r, ep, sess) {
		return
	}
	ep.http.ServeHTTP(w, r)
}

// srvRefuseSession answers a request that would open a session past a
// bound: 429 when the client's bound stops it, 503 when the server's
// does, with a JSON-RPC error that says how to free a place.
func (s *Server) srvRefuseSession(w http.ResponseWriter, r *http.Request, bound string) {
	ss := s.sessions
	id := json.RawMessage("null")
	if body, err := io.ReadAll(io.LimitReader(r.Body, srvFastMax)); err == nil {
		var req struct{ ID json.RawMessage }
		if json.Unmarshal(body, &req) == nil && srvPlainID(req.ID) {
			id = req.ID
		}
	}
	free := "end a session you no longer use (an HTTP DELETE of this endpoint with its Mcp-Session-Id header)"
	if ss.idle > 0 {
		free += fmt.Sprintf(" or wait for idle ones to close (after %s without a request)", ss.idle)
	}
	status, msg := http.StatusTooManyRequests, fmt.Sprintf("session limit reached: this client has %d MCP sessions open, the most allowed; %s", ss.perClient, free)
	if bound == "server" {
		status, msg = http.StatusServiceUnavailable, fmt.Sprintf("session limit reached: the server has %d MCP sessions open, the most it keeps; %s", ss.max, free)
	}
	data, _ := json.Marshal(map[string]any{"bound": bound, "max": map[bool]int{true: ss.perClient, false: ss.max}[bound == "client"]})
	srvHTTPError(w, status, id, &jsonrpc.Error{Code: CodeSessionLimit, Message: msg, Data: data})
}
