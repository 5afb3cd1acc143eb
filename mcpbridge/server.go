package mcpbridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/llm"
)

// ServerOptions configure a [Server]; nil means the defaults.
type ServerOptions struct {
	// Name and Version identify the server to clients ("wield" and "dev"
	// when empty).
	Name, Version string
	// Instructions are shown to clients at initialisation.
	Instructions string
	// MaxBody bounds the body of an HTTP request, in bytes; zero or less
	// means the go-sdk's mcp.DefaultMaxRequestBodyBytes (4 MiB). A larger
	// body is answered 413, with a JSON-RPC error naming the limit, and is
	// not read past it.
	MaxBody int64
	// Toolset, when set, serves only that toolset: on /mcp and over stdio,
	// and no other toolset has an endpoint. When empty, /mcp and stdio
	// serve the whole registry and /mcp/{toolset} serves one toolset.
	Toolset string
	// Stateless serves streamable HTTP without sessions: each request stands
	// alone, so the server cannot ask the client anything (no elicitation,
	// no sampling) and confirm tools wait for the approval store.
	Stateless bool
	// JSONResponse answers HTTP requests with application/json instead of
	// an event stream when the answer is a single message.
	JSONResponse bool
	// SessionTimeout closes HTTP sessions idle for that long (or up to a
	// tenth more): no request of theirs in progress (a standing GET stream
	// is one) and none ended within it. Zero means [DefaultSessionTimeout];
	// a negative value keeps them until the client ends them (DELETE).
	SessionTimeout time.Duration
	// MaxSessions bounds the HTTP sessions open at once on every endpoint
	// together, and MaxSessionsPerClient those of one client (see
	// ClientKey). A request that would open one more is refused with HTTP
	// 503 or 429 and a JSON-RPC error of code [CodeSessionLimit] that says
	// how to free a place. Zero means [DefaultMaxSessions] and
	// [DefaultMaxSessionsPerClient]; a negative value sets no bound.
	MaxSessions, MaxSessionsPerClient int
	// ClientKey names the client of a request, for MaxSessionsPerClient:
	// the API key it presents, say. Nil, or an empty name, means the
	// request's remote IP address.
	ClientKey func(*http.Request) string
	// Caller is who the calls are made as. An empty ID becomes "mcp:" and
	// the client's name, an empty Type [wield.CallerDirect], and an empty
	// ConversationID the MCP session's ID, so that a session's calls are
	// recorded together.
	Caller wield.Caller
	// Calls, when set, makes call records readable as the resources
	// wield://calls/{id} and wield://calls/{id}/output (see [ResourceURI]).
	Calls wield.CallReader
	// AllowedHosts are Host header values accepted besides loopback names
	// when the server is reached on a loopback address; AllowedOrigins are
	// Origin header values ("https://app.example") accepted besides
	// loopback origins and the request's own host. See [Server.Handler].
	AllowedHosts, AllowedOrigins []string
	// ProtocolVersions are the MCP versions offered, newest first, each
	// one of mcp.SupportedProtocolVersions (NewServer panics otherwise);
	// nil means [ProtocolVersions]. Leaving out 2026-07-28 refuses the
	// stateless era; leaving out every older one refuses the handshake.
	ProtocolVersions []string
	// DisableFastPath serves every HTTP request through the go-sdk. By
	// default tools/call and tools/list are answered by wield itself when
	// nothing in the request needs the SDK (see [Server.Handler]); the
	// answers are the same, for a fraction of the CPU.
	DisableFastPath bool
	// Logger receives what goes wrong inside the server (never sent to
	// clients); nil means slog.Default().
	Logger *slog.Logger
	// Trace, when set, starts the span of each tools/call the server
	// answers (cmd/wield sets it when it traces); see [TraceRequest]. It
	// returns the context the call runs under (the span current in it)
	// and the function that ends the span with the error type: "" for a
	// success, "tool_error" for a result with isError, the JSON-RPC
	// error's code otherwise.
	Trace func(ctx context.Context, r TraceRequest) (context.Context, func(errorType string))
	// Resources, ResourceTemplates and Prompts are offered to clients
	// besides the tools, on every endpoint (see [Resource],
	// [ResourceTemplate] and [Prompt]). With any of them, clients may
	// subscribe to resources and ask for completions of prompt arguments
	// and template variables. NewServer panics on a resource template or
	// prompt that is not complete (a missing name, a template that does
	// not parse, a message whose role or content is wrong, a prompt
	// defined twice).
	Resources         []Resource
	ResourceTemplates []ResourceTemplate
	Prompts           []Prompt
	// ResourcePoll is how often the files of Resources are checked for
	// changes, which subscribed clients are told of (2 s when zero; a
	// negative value checks none).
	ResourcePoll time.Duration
	// InputRequired, when set, asks the person at a 2026-07-28 client that
	// can elicit to approve its confirm calls in the protocol
	// (input_required and a signed requestState; see
	// [InputRequiredOptions]); without it such calls wait in the approval
	// inbox. NewServer panics on a key shorter than [MinStateKey] or a nil
	// Approvals.
	InputRequired *InputRequiredOptions
	// TaskAfter, when positive, makes a task of any tools/call still
	// running after that long, from a 2026-07-28 client that declared the
	// Tasks extension (io.modelcontextprotocol/tasks): the call goes on as
	// the task, under the same ID and record (see server_tasks_after.go).
	// Zero or negative: only tools marked task are. Needs Calls to keep
	// call IDs (wield.CallIDReservations).
	TaskAfter time.Duration
	// TaskLease is how long the lease a server holds on a task it runs
	// lasts without renewal (zero: [DefaultTaskLease]): a task whose
	// server was killed reads failed once it expires (see
	// server_tasks_lease.go). With a store that keeps leases
	// (wield.CallLeases).
	TaskLease time.Duration
}

// ProtocolVersions are the MCP versions a [Server] offers by default, newest
// first: 2026-07-28, whose requests stand alone (no session; see
// server/discover), and those of the initialize handshake, whose sessions
// let wield ask the client things in the middle of a call. Both eras are
// served on every endpoint, chosen per request (see [Server.Handler]).
var ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Server serves a registry's tools over MCP. Every call goes through the
// engine, so MCP clients get validation, permissions, limits, records and
// events like any other caller. The tool list follows the registry: tools
// added, updated or removed after start are listed (and clients told with
// notifications/tools/list_changed) as soon as the registry's bus reports
// them, or at the next tools/list for a registry without a bus.
type Server struct {
	eng  *engine.Engine
	reg  *wield.Registry
	opts ServerOptions
	log  *slog.Logger

	templates  []*resTemplate        // ResourceTemplates, compiled
	promptList []*srvPrompt          // Prompts, compiled, in order
	prompts    map[string]*srvPrompt // the same, by name

	sessions *srvSessions   // the HTTP sessions of every endpoint
	tasks    srvTasks       // the MCP tasks running here (server_tasks.go)
	parked   srvParkedCalls // calls waiting for their clients' answers (era_ask.go)
	// coreSessions are the tasks each 2025-11-25 session started, for
	// its tasks/list (server_tasks_core.go).
	coreSessions srvCoreSessionList

	mu        sync.Mutex
	endpoints map[string]*srvEndpoint // by toolset; "" is the whole registry
	stop      func()                  // ends the bus listener
	stopPoll  func()                  // ends the watch of resource files

	// lastClient is the client name of the last call without a session
	// and its caller ID (srvCallerNamed).
	lastClient atomic.Pointer[[2]string]

	// ending closes at EndWaits: the waits for tasks running on other
	// servers end (server_tasks_core.go).
	ending     chan struct{}
	endingOnce sync.Once
}

// srvEndpoint is one MCP server: the whole registry or one toolset.
type srvEndpoint struct {
	toolset string
	mcp     *mcp.Server
	http    *mcp.StreamableHTTPHandler // the handshake era's (stateless when the server is)
	// stateless serves the requests of the stateless era (2026-07-28):
	// the same mcp.Server without sessions (see server_era.go).
	stateless *mcp.StreamableHTTPHandler

	mu     sync.Mutex
	synced map[string]*wield.Tool // the tools the MCP server lists, as registered
	listed map[string]*mcp.Tool   // the same, as listed
	headed map[string]bool        // listed tools whose schema binds arguments to headers (x-mcp-header)
	warned map[*wield.Tool]bool   // tools left out, reported once
	// lists are the tools/list result, encoded, with cacheScope public
	// ([0]) and private ([1]); nil after a change.
	lists [2][]byte
	// taskList is list as a 2025-11-25 session with task tools is given
	// it (srvCoreList), made from the list taskFrom (that of list when it
	// is current); taskOK is false when the go-sdk answers instead.
	taskFrom []byte
	taskList []byte
	taskOK   bool
}

// NewServer returns a server of reg's tools, which runs calls through eng
// (whose registry reg should be). It panics when eng or reg is nil or a
// protocol version is unknown: programmer errors, found at start-up.
func NewServer(eng *engine.Engine, reg *wield.Registry, opts *ServerOptions) *Server {
	if eng == nil || reg == nil {
		panic("mcpbridge.NewServer: nil engine or registry")
	}
	s := &Server{eng: eng, reg: reg, endpoints: map[string]*srvEndpoint{}, ending: make(chan struct{})}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Name == "" {
		s.opts.Name = "wield"
	}
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	if s.opts.ProtocolVersions == nil {
		s.opts.ProtocolVersions = slices.Clone(ProtocolVersions)
	}
	if s.opts.MaxBody <= 0 {
		s.opts.MaxBody = mcp.DefaultMaxRequestBodyBytes
	}
	for _, v := range s.opts.ProtocolVersions {
		if !slices.Contains(mcp.SupportedProtocolVersions(), v) {
			panic(fmt.Sprintf("mcpbridge.NewServer: protocol version %q is not one the go-sdk speaks (%v)", v, mcp.SupportedProtocolVersions()))
		}
	}
	if o := s.opts.InputRequired; o != nil && (len(o.Key) < MinStateKey || o.Approvals == nil) {
		panic(fmt.Sprintf("mcpbridge.NewServer: InputRequired needs a key of at least %d bytes and an approval store", MinStateKey))
	}
	s.sessions = newSrvSessions(&s.opts)
	s.sessions.forget = s.coreSessions.forget
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	for _, rt := range s.opts.ResourceTemplates {
		t, err := resCompile(rt)
		if err != nil {
			panic("mcpbridge.NewServer: " + err.Error())
		}
		s.templates = append(s.templates, t)
	}
	s.prompts = map[string]*srvPrompt{}
	for _, p := range s.opts.Prompts {
		sp, err := srvCompilePrompt(p)
		if err != nil {
			panic("mcpbridge.NewServer: " + err.Error())
		}
		if s.prompts[p.Name] != nil {
			panic(fmt.Sprintf("mcpbridge.NewServer: prompt %q defined twice", p.Name))
		}
		s.prompts[p.Name] = sp
		s.promptList = append(s.promptList, sp)
	}
	s.stopPoll = s.resWatch()
	if bus := reg.Bus(); bus != nil {
		s.stop = bus.Listen(func(e *wield.Event) bool {
			return e.Type == wield.EventToolAdded || e.Type == wield.EventToolUpdated || e.Type == wield.EventToolRemoved
		}, func(wield.Event) { s.srvSyncAll() })
	}
	return s
}

// Close stops following the registry, ends the HTTP sessions still open
// (a stdio session ends with its transport) and cancels the tasks still
// running (see [Server.DrainTasks] to let them finish first).
func (s *Server) Close() {
	s.EndWaits()
	closed, cancel := context.WithCancelCause(context.Background())
	cancel(&wield.Error{Type: wield.ErrCanceled, Message: "the MCP server closed"})
	s.DrainTasks(closed)
	if s.stop != nil {
		s.stop()
	}
	s.stopPoll()
	s.sessions.closeAll()
}

// EndWaits ends at once what waits on this server for a task that runs
// on another server sharing its store (a 2025-11-25 tasks/result, the end
// a tasks/cancel waits for): a server that shuts down calls it, with
// [net/http.Server.RegisterOnShutdown], since such a wait would hold its
// exit the whole grace period. The task goes on where it runs; a
// tasks/result is answered HTTP 503 with Retry-After (its event stream,
// for a client that took one, closes without the result), to be asked
// again of a server sharing the store, and a tasks/cancel with the
// task's state now. Waits for the tasks running here go on: they end with
// the task, within the grace period ([Server.DrainTasks]). A task waiting
// for its client's answer (input_required) can get none once the server's
// listener is closed: its question fails at once with [ErrNoAnswer], and
// the task ends as its tool decides. Close calls it.
func (s *Server) EndWaits() { s.endingOnce.Do(func() { close(s.ending) }) }

// srvEnding reports whether EndWaits was called.
func (s *Server) srvEnding() bool {
	select {
	case <-s.ending:
		return true
	default:
		return false
	}
}

// srvEndingFor is what ends a wait for the task id: s.ending for a task
// not running here, else nil (it ends with the task).
func (s *Server) srvEndingFor(id string) <-chan struct{} {
	if s.tasks.local(id) != nil {
		return nil
	}
	return s.ending
}

// Sessions returns how many HTTP sessions are open, on every endpoint
// together.
func (s *Server) Sessions() int { return s.sessions.open() }

// ServeStdio serves the registry (or the toolset of
// [ServerOptions].Toolset) to one client over newline-delimited JSON-RPC on
// in and out, as desktop clients run local servers, until the client goes
// away or ctx ends. Nothing else may write to out.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ep, err := s.srvEndpoint(s.opts.Toolset)
	if err != nil {
		return fmt.Errorf("serve stdio: %w", err)
	}
	t := &mcp.IOTransport{Reader: srvReadCloser{in}, Writer: srvWriteCloser{out}}
	err = ep.mcp.Run(ctx, t)
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("serve stdio: %w", err)
	}
	return nil
}

type srvReadCloser struct{ io.Reader }

func (srvReadCloser) Close() error { return nil }

type srvWriteCloser struct{ io.Writer }

func (srvWriteCloser) Close() error { return nil }

// Handler serves streamable HTTP: the registry (or [ServerOptions].Toolset)
// at /mcp, and each toolset at /mcp/{toolset} (404 for an unknown one).
// Reached on a loopback address, it refuses (403) a Host header that is not
// a loopback name or one of AllowedHosts, and, wherever it listens, an
// Origin header that is not a loopback origin, the request's own host or
// one of AllowedOrigins: a web page cannot drive a local server through
// DNS rebinding or a cross-site request.
//
// The go-sdk's streamable transport decodes a request several times and
// answers even a single result as an event stream. Unless
// [ServerOptions].DisableFastPath is set, Handler answers the plain cases of
// tools/list and tools/call itself, with a JSON response built from the
// SDK's protocol types: no cursor and no _meta in the request, a session the
// SDK knows (or a stateless server), a client that declared neither
// elicitation nor sampling (a tool might ask it something, which the SDK
// must route). Everything else goes to the SDK.
//
// Both eras of MCP are served on every endpoint, chosen per request: a
// request whose Mcp-Protocol-Version header names 2026-07-28 stands alone
// (server/discover, tools/list, tools/call and the rest, through a
// stateless go-sdk handler over the same tools), every other request is of
// the initialize handshake and its sessions, as above. See server_era.go.
//
// Sessions are wield's to bound, on both paths: one idle for
// [ServerOptions].SessionTimeout is closed, and a request that would open
// one past MaxSessions or MaxSessionsPerClient is refused (see
// [CodeSessionLimit]).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		s.srvServeEndpoint(w, r, s.opts.Toolset)
	})
	mux.HandleFunc("/mcp/{toolset}", func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Toolset != "" {
			http.NotFound(w, r)
			return
		}
		s.srvServeEndpoint(w, r, r.PathValue("toolset"))
	})
	return s.srvGuard(mux)
}

func (s *Server) srvServeEndpoint(w http.ResponseWriter, r *http.Request, toolset string) {
	ep, err := s.srvEndpoint(toolset)
	if err != nil {
		http.Error(w, "no such toolset", http.StatusNotFound)
		return
	}
	srvNoteRequester(r)
	defer srvBodyBack(r)
	if s.srvCheckEnvelope(w, r) || s.srvServeTasks(w, r, ep) {
		return
	}
	if srvIsStatelessEra(r) && s.srvOffersStatelessEra() {
		s.srvServeStatelessEra(w, r, ep)
		return
	}
	if s.opts.Stateless {
		s.srvServeSDK(w, r, ep, nil)
		return
	}
	s.srvServeSessions(w, r, ep)
}

// srvEndpoint returns the MCP server of a toolset ("" for the registry),
// made on first use.
func (s *Server) srvEndpoint(toolset string) (*srvEndpoint, error) {
	s.mu.Lock()
	ep, ok := s.endpoints[toolset]
	s.mu.Unlock()
	if ok {
		return ep, nil
	}
	if toolset != "" {
		if _, ok := s.reg.Toolset(toolset); !ok {
			return nil, fmt.Errorf("toolset %q: %w", toolset, wield.ErrNotFound)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ep, ok := s.endpoints[toolset]; ok {
		return ep, nil
	}
	ep = s.srvNewEndpoint(toolset)
	s.endpoints[toolset] = ep
	return ep, nil
}

func (s *Server) srvNewEndpoint(toolset string) *srvEndpoint {
	ep := &srvEndpoint{toolset: toolset, synced: map[string]*wield.Tool{}, listed: map[string]*mcp.Tool{}, headed: map[string]bool{}, warned: map[*wield.Tool]bool{}}
	caps := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if s.opts.Calls != nil {
		caps.Resources = &mcp.ResourceCapabilities{}
	}
	if _, ok := s.opts.Calls.(wield.CallIDReservations); ok {
		caps.Extensions = map[string]any{TasksExtension: map[string]any{}}
	}
	mopts := &mcp.ServerOptions{
		Instructions:              s.opts.Instructions,
		Logger:                    srvQuiet(s.log),
		Capabilities:              caps,
		SupportedProtocolVersions: s.opts.ProtocolVersions,
		// A list answered through the SDK is marked as the fast path
		// marks it (srvPrivate).
		SetCacheable: func(ctx context.Context, req mcp.Request, c *mcp.Cacheable) {
			if s.srvPrivate(srvWithRequester(ctx, req)) {
				c.CacheScope = "private"
			}
		},
	}
	if len(s.opts.Resources) > 0 || len(s.templates) > 0 {
		mopts.SubscribeHandler, mopts.UnsubscribeHandler = s.srvSubscribe, s.srvUnsubscribe
	}
	if len(s.templates) > 0 || len(s.promptList) > 0 {
		mopts.CompletionHandler = s.srvComplete
	}
	ep.mcp = mcp.NewServer(&mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}, mopts)
	ep.mcp.AddReceivingMiddleware(s.srvEraMiddleware)
	// Sync before each tools/list too: a registry without a bus reports no
	// changes, and a toolset's membership changes without an event. And
	// note each HTTP session opened by an initialize, which the request
	// that opened it then binds to its client (srvServeSessions).
	ep.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				s.srvSync(ep)
			}
			res, err := next(ctx, method, req)
			if method == "tools/list" && err == nil {
				s.srvPolicyList(ctx, req, res)
			}
			if method == "initialize" && err == nil && !s.opts.Stateless {
				ss, ok := req.GetSession().(*mcp.ServerSession)
				if x := req.GetExtra(); ok && x != nil && x.Header != nil && x.Header.Get("Mcp-Session-Id") == "" {
					s.sessions.initialized(ss)
				}
			}
			return res, err
		}
	})
	if s.opts.Calls != nil {
		s.resAdd(ep)
	}
	s.srvAddResources(ep)
	s.srvAddPrompts(ep)
	s.srvSync(ep)
	ep.http = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ep.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:    s.opts.Stateless,
		JSONResponse: s.opts.JSONResponse,
		Logger:       srvQuiet(s.log),
		// srvCheckEnvelope refuses a larger body before the SDK reads it.
		MaxRequestBodyBytes: s.opts.MaxBody,
		// No SessionTimeout: the SDK would not see the fast path's
		// requests. srvSessions closes idle sessions instead.
		// Handler's guard checks Host as the SDK would, and also knows
		// AllowedHosts.
		DisableLocalhostProtection: true,
	})
	ep.stateless = s.srvStatelessHandler(ep)
	return ep
}

// srvTools returns the callable tools an endpoint serves, in registration
// order.
func (s *Server) srvTools(toolset string) []*wield.Tool {
	tools := s.reg.List(wield.Query{Toolset: toolset})
	return slices.DeleteFunc(tools, func(t *wield.Tool) bool { return !t.Callable() })
}

func (s *Server) srvSyncAll() {
	for _, ep := range s.srvEndpoints() {
		s.srvSync(ep)
	}
}

// srvEndpoints returns the endpoints made so far.
func (s *Server) srvEndpoints() []*srvEndpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.endpoints))
}

// srvSync makes the MCP server list what the registry holds now. A tool is
// registered with the SDK's raw API, so the SDK neither validates its
// arguments nor its output: the engine does.
func (s *Server) srvSync(ep *srvEndpoint) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	tools := s.srvTools(ep.toolset)
	want := make(map[string]bool, len(tools))
	var changed []*wield.Tool
	// A tool described per caller (run_program) is listed as a caller
	// without a policy or a scope sees it now (srvPolicyList describes it
	// for the others): its functions change with the registry. Under a
	// policy every list is described for its caller, so no description
	// is made here (it would cost the policy's decisions on every tool,
	// for each list, for a description no one is shown).
	described := map[string]*wield.Tool{}
	perCaller := s.eng.Policy() != nil
	for _, t := range tools {
		want[t.Name] = true
		if t.ForCaller != nil && !perCaller {
			if v := t.ForCaller(context.Background(), nil, wield.Caller{}, nil); v != nil {
				described[t.Name] = v
				if l := ep.listed[t.Name]; ep.synced[t.Name] == t && (l == nil || l.Description != v.Description) {
					changed = append(changed, t)
					continue
				}
			}
		}
		if ep.synced[t.Name] != t {
			changed = append(changed, t)
		}
	}
	var gone []string
	for name := range ep.synced {
		if !want[name] {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		for _, name := range gone {
			delete(ep.synced, name)
			delete(ep.listed, name)
			delete(ep.headed, name)
		}
		ep.lists = [2][]byte{}
		ep.mcp.RemoveTools(gone...)
	}
	if len(changed) == 0 {
		return
	}
	byName := make(map[string]*wield.Tool, len(changed))
	for _, t := range changed {
		byName[t.Name] = t
	}
	// leftOut reports a tool left out of the list, once per definition.
	leftOut := func(t *wield.Tool, problem string) {
		if t != nil && !ep.warned[t] {
			ep.warned[t] = true
			s.log.Warn("mcp server: tool left out", "tool", t.Name, "problem", problem)
		}
	}
	shown := make([]*wield.Tool, len(changed))
	for i, t := range changed {
		shown[i] = cmp.Or(described[t.Name], t)
	}
	listed, problems := llm.MCPTools(shown)
	for _, p := range problems {
		leftOut(byName[p.Tool], p.Message)
	}
	for _, mt := range listed {
		t := byName[mt.Name]
		if mt.InputSchema.Type != "object" {
			// The SDK wants "type": "object" exactly; a list of types
			// that includes it is left out rather than sent otherwise.
			leftOut(t, `the input schema's type must be exactly "object"`)
			continue
		}
		st := srvTool(mt, t)
		if err := srvAddTool(ep.mcp, st, s.srvHandler(ep)); err != nil {
			leftOut(t, err.Error())
			continue
		}
		ep.synced[t.Name] = t
		ep.listed[t.Name] = st
		ep.headed[t.Name] = srvBindsHeaders(st)
		ep.lists = [2][]byte{}
	}
	// A tool that now has problems and was listed before must go.
	var dropped []string
	for _, t := range changed {
		if ep.synced[t.Name] != t {
			if _, ok := ep.synced[t.Name]; ok {
				delete(ep.synced, t.Name)
				delete(ep.listed, t.Name)
				delete(ep.headed, t.Name)
				ep.lists = [2][]byte{}
				dropped = append(dropped, t.Name)
			}
		}
	}
	if len(dropped) > 0 {
		ep.mcp.RemoveTools(dropped...)
	}
}

// srvAddTool adds a tool, turning the SDK's panic on a tool it cannot
// list (its checks of schema annotations go beyond llm's) into an error:
// tools are added long after start-up, from the registry's events.
func srvAddTool(m *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("add tool %q: %v", t.Name, r)
		}
	}()
	m.AddTool(t, h)
	return nil
}

// The keys of wield's own entries in an exported tool's _meta, which
// another wield importing the tool reads back (see [Importer]): what the
// annotations cannot say.
const (
	// MetaPermission is the tool's effective permission: "auto",
	// "confirm" or "deny".
	MetaPermission = "wield/permission"
	// MetaTags are the tool's tags, a list of strings; absent without tags.
	MetaTags = "wield/tags"
)

// srvTool converts llm's tools/list entry of t to the SDK's type, with
// wield's meaning in _meta. A tool that needs confirmation is exported as
// destructive whatever its annotations say (unless read-only, where MCP
// gives the hint no meaning): a client that knows only MCP's hints then
// asks its user too.
func srvTool(mt llm.MCPTool, t *wield.Tool) *mcp.Tool {
	perm := t.EffectivePermission()
	destructive := mt.Annotations.DestructiveHint || (perm == wield.PermissionConfirm && !mt.Annotations.ReadOnlyHint)
	openWorld := mt.Annotations.OpenWorldHint
	st := &mcp.Tool{
		Name:        mt.Name,
		Title:       mt.Title,
		Description: mt.Description,
		InputSchema: srvObjectSchemas(mt.InputSchema),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    mt.Annotations.ReadOnlyHint,
			DestructiveHint: &destructive,
			IdempotentHint:  mt.Annotations.IdempotentHint,
			OpenWorldHint:   &openWorld,
		},
		Meta: mcp.Meta{MetaPermission: string(perm)},
	}
	if len(t.Tags) > 0 {
		st.Meta[MetaTags] = slices.Clone(t.Tags)
	}
	maps.Copy(st.Meta, mt.Meta) // the tool's examples and allowed callers (llm.MCPExamplesKey, llm.MCPCallersKey)
	if mt.OutputSchema != nil {
		// Only a non-nil schema: a nil *Schema in the interface would be
		// an output schema of null.
		st.OutputSchema = srvObjectSchemas(mt.OutputSchema)
	}
	return st
}

// srvInternal is what a client sees when the system failed: no detail.
var srvInternal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}

// srvHandler runs a tools/call through the engine. A failed call is a
// result with isError; only a failure of the system is a JSON-RPC error,
// and its text stays in the log.
func (s *Server) srvHandler(ep *srvEndpoint) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := srvToldUnknown(req); err != nil {
			return nil, err // run by a fast path already
		}
		ctx, stop := srvCancelOnPurpose(ctx)
		defer stop()
		if x := req.GetExtra(); s.opts.Trace != nil && x != nil && x.Header != nil {
			if id := x.Header.Get(srvRPCIDHeader); id != "" {
				ctx = context.WithValue(ctx, srvRPCIDKey{}, id)
			}
		}
		ctx = srvWithRequester(ctx, req)
		if in, client, ok := srvEraInputOf(req); ok {
			if x := req.GetExtra(); x != nil && x.Header != nil && x.Header.Get(srvClientHeader) != "" {
				ctx = context.WithValue(ctx, srvClientKey{}, x.Header.Get(srvClientHeader))
			}
			return s.srvEraCall(ctx, ep, req.Session, req.Params, s.srvCallerNamed(client), in)
		}
		res, err := s.srvCall(ctx, ep, req.Session, req.Params)
		if err != nil {
			return nil, err
		}
		return s.srvResult(res), nil
	}
}

// srvCancelOnPurpose returns ctx, whose cancellation by the client's
// notifications/cancelled carries [wield.ErrCallerCanceled] as its cause:
// the SDK cancels a request so, without a cause, while a connection that
// fails or closes gives its own. Why: a call the client canceled on
// purpose while it waited for approval ends that approval, one whose
// client went away does not (see [wield.CanceledOnPurpose]). stop releases
// what it holds.
func srvCancelOnPurpose(ctx context.Context) (context.Context, func()) {
	out, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	if dl, ok := ctx.Deadline(); ok {
		var stopDeadline context.CancelFunc
		out, stopDeadline = context.WithDeadline(out, dl)
		prev := cancel
		cancel = func(err error) { prev(err); stopDeadline() }
	}
	stopAfter := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		if cause == context.Canceled { //nolint:errorlint // exactly the SDK's cancellation by ID, not one that wraps it
			cause = wield.ErrCallerCanceled
		}
		cancel(cause)
	})
	return out, func() { stopAfter(); cancel(nil) }
}

// srvCall is a tools/call as the engine sees it, with the request in ctx for
// [Progress], [Log], [Elicit] and [Sample].
func (s *Server) srvCall(ctx context.Context, ep *srvEndpoint, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw) (*wield.Result, error) {
	return s.srvCallAs(ctx, ep, ss, p, s.srvCaller(ss))
}

// srvCallAs is srvCall made as caller: a request without a session names
// its client itself.
func (s *Server) srvCallAs(ctx context.Context, ep *srvEndpoint, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw, caller wield.Caller) (*wield.Result, error) {
	return s.srvCallIn(context.WithValue(ctx, srvRequestKey{}, &srvRequest{session: ss, params: p}), ep, ss, p, caller)
}

// srvCallIn is srvCallAs with the srvRequest in ctx already.
func (s *Server) srvCallIn(ctx context.Context, ep *srvEndpoint, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw, caller wield.Caller) (*wield.Result, error) {
	if ep.toolset != "" && !s.srvInToolset(ep.toolset, p.Name) {
		// Left the toolset since the last list: as unknown as any tool
		// the endpoint does not list.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	}
	ctx, end := s.srvTrace(ctx, ss, p)
	ctx = srvWithProgress(ctx, srvRequestFrom(ctx))
	// A scoped key's call, and its program's inner calls, stay in scope.
	res, err := s.eng.Call(ctx, wield.Call{Tool: p.Name, Arguments: p.Arguments, Caller: caller, Toolkit: s.srvReach(ctx)})
	end(res, err)
	if err != nil {
		s.log.Error("mcp server: call failed", "tool", p.Name, "err", err)
		return nil, srvInternal
	}
	if !res.OK && res.ErrorType == wield.ErrToolNotFound && res.Error == fmt.Sprintf(srvNotFound, p.Name) {
		// The engine answers so for a tool the policies hide from the
		// caller (or one gone since the list): as unknown to it as a tool
		// the server never listed, which the SDK refuses so.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	}
	return res, nil
}

// srvNotFound is the engine's answer to a call of a tool that does not
// exist for its caller (engine/lookup.go's msgNotFound).
const srvNotFound = "Can not find tool named '%s'"

func (s *Server) srvInToolset(toolset, tool string) bool {
	ts, ok := s.reg.Toolset(toolset)
	return ok && slices.Contains(ts.Tools, tool)
}

// srvCaller fills the configured caller with what the session says.
func (s *Server) srvCaller(ss *mcp.ServerSession) wield.Caller {
	c := s.opts.Caller
	if c.Type == "" {
		c.Type = wield.CallerDirect
	}
	if c.ID == "" {
		c.ID = srvClientID(ss)
	}
	if c.ConversationID == "" && ss != nil {
		c.ConversationID = ss.ID()
	}
	return c
}

// srvCallerNamed is the configured caller of a request without a session,
// from the client's name ("" when it gave none): as srvCaller makes it of
// a session the SDK made for the request alone.
func (s *Server) srvCallerNamed(client string) wield.Caller {
	c := s.opts.Caller
	if c.Type == "" {
		c.Type = wield.CallerDirect
	}
	if c.ID == "" {
		c.ID = "mcp"
		if client != "" {
			// A client calls again and again: the name of the last one
			// is kept rather than joined anew for every call.
			if last := s.lastClient.Load(); last != nil && last[0] == client {
				c.ID = last[1]
			} else {
				c.ID = "mcp:" + client
				s.lastClient.Store(&[2]string{client, c.ID})
			}
		}
	}
	return c
}

// srvClientID names the session's client: "mcp:" and the name it gave at
// initialisation, or "mcp" without one.
func srvClientID(ss *mcp.ServerSession) string {
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
			return "mcp:" + ip.ClientInfo.Name
		}
	}
	return "mcp"
}

// MetaCallID is the key, in a tools/call result's _meta, of the call's ID:
// what names its record among the resources ([ResourceURI]).
const MetaCallID = "wield/call_id"

// srvResult converts a result as [llm.MCPResult] does, to the SDK's type,
// with the call's ID in _meta and, when the output was cut to the budget
// and records are served, a link to the whole output.
func (s *Server) srvResult(r *wield.Result) *mcp.CallToolResult {
	m := llm.MCPResult(r)
	out := &mcp.CallToolResult{Content: make([]mcp.Content, len(m.Content), len(m.Content)+1), IsError: m.IsError}
	out.Meta = mcp.Meta{MetaCallID: r.CallID}
	for i, c := range m.Content {
		out.Content[i] = &mcp.TextContent{Text: c.Text}
	}
	if content, ok := srvContent(r); ok {
		out.Content = content // rich content, sent as it is (see [ContentKey])
	} else if m.StructuredContent != nil {
		out.StructuredContent = m.StructuredContent
	}
	if s.opts.Calls != nil && r.Metadata["truncated"] == true {
		out.Content = append(out.Content, &mcp.ResourceLink{
			URI:         ResourceURI(r.CallID, true),
			Name:        "call-output",
			Description: "The whole output; the text above was cut to fit the output budget.",
		})
	}
	return out
}

// srvQuiet passes on the SDK's warnings and errors, not its account of
// every session coming and going.
func srvQuiet(l *slog.Logger) *slog.Logger {
	return slog.New(srvLevelHandler{l.Handler()})
}

type srvLevelHandler struct{ slog.Handler }

func (h srvLevelHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn && h.Handler.Enabled(ctx, level)
}

func (h srvLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return srvLevelHandler{h.Handler.WithAttrs(attrs)}
}

func (h srvLevelHandler) WithGroup(name string) slog.Handler {
	return srvLevelHandler{h.Handler.WithGroup(name)}
}
