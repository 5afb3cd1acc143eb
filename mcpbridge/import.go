package mcpbridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
)

// ImportOptions configure an [Importer]; nil means the defaults.
type ImportOptions struct {
	// Naming gives the registry name of a server's tool; nil means
	// server + "__" + tool, which keeps two servers' tools of the same name
	// apart. A name the registry refuses leaves that tool out. A Naming that
	// panics gives that default name; the panic is logged and counted (see
	// [wield.Protect]).
	Naming func(server, tool string) string
	// Pins keeps the fingerprints of imported tools; nil means a fresh
	// [MemPins], which pins on every start.
	Pins PinStore
	// FollowChanges accepts a changed remote tool at once (re-pinning it)
	// instead of holding it until [Importer.Accept].
	FollowChanges bool
	// Permission, when set, is given to every imported tool, overriding the
	// default derived from its annotations (MCP's defaults make a tool
	// without annotations destructive, so it needs confirmation).
	Permission wield.Permission
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts, which doubles from the one to the other; 500 ms and 30 s
	// when zero. MaxBackoff is also how often the tools of a server
	// spoken to in MCP 2026-07-28 are listed again (no session tells of
	// its outages).
	MinBackoff, MaxBackoff time.Duration
	// ConnectTimeout bounds one connection's handshake; 30 s when zero.
	ConnectTimeout time.Duration
	// ImportTimeout bounds connecting to a server and listing its tools,
	// unless its [ServerConfig].Timeout says otherwise; 10 s when zero. A
	// server that has not listed its tools by then (one that never answers
	// tools/list, or trickles it) is unavailable: [Importer.Add] returns,
	// and the server is tried again in the background. Each later listing
	// is bounded by it too.
	ImportTimeout time.Duration
	// KillGrace is how long a stdio server gets to exit after its stdin is
	// closed, and again after SIGTERM, before it is killed; 5 s when zero.
	KillGrace time.Duration
	// HTTPClient makes the HTTP requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives connection problems and the stderr of stdio servers
	// (at debug level); nil means slog.Default().
	Logger *slog.Logger
	// Elicit answers the servers' requests for input from the user during a
	// call (elicitation/create); the importer advertises elicitation only
	// when it is set. [ElicitDefaults] accepts forms with their defaults.
	Elicit ElicitFunc
	// MaxPages and MaxTools bound one listing of a server's tools, unless
	// its [ServerConfig] sets its own: at most MaxPages pages of tools/list
	// are read and MaxTools tools kept (the first ones listed), with a
	// warning naming the server past either; 100 and 10000 when zero. A
	// cursor the server already gave ends the listing too.
	MaxPages, MaxTools int
	// MaxDescription is the most bytes of a remote tool's description
	// that are imported (every model given the tool reads it): a longer one
	// is cut to its head with a notice and a warning is logged; 16 KiB when
	// zero, no limit when negative.
	MaxDescription int
	// MaxResponse bounds one message read from an HTTP server (a JSON
	// response body, or one server-sent event), unless its [ServerConfig]
	// sets its own; 16 MiB when zero, as the SDK bounds a stdio server's
	// lines. wield's memory for one call stays within a small multiple of
	// it, whatever the server sends.
	MaxResponse int
}

// DefaultMaxResponse is [ImportOptions].MaxResponse's default.
const DefaultMaxResponse = 16 << 20

// DefaultMaxDescription is [ImportOptions].MaxDescription's default: room
// for a description with pages of usage notes, while a server's megabytes
// cost every prompt that carries the tool at most this much.
const DefaultMaxDescription = 16 << 10

func (im *Importer) maxDescription() int {
	if im.opts.MaxDescription == 0 {
		return DefaultMaxDescription
	}
	return im.opts.MaxDescription
}

// Defaults of [ImportOptions].MaxPages, MaxTools and ImportTimeout.
const (
	DefaultMaxPages      = 100
	DefaultMaxTools      = 10000
	DefaultImportTimeout = 10 * time.Second
)

// Importer keeps the tools of MCP servers in a registry: it connects to
// each server added with [Importer.Add], registers its tools (category mcp,
// source "mcp:<server>"), refreshes them when the server says its list
// changed, reconnects with backoff when the server goes away, and holds
// tools whose definitions changed since they were pinned. Safe for
// concurrent use.
type Importer struct {
	reg  *wield.Registry
	opts ImportOptions
	log  *slog.Logger

	mu      sync.Mutex
	servers map[string]*impServer
	order   []*impServer
	closed  bool

	diffMu sync.Mutex
	diffs  map[string]string // held tools' diffs, by pinned and current hash
}

// ErrUnavailable is wrapped by the error of [Importer.Add] when the server
// could not be reached at first: it stays added and is retried in the
// background.
var ErrUnavailable = errors.New("mcp server unavailable")

// defaultNaming is ImportOptions.Naming's default.
func defaultNaming(server, tool string) string { return server + "__" + tool }

// NewImporter returns an importer that registers tools in reg.
func NewImporter(reg *wield.Registry, opts *ImportOptions) *Importer {
	if reg == nil {
		panic("mcpbridge.NewImporter: nil registry")
	}
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	if o.Naming == nil {
		o.Naming = defaultNaming
	} else {
		// It is called from reconnections and change notifications, on
		// goroutines of the importer's, where a panic ends the process.
		naming, log := o.Naming, o.Logger
		o.Naming = func(server, tool string) (name string) {
			if !wield.Protect(log, wield.CallbackMCPNaming, func() { name = naming(server, tool) }) {
				name = defaultNaming(server, tool)
			}
			return name
		}
	}
	if o.Pins == nil {
		o.Pins = &MemPins{}
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = max(30*time.Second, o.MinBackoff)
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.ImportTimeout <= 0 {
		o.ImportTimeout = DefaultImportTimeout
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 5 * time.Second
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxTools <= 0 {
		o.MaxTools = DefaultMaxTools
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Importer{reg: reg, opts: o, log: log, servers: map[string]*impServer{}}
}

// Add connects to a server and registers its tools. A configuration that
// fails [ServerConfig.Check], or a name already added, is an error and the
// server is not added. A disabled server is recorded and not connected.
// When the first connection fails the server stays added, is retried in
// the background with backoff, and Add returns an error wrapping
// [ErrUnavailable]: log it, or treat it as fatal and call Close. So does a
// server that has not listed its tools within its timeout
// ([ServerConfig].Timeout, else [ImportOptions].ImportTimeout): Add never
// waits longer than that, or than ctx, which bounds the first connection
// and listing only. Adds of different servers may run concurrently.
func (im *Importer) Add(ctx context.Context, cfg ServerConfig) error {
	connect, err := im.start(cfg, nil)
	if err != nil {
		return err
	}
	return connect(ctx)
}

// Start is the first half of [Importer.Add]: it checks cfg and adds the
// server by name, so that tool files' mcp entries naming it resolve at
// once, and returns the second half, which connects and lists its tools
// as Add does (with the same errors). A caller that imports in the
// background calls Start before loading anything that names the server,
// and connect in the background: adding the name in the background too
// let a tool file's mcp entry find the server not yet configured.
func (im *Importer) Start(cfg ServerConfig) (connect func(context.Context) error, err error) {
	return im.start(cfg, nil)
}

// AddOAuth is [Importer.Add] for a streamable HTTP server that requires
// OAuth authorization: the importer obtains a token as oauth says, when the
// server first refuses it, and again when the server refuses the token. A
// configuration that oauth does not fit (another transport, an
// Authorization header, a grant without what it needs) is an error and the
// server is not added. A failed authorization is a failed connection: it is
// retried with backoff (running [OAuthConfig].Authorize again), and the
// error wraps [ErrUnavailable]. oauth is copied.
func (im *Importer) AddOAuth(ctx context.Context, cfg ServerConfig, oauth *OAuthConfig) error {
	connect, err := im.StartOAuth(cfg, oauth)
	if err != nil {
		return err
	}
	return connect(ctx)
}

// StartOAuth is the first half of [Importer.AddOAuth], as [Importer.Start]
// is of [Importer.Add]: it checks cfg and oauth and adds the server by
// name, and returns what connects to it and lists its tools. oauth is
// copied.
func (im *Importer) StartOAuth(cfg ServerConfig, oauth *OAuthConfig) (connect func(context.Context) error, err error) {
	if oauth == nil {
		return nil, fmt.Errorf("add mcp server %q: nil oauth configuration", cfg.Name)
	}
	o := *oauth
	o.Scopes, o.PrivateKey = slices.Clone(o.Scopes), slices.Clone(o.PrivateKey)
	return im.start(cfg, &o)
}

// start adds the server by name and returns what connects to it.
func (im *Importer) start(cfg ServerConfig, oauth *OAuthConfig) (func(context.Context) error, error) {
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("add: %w", err)
	}
	s := &impServer{im: im, cfg: cfg.clone(), tools: map[string]*impTool{},
		refresh: make(chan struct{}, 1), broken: make(chan *impSession, 1), done: make(chan struct{})}
	if oauth != nil {
		if err := impCheckOAuth(&s.cfg, oauth); err != nil {
			return nil, fmt.Errorf("add: %w", err)
		}
		h, err := s.impOAuthHandler(oauth)
		if err != nil {
			return nil, fmt.Errorf("add mcp server %q: oauth: %w", cfg.Name, err)
		}
		s.oauth = h
	}
	s.ctx, s.stop = context.WithCancel(context.Background())
	im.mu.Lock()
	switch {
	case im.closed:
		im.mu.Unlock()
		s.stop()
		return nil, fmt.Errorf("add mcp server %q: %w", cfg.Name, wield.ErrClosed)
	case im.servers[cfg.Name] != nil:
		im.mu.Unlock()
		s.stop()
		return nil, fmt.Errorf("add mcp server %q: a server of that name was already added", cfg.Name)
	}
	for _, o := range im.order {
		if strings.EqualFold(o.cfg.Name, cfg.Name) {
			im.mu.Unlock()
			s.stop()
			return nil, fmt.Errorf("add mcp server %q: its name differs only in letter case from server %q's", cfg.Name, o.cfg.Name)
		}
	}
	im.servers[cfg.Name] = s
	im.order = append(im.order, s)
	im.mu.Unlock()
	if !cfg.Enabled {
		s.begun.Store(true)
		s.stop()
		close(s.done)
		return func(context.Context) error { return nil }, nil
	}
	return s.connect, nil
}

// connect makes the first connection and listing of an added server; the
// server's own goroutine takes over from there (retries, list changes).
func (s *impServer) connect(ctx context.Context) error {
	cfg := s.cfg
	if !s.begun.CompareAndSwap(false, true) {
		return fmt.Errorf("connect to mcp server %q: connected already, or closed", cfg.Name)
	}
	limit := s.timeout()
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	sess, err := s.impDial(actx)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			err = fmt.Errorf("connect to mcp server %q: no answer within %s (timeout)", cfg.Name, limit)
		}
		s.setErr(err)
		go s.run(nil)
		return fmt.Errorf("add: %w: %w", ErrUnavailable, err)
	}
	s.attach(sess)
	err = s.sync(actx, sess)
	go s.run(sess) // a failed listing has marked sess broken: run redials
	if err != nil {
		return fmt.Errorf("add: %w: %w", ErrUnavailable, err)
	}
	return nil
}

// timeout bounds connecting to the server and one listing of its tools.
func (s *impServer) timeout() time.Duration {
	return cmp.Or(s.cfg.Timeout, s.im.opts.ImportTimeout)
}

// Close disconnects from every server (stdio servers are stopped, and killed
// when they do not exit within KillGrace after SIGTERM) and removes their
// tools from the registry. It waits for the background work to end.
func (im *Importer) Close() error {
	im.mu.Lock()
	if im.closed {
		im.mu.Unlock()
		return nil
	}
	im.closed = true
	servers := slices.Clone(im.order)
	im.mu.Unlock()
	for _, s := range servers {
		s.stop() // all at once: each stdio server may take its grace period
	}
	for _, s := range servers {
		s.shutdown()
	}
	return nil
}

// Remove disconnects from one server (as Close does) and removes its tools
// from the registry, for a configuration reload; its pins are kept. It
// returns an error wrapping [wield.ErrNotFound] for a server never added.
func (im *Importer) Remove(server string) error {
	im.mu.Lock()
	s := im.servers[server]
	if s != nil {
		delete(im.servers, server)
		im.order = slices.DeleteFunc(im.order, func(x *impServer) bool { return x == s })
	}
	im.mu.Unlock()
	if s == nil {
		return fmt.Errorf("remove mcp server %q: %w", server, wield.ErrNotFound)
	}
	s.shutdown()
	return nil
}

// shutdown stops the server's connection and removes its tools.
func (s *impServer) shutdown() {
	s.stop()
	if s.begun.CompareAndSwap(false, true) {
		close(s.done) // added by Start, never connected: no run to wait for
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.tools))
	for _, t := range s.tools {
		if t.owned {
			names = append(names, t.name)
		}
	}
	s.im.reg.RemoveTools(names...) // one copy of the index, not one per tool
	s.tools = map[string]*impTool{}
}

// ServerStatus describes one server, for a status page.
type ServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Enabled   bool   `json:"enabled"`
	Connected bool   `json:"connected"`
	// State is one of [StateConnected], [StateConnecting], [StateFailed]
	// (LastError says why; it is tried again), [StateDisabled] and
	// [StateClosed].
	State string `json:"state"`
	// Tools counts the server's tools in the registry, held ones included.
	Tools int `json:"tools"`
	// Held names the held tools (registry names), sorted.
	Held []string `json:"held,omitempty"`
	// LastError is the latest connection or listing problem, its control
	// characters written as visible escapes (internal/safetext); it is
	// cleared by a successful connection.
	LastError string `json:"last_error,omitempty"`
	// Since is when the server was last connected or disconnected.
	Since time.Time `json:"since,omitzero"`
}

// The states of a [ServerStatus].
const (
	StateConnected  = "connected"
	StateConnecting = "connecting" // not connected yet, no failure so far
	StateFailed     = "failed"     // the last attempt failed; tried again with backoff
	StateDisabled   = "disabled"   // enabled: false in the configuration
	StateClosed     = "closed"     // the importer was closed
)

// Servers returns the status of every added server, in the order added.
func (im *Importer) Servers() []ServerStatus {
	im.mu.Lock()
	servers := slices.Clone(im.order)
	closed := im.closed
	im.mu.Unlock()
	out := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		s.mu.Lock()
		st := ServerStatus{Name: s.cfg.Name, Transport: s.cfg.transport(), Enabled: s.cfg.Enabled,
			Connected: s.sess != nil, LastError: safetext.Line(s.lastErr), Since: s.since}
		switch {
		case closed:
			st.State = StateClosed
		case !s.cfg.Enabled:
			st.State = StateDisabled
		case s.sess != nil:
			st.State = StateConnected
		case s.lastErr != "":
			st.State = StateFailed
		default:
			st.State = StateConnecting
		}
		for _, t := range s.tools {
			if t.owned {
				st.Tools++
				if t.held {
					st.Held = append(st.Held, t.name)
				}
			}
		}
		s.mu.Unlock()
		slices.Sort(st.Held)
		out = append(out, st)
	}
	return out
}

// Accept accepts the current definition of a held tool (named as the
// server names it): it is pinned and becomes callable. It returns an error
// wrapping [wield.ErrNotFound] for an unknown server or tool, and one
// wrapping [ErrNotHeld] for a tool that is not held. [Importer.AcceptName]
// finds the tool by its registry name.
func (im *Importer) Accept(server, tool string) error {
	im.mu.Lock()
	s := im.servers[server]
	im.mu.Unlock()
	if s == nil {
		return fmt.Errorf("accept %s/%s: server: %w", server, tool, wield.ErrNotFound)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tools[tool]
	if t == nil || !t.owned {
		return fmt.Errorf("accept %s/%s: tool: %w", server, tool, wield.ErrNotFound)
	}
	_, err := s.accept(t, "")
	return err
}

// impServer is one added server and the state of its connection.
type impServer struct {
	im      *Importer
	cfg     ServerConfig
	oauth   auth.OAuthHandler // nil without OAuth; kept across reconnections
	ctx     context.Context
	stop    context.CancelFunc
	refresh chan struct{}    // the server's tool list changed
	broken  chan *impSession // a call found the session dead
	done    chan struct{}    // run has returned
	// begun is set by whoever first takes the server on: connect (which
	// starts run, which closes done) or, for a server Start added and
	// nobody connected, shutdown (which closes done itself).
	begun atomic.Bool

	mu      sync.Mutex
	sess    *impSession // nil while disconnected
	lastErr string
	since   time.Time
	tools   map[string]*impTool // by remote name
	listed  bool                // a listing has completed: tools is what the server offers
}

// impTool is one remote tool as imported.
type impTool struct {
	remote string      // the server's name for it
	name   string      // registry name
	tool   *wield.Tool // as registered
	pin    Pin         // of the current remote definition
	held   bool
	owned  bool // registered by this importer (not shadowed)
	repin  bool // pin is to be recorded once the registry has the tool
}

func (s *impServer) setErr(err error) {
	s.mu.Lock()
	s.lastErr = err.Error()
	s.mu.Unlock()
	s.im.log.Warn("mcp server problem", "server", s.cfg.Name, "error", err)
}

func (s *impServer) attach(sess *impSession) {
	s.mu.Lock()
	s.sess, s.lastErr, s.since = sess, "", time.Now()
	s.mu.Unlock()
}

func (s *impServer) session() *impSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

// markBroken reports that a call found sess dead, so run reconnects now
// rather than when the transport notices.
func (s *impServer) markBroken(sess *impSession) {
	select {
	case s.broken <- sess:
	default:
	}
}

// run keeps the server connected until the importer closes: it waits for
// the session to end, then dials again with growing pauses.
func (s *impServer) run(sess *impSession) {
	defer close(s.done)
	delay := s.im.opts.MinBackoff
	if sess == nil && !s.pause(delay) { // Add's attempt has just failed
		return
	}
	for {
		if sess == nil {
			var err error
			sess, err = s.impDial(s.ctx)
			if err != nil {
				if s.ctx.Err() != nil {
					return
				}
				s.setErr(err)
				if !s.pause(delay) {
					return
				}
				delay = min(2*delay, s.im.opts.MaxBackoff)
				continue
			}
			s.attach(sess)
			_ = s.sync(context.Background(), sess) // a failure is logged and marks sess broken
		}
		ended := make(chan error, 1)
		go func(cs *mcp.ClientSession) { ended <- cs.Wait() }(sess.cs)
		began := time.Now()
		reason := s.watch(sess, ended)
		sess.close()
		s.mu.Lock()
		if s.sess == sess {
			s.sess, s.since = nil, time.Now()
		}
		s.mu.Unlock()
		if reason == nil {
			return
		}
		s.setErr(reason)
		sess = nil
		// A server that keeps dying soon after it starts is restarted ever
		// more slowly; one that ran a while gets a quick second chance.
		if time.Since(began) < s.im.opts.MaxBackoff {
			delay = min(2*delay, s.im.opts.MaxBackoff)
		} else {
			delay = s.im.opts.MinBackoff
		}
		if !s.pause(delay) {
			return
		}
	}
}

// watch serves one session's refreshes until it ends; it returns why, or
// nil when the importer closed.
//
// A server spoken to in MCP 2026-07-28 keeps no connection open whose end
// would tell of an outage (its requests stand alone, and a
// subscriptions/listen stream that breaks is not reported), so its tools
// are listed again every MaxBackoff: a listing that fails marks the
// session broken, as a call that fails does, and one that works catches a
// change whose notice was lost.
func (s *impServer) watch(sess *impSession, ended <-chan error) error {
	var probe <-chan time.Time
	if res := sess.cs.InitializeResult(); res != nil && res.ProtocolVersion >= srvStatelessEra {
		t := time.NewTicker(s.im.opts.MaxBackoff)
		defer t.Stop()
		probe = t.C
	}
	for {
		select {
		case <-probe:
			_ = s.sync(context.Background(), sess) // a failure is logged and marks sess broken
		case <-s.ctx.Done():
			return nil
		case err := <-ended:
			if err == nil {
				err = errors.New("the server closed the connection")
			}
			return fmt.Errorf("mcp server %q disconnected: %w", s.cfg.Name, err)
		case b := <-s.broken:
			if s.ctx.Err() != nil {
				return nil
			}
			if b == sess {
				return fmt.Errorf("mcp server %q stopped answering", s.cfg.Name)
			}
		case <-s.refresh:
			_ = s.sync(context.Background(), sess)
		}
	}
}

// pause waits d, with a little jitter so that servers dropped together do
// not all come back at the same instant; false when the importer closed.
func (s *impServer) pause(d time.Duration) bool {
	d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// sync lists the server's tools and brings the registry in line: new tools
// are registered and pinned, changed ones are held (or followed), vanished
// ones removed. The registry's index is copied and the pins written once
// per listing, whatever the number of tools. ctx (and the server's timeout)
// bounds the listing; its error is returned when it failed.
func (s *impServer) sync(ctx context.Context, sess *impSession) error {
	remote, err := s.list(ctx, sess)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b impBatch
	seen := make(map[string]bool, len(remote))
	for _, r := range s.admit(remote) {
		seen[r.Name] = true
		s.syncTool(r, &b)
	}
	for name, t := range s.tools {
		if !seen[name] {
			if t.owned {
				b.remove = append(b.remove, t.name)
			}
			delete(s.tools, name)
		}
	}
	s.apply(&b)
	s.listed = true
	return nil
}

// list reads the server's tools page by page, within the limits: a cursor
// given twice ends the listing, and so do MaxPages pages or MaxTools tools,
// each with a warning naming the server; what was listed until then is
// kept. The whole listing gets the server's timeout (a server that never
// answers, or trickles its pages, cannot hold the importer), and ends with
// ctx. An error means the listing failed; the session is then redialled.
func (s *impServer) list(ctx context.Context, sess *impSession) (tools []*mcp.Tool, err error) {
	maxPages := cmp.Or(s.cfg.MaxPages, s.im.opts.MaxPages)
	maxTools := cmp.Or(s.cfg.MaxTools, s.im.opts.MaxTools)
	limit := s.timeout()
	lctx, cancel := context.WithTimeout(s.ctx, limit)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	cursors := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		res, err := sess.cs.ListTools(lctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			switch {
			case s.ctx.Err() != nil:
				return nil, fmt.Errorf("list tools of mcp server %q: %w", s.cfg.Name, wield.ErrClosed)
			case errors.Is(ctx.Err(), context.Canceled): // the caller gave up: theirs to report
				s.markBroken(sess)
				return nil, fmt.Errorf("list tools of mcp server %q: %w", s.cfg.Name, ctx.Err())
			case lctx.Err() != nil || ctx.Err() != nil: // its timeout, or the caller's deadline
				err = fmt.Errorf("mcp server %q did not list its tools within %s (timeout)", s.cfg.Name, limit)
				if len(tools) > 0 {
					err = fmt.Errorf("%w; the %d tools listed by then are left out until it lists them all", err, len(tools))
				}
			default:
				err = fmt.Errorf("list tools of mcp server %q: %w", s.cfg.Name, err)
			}
			s.setErr(err)
			s.markBroken(sess)
			return nil, err
		}
		for _, t := range res.Tools {
			if t == nil {
				continue
			}
			if len(tools) == maxTools {
				s.warn(fmt.Sprintf("mcp server %q lists more than %d tools; the first %d are imported, the rest left out (max_tools)", s.cfg.Name, maxTools, maxTools))
				return tools, nil
			}
			tools = append(tools, t)
		}
		switch next := res.NextCursor; {
		case next == "":
			return tools, nil
		case cursors[next] || next == cursor:
			s.warn(fmt.Sprintf("mcp server %q gave the tools/list cursor %q a second time, on page %d; the listing ends there with %d tools", s.cfg.Name, safetext.Clip(next, 64), page, len(tools)))
			return tools, nil
		case page == maxPages:
			s.warn(fmt.Sprintf("mcp server %q still had tools to list after %d pages; the listing ends there with %d tools (max_pages)", s.cfg.Name, maxPages, len(tools)))
			return tools, nil
		default:
			cursors[next] = true
			cursor = next
		}
	}
}

// warn reports a problem of the listing: logged, published as a load
// error of the server, and shown as its last error until it reconnects.
func (s *impServer) warn(msg string) {
	s.mu.Lock()
	s.lastErr = msg
	s.mu.Unlock()
	s.im.log.Warn(msg, "server", s.cfg.Name)
	s.publish(wield.EventLoadError, "", msg)
}

// admit returns the remote tools whose names can be imported, in the order
// listed. A repeated name is listed once; an empty name, and a name that
// differs only in letter case from one kept (an imported one first), are
// refused with a warning naming both. s.mu is held.
func (s *impServer) admit(remote []*mcp.Tool) []*mcp.Tool {
	folded := make(map[string]string, len(remote))
	listed := make(map[string]bool, len(remote))
	for _, r := range remote {
		listed[r.Name] = true
	}
	for name, t := range s.tools { // what is imported keeps its name
		if t.owned && listed[name] {
			folded[strings.ToLower(name)] = name
		}
	}
	out := make([]*mcp.Tool, 0, len(remote))
	seen := make(map[string]bool, len(remote))
	for _, r := range remote {
		switch first, ok := folded[strings.ToLower(r.Name)]; {
		case seen[r.Name]:
			continue
		case r.Name == "":
			s.refuse(r.Name, "the name is empty")
			continue
		case ok && first != r.Name:
			s.refuse(r.Name, fmt.Sprintf("its name differs only in letter case from tool %q's, which is kept", first))
			continue
		}
		seen[r.Name] = true
		folded[strings.ToLower(r.Name)] = r.Name
		out = append(out, r)
	}
	return out
}

// refuse reports a remote tool left out of the registry.
func (s *impServer) refuse(remote, why string) {
	server := s.cfg.Name
	s.im.log.Warn("mcp tool not imported", "server", server, "tool", remote, "error", why)
	s.publish(wield.EventLoadError, s.im.opts.Naming(server, remote),
		fmt.Sprintf("mcp server %q: tool %q not imported: %s", server, remote, why))
}

// impBatch is what one listing changes, applied at once by apply.
type impBatch struct {
	add, update []*impTool
	remove      []string
	pins        map[string]Pin // by remote name, recorded once the tool is in
}

// syncTool decides what becomes of one remote tool; s.mu is held.
func (s *impServer) syncTool(r *mcp.Tool, b *impBatch) {
	pin, err := PinTool(r)
	if max := s.im.maxDescription(); err == nil && max >= 0 && len(ImportDescription(r)) > max {
		if prev := s.tools[r.Name]; prev == nil || prev.pin.Hash != pin.Hash { // once per definition
			s.im.log.Warn("mcp tool description cut", "server", s.cfg.Name, "tool", r.Name,
				"bytes", len(ImportDescription(r)), "limit", max)
		}
	}
	if err == nil {
		var wt *wield.Tool
		wt, err = s.impConvertTool(r)
		if err == nil {
			// The registry would refuse it: refused here, before it is
			// pinned (a name a model cannot use never reaches the pins).
			err = wt.Check()
		}
		if err == nil {
			err = s.place(r.Name, wt, pin, b)
		}
	}
	if err != nil {
		s.refuse(r.Name, err.Error())
	}
}

// place decides the tool's status from its pin, and whether it is
// registered or updated; s.mu is held.
func (s *impServer) place(remote string, wt *wield.Tool, pin Pin, b *impBatch) error {
	im := s.im
	server := s.cfg.Name
	prev := s.tools[remote]
	old, pinned, err := im.opts.Pins.Pin(server, remote)
	if err != nil {
		return err
	}
	held, repin := false, false
	switch {
	case !pinned:
		pin.Time, repin = time.Now(), true
	case old.Hash == pin.Hash:
		if old.Definition == nil && pin.Definition != nil {
			// A pin of before definitions were kept gains one, so a later
			// change can be shown as a diff.
			old.Definition, repin = pin.Definition, true
		}
		pin = old
	case im.opts.FollowChanges:
		pin.Time, repin = time.Now(), true
		if prev == nil || prev.pin.Hash != pin.Hash {
			s.publish(wield.EventToolLoaded, wt.Name, fmt.Sprintf("mcp server %q changed the %s of tool %q; following the change (FollowChanges)",
				server, pinChangeList(old.Changed(pin)), remote))
		}
	default:
		held = true
		pin.Time = time.Now()
		if prev == nil || !prev.held || prev.pin.Hash != pin.Hash {
			// Logged too: a held tool is in no list, so the log and the
			// event are where a person learns why it is missing.
			msg := fmt.Sprintf("mcp server %q changed the %s of tool %q since it was pinned; the tool is held until accepted",
				server, pinChangeList(old.Changed(pin)), remote)
			im.log.Warn(msg, "server", server, "tool", remote, "name", wt.Name,
				"accept", "wield pins accept "+wt.Name)
			s.publish(wield.EventToolHeld, wt.Name, msg)
		}
	}
	if held {
		wt.Status = wield.StatusHeld
	}
	t := &impTool{remote: remote, name: wt.Name, tool: wt, pin: pin, held: held, repin: repin}
	switch {
	case prev != nil && prev.owned && prev.pin.Hash == pin.Hash && prev.held == held && impSameTool(prev.tool, wt):
		if repin { // the pins were lost meanwhile
			b.pin(remote, pin)
		}
	case prev != nil && !prev.owned && prev.pin.Hash == pin.Hash:
		// still shadowed by another tool of the name; reported once
	case prev != nil && prev.owned:
		b.update = append(b.update, t)
	default:
		b.add = append(b.add, t)
	}
	return nil
}

func (b *impBatch) pin(remote string, p Pin) {
	if b.pins == nil {
		b.pins = map[string]Pin{}
	}
	b.pins[remote] = p
}

// apply makes a listing's changes: one removal, one registration and one
// update of the registry, then one write of the pins. A tool is pinned only
// once the registry has taken it; when the pins cannot be written, the
// tools just added are taken out again. s.mu is held.
func (s *impServer) apply(b *impBatch) {
	reg := s.im.reg
	if len(b.remove) > 0 {
		reg.RemoveTools(b.remove...)
	}
	var added []*impTool
	if len(b.add) > 0 {
		tools := make([]*wield.Tool, len(b.add))
		for i, t := range b.add {
			tools[i] = t.tool
		}
		err := reg.Register(tools...)
		for _, t := range b.add {
			e := reg.Entry(t.name)
			switch {
			case e != nil && e.Tool == t.tool:
				t.owned = true
				added = append(added, t)
			case e == nil:
				s.refuse(t.remote, impErrorOf(err, t.name))
				continue // neither imported nor shadowed: tried again next listing
			}
			// else shadowed by another tool of the name: the registry warned
			s.tools[t.remote] = t
			if t.owned && t.repin {
				b.pin(t.remote, t.pin)
			}
		}
	}
	if len(b.update) > 0 {
		tools := make([]*wield.Tool, len(b.update))
		for i, t := range b.update {
			tools[i] = t.tool
		}
		err := reg.UpdateTools(tools...)
		for _, t := range b.update {
			if e := reg.Entry(t.name); e == nil || e.Tool != t.tool {
				s.refuse(t.remote, impErrorOf(err, t.name))
				continue
			}
			t.owned = true
			s.tools[t.remote] = t
			if t.repin {
				b.pin(t.remote, t.pin)
			}
		}
	}
	if err := setPins(s.im.opts.Pins, s.cfg.Name, b.pins); err != nil {
		names := make([]string, 0, len(added))
		for _, t := range added {
			if t.repin {
				names = append(names, t.name)
				delete(s.tools, t.remote)
			}
		}
		reg.RemoveTools(names...)
		s.warn(fmt.Sprintf("mcp server %q: the pins of %d tools could not be written, so its %d new tools are left out until they can: %v",
			s.cfg.Name, len(b.pins), len(names), err))
	}
}

// impErrorOf picks the registry's problem with one tool out of a joined
// error.
func impErrorOf(err error, name string) string {
	var list interface{ Unwrap() []error }
	if errors.As(err, &list) {
		for _, e := range list.Unwrap() {
			if strings.Contains(e.Error(), strconv.Quote(name)) {
				return e.Error()
			}
		}
	}
	if err != nil && strings.Contains(err.Error(), strconv.Quote(name)) {
		return err.Error()
	}
	return "the registry refused it"
}

func (s *impServer) publish(typ wield.EventType, tool, msg string) {
	s.im.reg.Bus().Publish(wield.Event{Type: typ, Tool: tool, Message: msg, Source: "mcp:" + s.cfg.Name})
}
