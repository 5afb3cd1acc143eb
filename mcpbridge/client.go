package mcpbridge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
)

// The transports of a [ServerConfig].
const (
	TransportStdio = "stdio" // a command, spoken to over its stdin and stdout
	TransportHTTP  = "http"  // streamable HTTP, the default for a URL
	TransportSSE   = "sse"   // the legacy HTTP+SSE transport of protocol 2024-11-05
)

// ServerConfig is one MCP server to import tools from. It has the fields of
// toolfile.MCPServer, in the same order and of the same types, so a loaded
// configuration converts with mcpbridge.ServerConfig(s): the config loader
// has already replaced ${NAME} in header values and env (API keys and bearer
// tokens from the environment), and nothing here expands them again. It is
// its own type so that package toolfile may one day import this package
// (for tool entries of kind mcp) without a cycle.
type ServerConfig struct {
	// Name identifies the server; it prefixes the names of its tools.
	Name string
	// URL is the endpoint of a streamable HTTP server (or, with Transport
	// "sse", of a legacy SSE server).
	URL string
	// Command is the program and its arguments, run without a shell, for a
	// stdio server.
	Command []string
	// Transport is "stdio" for a command, "http" (the default for a URL) or
	// "sse".
	Transport string
	// Headers are sent with every HTTP request, such as
	// Authorization: Bearer <token> or seed 002's API key header.
	Headers map[string]string
	// Env is added to the environment of a stdio server's process.
	Env map[string]string
	// Tags are given to every tool of the server, after the tool's own.
	Tags []string
	// Enabled must be true for the server to be used; a disabled server is
	// listed by [Importer.Servers] and never connected.
	Enabled bool
	// MaxPages and MaxTools bound one listing of the server's tools (pages
	// of tools/list, tools kept); zero means [ImportOptions]' limits. Past
	// either, the tools listed so far are kept and a warning names the
	// server, so a server that pages without end cannot exhaust memory.
	MaxPages, MaxTools int
	// Timeout bounds connecting to the server and listing its tools (each
	// listing, the first one included); zero means
	// [ImportOptions].ImportTimeout.
	Timeout time.Duration
	// MaxResponse bounds one message read from an HTTP server (a JSON
	// response body, or one server-sent event), in bytes; zero means
	// [ImportOptions].MaxResponse. A larger one is not read: the call fails
	// saying so and the connection is reset.
	MaxResponse int
	// Permission, when set, is given to every tool of this server, over
	// [ImportOptions].Permission and what the tools' annotations imply: a
	// server trusted less (confirm, deny) or more (auto) than MCP's
	// defaults say. A tool's _meta asking for a stricter one still wins
	// (see [ImportPermission]).
	Permission wield.Permission
}

// impServerName is the rule of a server's name, at most 64 bytes long (the
// length is checked apart: a counted repetition would compile into one
// state per count, 60 KB at start-up).
var impServerName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-]*$`)

// transport returns the effective transport name.
func (c *ServerConfig) transport() string {
	switch {
	case c.Transport != "":
		return c.Transport
	case len(c.Command) > 0:
		return TransportStdio
	}
	return TransportHTTP
}

// Check reports what is wrong with the configuration: a name that cannot
// prefix tool names, both or neither of url and command, a transport that
// does not fit them, a URL that is not http(s).
func (c *ServerConfig) Check() error {
	var errs []error
	switch {
	case len(c.Name) > 64 || !impServerName.MatchString(c.Name):
		errs = append(errs, fmt.Errorf("name %q must be 1-64 characters of letters, digits, _ . -", c.Name))
	case strings.Contains(c.Name, "__") || strings.HasSuffix(c.Name, "_"):
		// server + "__" + tool must split back at its first "__": server
		// x__y's tool echo and server x's tool y__echo were both x__y__echo.
		errs = append(errs, fmt.Errorf("name %q must not contain __ nor end with _: its tools are named <server>__<tool>, and such a name would be ambiguous", c.Name))
	}
	if c.MaxPages < 0 || c.MaxTools < 0 {
		errs = append(errs, fmt.Errorf("max_pages %d and max_tools %d must not be negative", c.MaxPages, c.MaxTools))
	}
	if c.MaxResponse < 0 {
		errs = append(errs, fmt.Errorf("max_response %d must not be negative", c.MaxResponse))
	}
	switch {
	case c.URL != "" && len(c.Command) > 0:
		errs = append(errs, errors.New("has both url and command; give one"))
	case c.URL == "" && len(c.Command) == 0:
		errs = append(errs, errors.New("has neither url nor command"))
	}
	switch t := c.transport(); t {
	case TransportStdio:
		if len(c.Command) == 0 || c.Command[0] == "" {
			errs = append(errs, errors.New("transport stdio needs a command"))
		}
	case TransportHTTP, TransportSSE:
		if c.URL == "" {
			errs = append(errs, fmt.Errorf("transport %s needs a url", t))
		} else if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("url %q is not an http or https URL", c.URL))
		}
	default:
		errs = append(errs, fmt.Errorf("transport %q is not stdio, http or sse", t))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("mcp server %q: %w", c.Name, err)
	}
	return nil
}

func (c ServerConfig) clone() ServerConfig {
	c.Command = slices.Clone(c.Command)
	c.Tags = slices.Clone(c.Tags)
	c.Headers = maps.Clone(c.Headers)
	c.Env = maps.Clone(c.Env)
	return c
}

// impHeaderTransport adds the configured headers to every request to the
// configured server. They are credentials (a bearer token, an API key),
// and the transport sees every request the client makes, so a request to
// another host does not get them: one that a server's redirect sends
// elsewhere, or the messages endpoint a legacy SSE server names on
// another host. The same host over https (a redirect from http) gets them,
// as its first request carried them already.
type impHeaderTransport struct {
	base    http.RoundTripper
	headers map[string]string
	home    *url.URL // the configured URL; nil: no request gets the headers
}

func (t *impHeaderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !impSameServer(t.home, r.URL) {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// impSameServer reports whether u is on the configured server home: the
// same scheme, host and port, or the same host over https.
func impSameServer(home, u *url.URL) bool {
	if home == nil || u == nil || !strings.EqualFold(home.Hostname(), u.Hostname()) {
		return false
	}
	if strings.EqualFold(u.Scheme, "https") && !strings.EqualFold(home.Scheme, "https") {
		return true // upgraded to TLS: it carried them in the clear already
	}
	return strings.EqualFold(home.Scheme, u.Scheme) && impPort(home) == impPort(u)
}

// impPort is u's port, the scheme's default when it names none.
func impPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// impLimitTransport bounds what one message of an HTTP server may cost.
// A response body that is not an event stream is read here, in chunks that
// are never copied, to at most max bytes, before the SDK sees it: the SDK
// reads a JSON response whole however large (150 MB took wield to 1.68 GB),
// and io.ReadAll, stopped by a limit, would still copy what it read into
// one slice, doubling it. An event stream's events are bounded to max
// bytes each as they are read (as the SDK's MaxEventSize does, but saying
// why). Past the limit the request or the stream fails with errOverLimit,
// and bad says why, for the model.
type impLimitTransport struct {
	base http.RoundTripper
	max  int64
	bad  *atomic.Pointer[string]
	// info, when set, learns from the answers to initialize and
	// tools/list which tools run as tasks (client_tasks.go).
	info *impTaskInfo
	// answering counts wield's answers to the server's own requests
	// being posted (see impMaxAsked).
	answering atomic.Int64
}

func (t *impLimitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var method string
	var fresh bool
	if t.info != nil && r.Method == http.MethodPost && r.GetBody != nil && r.ContentLength <= 64<<10 {
		method, fresh = impPeekBody(r)
	}
	if r.Method == http.MethodPost && r.GetBody != nil && r.ContentLength > 0 && r.ContentLength <= 64<<10 && impIsAnswer(r) {
		// The go-sdk posts each answer on a goroutine of its own, which
		// holds the server's request until the server takes the answer,
		// and its connection does not close while one waits: at most
		// impMaxAsked wait at once, each at most impAnswerTimeout. Past
		// either the answer is not delivered (the go-sdk's connection
		// lives on: a post that fails is taken as not sent).
		if t.answering.Add(1) > impMaxAsked {
			t.answering.Add(-1)
			t.asked()
			return nil, errImpAsked
		}
		defer t.answering.Add(-1)
		ctx, cancel := context.WithTimeout(r.Context(), impAnswerTimeout)
		defer cancel() // the answer's body, if any, is read before RoundTrip returns
		r = r.WithContext(ctx)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &impEventLimit{ReadCloser: resp.Body, t: t}
		if method != "" {
			resp.Body = &impSSEPeek{ReadCloser: resp.Body, peek: func(d []byte) { t.info.peekMessage(method, fresh, d) }}
		}
		return resp, nil
	}
	body, err := t.read(resp)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if method != "" {
		var all []byte
		for _, c := range body.chunks {
			all = append(all, c...)
		}
		t.info.peekMessage(method, fresh, all)
	}
	resp.Body, resp.ContentLength = body, int64(body.n)
	return resp, nil
}

// impIsAnswer reports whether a request posts a JSON-RPC response: wield's
// answer to a request of the server's.
func impIsAnswer(r *http.Request) bool {
	b, err := r.GetBody()
	if err != nil {
		return false
	}
	defer b.Close()
	var m struct {
		Method *string         `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.NewDecoder(io.LimitReader(b, 64<<10)).Decode(&m) != nil {
		return false
	}
	return m.Method == nil && len(m.ID) > 0
}

// read reads a whole body of at most max bytes.
func (t *impLimitTransport) read(resp *http.Response) (*impChunks, error) {
	if resp.ContentLength > t.max {
		t.over()
		return nil, fmt.Errorf("response of %d bytes: %w", resp.ContentLength, errOverLimit)
	}
	c := &impChunks{}
	size := 4 << 10
	for {
		buf := make([]byte, size)
		n, err := io.ReadFull(resp.Body, buf)
		if n > 0 {
			c.chunks = append(c.chunks, buf[:n])
			c.n += n
		}
		if int64(c.n) > t.max {
			t.over()
			return nil, errOverLimit
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return c, nil
		case err != nil:
			return nil, err
		}
		size = min(2*size, 1<<20, int(t.max)+1-c.n)
	}
}

func (t *impLimitTransport) asked() {
	why := fmt.Sprintf("more than %d requests of its own without taking wield's answers", impMaxAsked)
	t.bad.CompareAndSwap(nil, &why)
}

// impAnswerTimeout bounds how long an HTTP server may take to take
// wield's answer to a request of its own.
const impAnswerTimeout = 10 * time.Second

func (t *impLimitTransport) over() {
	why := fmt.Sprintf("a message over the %d-byte limit (max_response), which wield could not read", t.max)
	t.bad.CompareAndSwap(nil, &why)
}

// errOverLimit is the failure of a message over MaxResponse.
var errOverLimit = errors.New("the mcp server's message is over the size limit (max_response)")

// impChunks is a body read by impLimitTransport; each chunk is let go once
// read.
type impChunks struct {
	chunks [][]byte
	n      int
}

func (c *impChunks) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks[0] = nil
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

func (c *impChunks) Close() error { c.chunks = nil; return nil }

// impEventLimit counts the bytes of an event stream's current event (those
// since the last blank line).
type impEventLimit struct {
	io.ReadCloser
	t  *impLimitTransport
	n  int64
	nl bool // the last byte (ignoring \r) ended a line
}

func (b *impEventLimit) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	for _, c := range p[:n] {
		switch {
		case c == '\r':
		case c == '\n' && b.nl:
			b.n = 0 // a blank line ends the event
		default:
			b.nl = c == '\n'
			b.n++
		}
	}
	if b.n > b.t.max {
		b.t.over()
		return 0, errOverLimit
	}
	return n, err
}

// impTransport builds the SDK transport for one connection attempt, and
// what makes the requests of tasks beside it (nil for SSE). A stdio
// server gets a fresh process each time; its messages are bounded by the
// SDK (16 MiB a line).
func (s *impServer) impTransport(bad *atomic.Pointer[string], info *impTaskInfo, relays *impRelays) (mcp.Transport, impRawCaller, func(*mcp.ClientSession)) {
	cfg := &s.cfg
	hc := s.im.opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	max := s.maxResponse()
	{
		c := *hc
		base := c.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		if len(cfg.Headers) > 0 {
			home, _ := url.Parse(cfg.URL) // Check has parsed it
			base = &impHeaderTransport{base: base, headers: cfg.Headers, home: home}
		}
		c.Transport = &impLimitTransport{base: base, max: int64(max), bad: bad, info: info}
		hc = &c
	}
	switch cfg.transport() {
	case TransportStdio:
		cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
		cmd.Env = os.Environ()
		for k, v := range cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = &impLogWriter{log: s.im.log, server: cfg.Name}
		raw := &impRawStdio{pending: map[string]chan *jsonrpc.Response{}, peeks: map[any]impPeek{}}
		return &impFrameTransport{Transport: &impProcess{cmd: cmd, grace: s.im.opts.KillGrace, name: cfg.Name, log: s.im.log}, bad: bad, raw: raw, info: info}, raw, nil
	case TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxEventSize: max}, nil, nil
	}
	raw := &impRawHTTP{hc: hc, url: cfg.URL, oauth: s.oauth, relays: relays, elicit: s.impElicitHandler()}
	// The importer reconnects by itself, with its own backoff; the SDK's
	// retries of the standalone stream would only delay noticing an outage.
	// Not wrapped as a stdio transport is: the SDK asks its HTTP
	// connection for more than mcp.Connection's methods.
	return &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxRetries: 1, OAuthHandler: s.oauth, MaxEventSize: max}, raw,
		func(cs *mcp.ClientSession) { raw.cs.Store(cs) }
}

// maxResponse is the server's MaxResponse, else the importer's.
func (s *impServer) maxResponse() int {
	return cmp.Or(s.cfg.MaxResponse, s.im.opts.MaxResponse, DefaultMaxResponse)
}

// impDial opens a session. The transport's context lives as long as the
// session (the SSE transport reads its stream under it), so the handshake is
// bounded by a timer and by ctx instead of by a context with a deadline.
func (s *impServer) impDial(ctx context.Context) (*impSession, error) {
	relays := newImpRelays(s.cfg.Name)
	client := mcp.NewClient(&mcp.Implementation{Name: "wield", Version: "1"}, &mcp.ClientOptions{
		Logger:             s.im.log,
		ElicitationHandler: s.impElicitHandler(),
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			relays.onProgress(r.Params)
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			relays.onLog(r.Params)
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case s.refresh <- struct{}{}:
			default:
			}
		},
	})
	life, cancel := context.WithCancel(s.ctx)
	stopTimer := time.AfterFunc(s.im.opts.ConnectTimeout, cancel)
	stopCtx := context.AfterFunc(ctx, cancel)
	bad := new(atomic.Pointer[string])
	info := newImpTaskInfo(cmp.Or(s.cfg.MaxTools, s.im.opts.MaxTools))
	tr, raw, bind := s.impTransport(bad, info, relays)
	cs, err := client.Connect(life, tr, nil)
	timerStopped, ctxStopped := stopTimer.Stop(), stopCtx()
	switch {
	case err == nil && (!timerStopped || !ctxStopped):
		_ = cs.Close()
		err = errors.New("handshake interrupted")
	case err == nil:
		if bind != nil {
			bind(cs)
		}
		frames, _ := tr.(*impFrameTransport)
		return &impSession{cs: cs, cancel: cancel, bad: bad, relays: relays, raw: raw, tasks: info, frames: frames}, nil
	}
	cancel()
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("%w (%w)", ctx.Err(), err)
	case !timerStopped:
		err = fmt.Errorf("no answer within %s (%w)", s.im.opts.ConnectTimeout, err)
	}
	return nil, fmt.Errorf("connect to mcp server %q: %w", s.cfg.Name, err)
}

// impSession is one live connection to a server.
type impSession struct {
	cs     *mcp.ClientSession
	cancel context.CancelFunc
	once   sync.Once
	// bad says what was wrong with a message the server sent that could
	// not be read (which ended the session); nil while all were read.
	bad *atomic.Pointer[string]
	// relays pass what the server sends during calls on to their MCP
	// clients (client_relay.go).
	relays *impRelays
	// raw makes the requests of tasks beside the session, nil when the
	// transport has none (SSE); tasks is what the session learnt of its
	// server's tasks (client_tasks.go).
	raw   impRawCaller
	tasks *impTaskInfo
	// frames is a stdio server's transport, nil for HTTP.
	frames *impFrameTransport
}

// badFrame is why the server's last message could not be read, or "".
func (x *impSession) badFrame() string {
	if p := x.bad.Load(); p != nil {
		return *p
	}
	return ""
}

// impFrameTransport is a stdio transport whose connection remembers why it
// could not read a message of the server's, so that a call lost to a
// misbehaving server is told apart from a server that went away.
type impFrameTransport struct {
	mcp.Transport
	bad  *atomic.Pointer[string]
	raw  *impRawStdio
	info *impTaskInfo
	conn atomic.Pointer[impFrameConn] // once connected
}

func (t *impFrameTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	fc := &impFrameConn{Connection: c, bad: t.bad, raw: t.raw, info: t.info, dead: make(chan struct{}), asked: map[jsonrpc.ID]int{}}
	if p, ok := t.Transport.(*impProcess); ok {
		fc.abort = p.abort
	}
	if t.raw != nil {
		t.raw.conn = fc
	}
	t.conn.Store(fc)
	return fc, nil
}

// abort stops the server of a connection that can no longer be read, so
// that the go-sdk's writes to it, which nothing else interrupts, fail
// instead of waiting for it to read them (see impFrameConn.abort).
func (t *impFrameTransport) abort() {
	if fc := t.conn.Load(); fc != nil && fc.abort != nil {
		select {
		case <-fc.dead:
			fc.abort()
		default:
		}
	}
}

// The most requests of a server's own (ping, roots/list, elicitation) that
// may await wield's answers at once, and the most bytes of their params:
// the go-sdk runs each on a goroutine of its own, holding the request,
// until its answer is written, and a server that does not read its stdin
// lets no answer be written. Past either the server's connection is
// reset, as for a message wield cannot read.
const (
	impMaxAsked      = 64
	impMaxAskedBytes = 32 << 20
)

// impFrameConn is also where the requests of tasks are made beside the
// go-sdk's (raw), and their answers taken out (client_tasks.go).
type impFrameConn struct {
	mcp.Connection
	bad      *atomic.Pointer[string]
	raw      *impRawStdio
	info     *impTaskInfo
	dead     chan struct{} // closed once a read has failed
	deadOnce sync.Once
	// abort stops the server (its stdin closed, then signals as when the
	// connection closes), at once and in the background; nil when the
	// transport has no process.
	abort func()

	mu         sync.Mutex
	asked      map[jsonrpc.ID]int // the server's requests awaiting an answer: their params' bytes
	askedBytes int
}

func (c *impFrameConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err == nil {
			err = c.ask(m)
		}
		if err != nil {
			if why := impFrameProblem(err); why != "" {
				c.bad.CompareAndSwap(nil, &why)
			}
			c.deadOnce.Do(func() { close(c.dead) })
			return m, err
		}
		if c.raw != nil && c.raw.read(m, c.info) {
			continue
		}
		return m, nil
	}
}

// ask counts a request of the server's until its answer is written, and
// fails past impMaxAsked requests or impMaxAskedBytes: the server is then
// stopped, which fails the go-sdk's writes of the answers still waiting
// (its connection cannot close while they wait).
func (c *impFrameConn) ask(m jsonrpc.Message) error {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return nil
	}
	c.mu.Lock()
	n := len(req.Params)
	if prev, ok := c.asked[req.ID]; ok {
		c.askedBytes -= prev // the go-sdk answers a repeated ID with an error
	}
	over := len(c.asked) >= impMaxAsked || c.askedBytes+n > impMaxAskedBytes
	if !over {
		c.asked[req.ID] = n
		c.askedBytes += n
	}
	c.mu.Unlock()
	if !over {
		return nil
	}
	why := fmt.Sprintf("more than %d requests of its own (or %d MiB of them) without waiting for wield's answers", impMaxAsked, impMaxAskedBytes>>20)
	c.bad.CompareAndSwap(nil, &why)
	if c.abort != nil {
		c.abort()
	}
	return errImpAsked
}

// errImpAsked is the failed read of a server that asks too much at once.
var errImpAsked = errors.New("the mcp server sent too many requests without waiting for their answers")

func (c *impFrameConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if c.raw != nil {
		c.raw.wrote(m)
	}
	err := c.Connection.Write(ctx, m)
	if resp, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if n, ok := c.asked[resp.ID]; ok {
			delete(c.asked, resp.ID)
			c.askedBytes -= n
		}
		c.mu.Unlock()
	}
	return err
}

// impFrameProblem says what was wrong with a message that could not be
// read, in words for a model after "the server sent", or "" when the read
// failed for another reason (the connection closed).
func impFrameProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch msg := err.Error(); {
	case strings.Contains(msg, "exceeded the configured maximum line length"):
		return fmt.Sprintf("a message over %d MiB, which wield could not read", mcp.DefaultMaxLineLength>>20)
	case errors.As(err, &syn), strings.Contains(msg, "invalid trailing data"), strings.Contains(msg, "invalid character"):
		return "a line that is not JSON, which wield could not read"
	case errors.As(err, &typ):
		return "JSON that is not a JSON-RPC message, which wield could not read"
	}
	return ""
}

func (x *impSession) close() {
	x.once.Do(func() {
		if x.frames != nil {
			// A connection that can no longer be read may have answers
			// waiting to be written to a server that does not read them:
			// the go-sdk's Close waits for those writes.
			x.frames.abort()
		}
		_ = x.cs.Close()
		x.cancel()
	})
}

// impLogWriter logs a stdio server's stderr, line by line, at debug level.
type impLogWriter struct {
	log    *slog.Logger
	server string
	mu     sync.Mutex
	buf    []byte
}

func (w *impLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.log.Debug("mcp server stderr", "server", w.server, "line", string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 { // a server that never ends its line
		w.log.Debug("mcp server stderr", "server", w.server, "line", string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(p), nil
}
