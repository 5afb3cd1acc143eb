package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/internal/logtext"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/toolfile"
	"github.com/wieldhq/wield/ui"
)

// defaultAddr is where `wield serve` listens without --addr or server.addr.
const defaultAddr = "127.0.0.1:7420"

// serveFlags are the flags of `wield serve`.
type serveFlags struct {
	addr      string
	addrFile  string
	keys      string
	logFormat string
	logLevel  string
	records   string
	grace     time.Duration
	heartbeat time.Duration
	pprof     string
	taskAfter taskAfterFlag
}

func (a *app) serveCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the tools over HTTP: REST API, events, metrics, web console and MCP",
		Long: `Serve the tools over HTTP: the REST API under /v1 (described at /openapi.json),
Server-Sent Events at /v1/events, Prometheus metrics at /metrics, and the probes
/healthz and /readyz.

Without API keys (server.keys in the configuration, or keys made with
'wield keys create') the server listens on the loopback interface only.
Once listening, it writes "listening on http://HOST:PORT" on stderr (and
the address to --addr-file).

Memory: wield sets neither GOGC nor a memory limit; Go's GOGC and
GOMEMLIMIT apply as set in the environment (measured choices in
docs/configuration.md, "Memory and profiles"). --pprof serves Go's
profiles on a loopback address of their own.`,
		Example: `  wield serve
  wield serve --addr :8080 --config wield.yaml
  wield serve --addr 127.0.0.1:0 --addr-file /tmp/wield.addr`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.taskAfter.set = cmd.Flags().Changed(taskAfterName)
			return a.serve(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	f.taskAfter.add(fl)
	fl.StringVar(&f.addr, "addr", "", "listen address (default: server.addr of the configuration, else "+defaultAddr+")")
	fl.StringVar(&f.addrFile, "addr-file", "", "write the bound address (host:port) to this file once listening")
	fl.StringVar(&f.keys, "keys", defaultKeysFile(), "the keys file that 'wield keys' manages (env WIELD_KEYS)")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.StringVar(&f.records, "records", "sync", "sync (a call returns once its record is written) or async (records are written in batches, SQLite or PostgreSQL; see their packages for what a crash may lose)")
	fl.DurationVar(&f.grace, "grace", 30*time.Second, "on shutdown, how long calls in flight may take to finish")
	fl.DurationVar(&f.heartbeat, "heartbeat", 15*time.Second, "how often an idle event stream gets a comment")
	fl.StringVar(&f.pprof, "pprof", "", "serve Go's profiles (net/http/pprof) at /debug/pprof/ on this loopback address, like 127.0.0.1:6060 (default: off)")
	return cmd
}

// newLogger builds the server's logger.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(logtext.New(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, usagef("--log-format %q: use text or json", format)
	}
}

// openServeStore opens the store of --db, in async mode when asked
// (SQLite or PostgreSQL: see their packages for the window a crash may
// lose).
func (a *app) openServeStore(ctx context.Context, records string) (wield.Storage, error) {
	switch records {
	case "sync":
		return openStore(ctx, a.db, false)
	case "async":
		return openStore(ctx, a.db, true)
	default:
		return nil, usagef("--records %q: use sync or async", records)
	}
}

// withConsole serves the web console at / beside the API: the API's paths
// go to the API (with its keys), every other GET to the console's files.
// A clean path under /v1/ or /mcp goes to the API without this mux, which
// routes it there anyway: the mux cost every REST and MCP call 1.5-4 µs
// and 3 allocations (a benchmark of the same mux, 2026-11-27, 2 shared
// cores), the API's own routing again. Any other path, one the mux would
// clean and redirect included, takes the mux as before.
func withConsole(api http.Handler) http.Handler {
	mux := consoleMux(api)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; apiPath(p) && r.Method != http.MethodConnect && path.Clean(p) == p {
			api.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// apiPath reports whether withConsole's mux routes path to the API, were
// it clean: the REST API's and the MCP endpoints' paths.
func apiPath(p string) bool {
	return strings.HasPrefix(p, "/v1/") || p == "/mcp" || strings.HasPrefix(p, "/mcp/")
}

// consoleMux routes the API's paths to api and the others to the console.
func consoleMux(api http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	for _, p := range []string{"/v1/", "/openapi.json", "/healthz", "/readyz", "/metrics", "/mcp", "/mcp/"} {
		mux.Handle(p, api)
	}
	mux.Handle("/", ui.Handler())
	return mux
}

// browserGuard keeps web pages out of a server that has no keys (and so
// listens on loopback only). A page on another port of this machine is
// another origin too, and browsers mark its requests "same-site", so
// loopback is not enough: a request must name a loopback host (no DNS
// rebinding); carry no Origin or exactly the server's own (scheme, host
// and port of the request); be marked by the browser (Sec-Fetch-Site)
// "same-origin", "none" or not at all; and, when it changes something,
// have a JSON body (Content-Type: application/json), which no form,
// beacon or text/plain fetch can send without a CORS preflight, and the
// server answers no preflight. Programs (curl, SDKs) send neither Origin
// nor Sec-Fetch-Site. Refusals are 403 in the API's error shape.
func browserGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refuse := func(why string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"error":{"code":"forbidden","message":%q}}`+"\n", why)
		}
		if !loopbackName(hostOnly(r.Host)) {
			refuse("this server has no API keys and answers only requests addressed to a loopback host")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) {
			refuse("this server has no API keys and refuses requests from web pages of other origins (Origin " + o + ")")
			return
		}
		switch site := r.Header.Get("Sec-Fetch-Site"); site {
		case "", "same-origin", "none":
		default:
			refuse("this server has no API keys and refuses requests from web pages of other origins (Sec-Fetch-Site: " + site + ")")
			return
		}
		if changes(r) && !jsonBody(r) {
			refuse("this server has no API keys and takes a " + r.Method + " only with Content-Type: application/json (what a web page cannot send without asking first)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether origin is the origin the request was sent
// to: its scheme, and its Host with the scheme's default port made
// explicit. localhost and 127.0.0.1 are different origins to a browser,
// and so to this test.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if !strings.EqualFold(u.Scheme, scheme) {
		return false
	}
	return strings.EqualFold(withPort(u.Host, scheme), withPort(r.Host, scheme))
}

// withPort is host with the scheme's default port when it names none.
func withPort(host, scheme string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// changes reports whether a request may change state and carries a body.
// A DELETE without a body (an MCP client ending its session) passes: a
// browser asks first (a CORS preflight) before any DELETE, and the
// server answers no preflight.
func changes(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	case http.MethodDelete:
		return r.ContentLength != 0
	}
	return true
}

// jsonBody reports whether the request declares a JSON body
// (application/json, parameters such as charset allowed).
func jsonBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		return true // what clients send; ParseMediaType allocates a map per request
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func loopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	// netip, not net.ParseIP, which allocates for every request; an
	// address with a zone is not one net.ParseIP takes.
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

// loopbackOnly returns addr with its host replaced by 127.0.0.1 unless
// the host is already a loopback address or localhost.
func loopbackOnly(addr string) (string, bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false, usagef("--addr %q: %v", addr, err)
	}
	if host == "localhost" {
		return addr, false, nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return addr, false, nil
	}
	return net.JoinHostPort("127.0.0.1", port), true, nil
}

// serve runs the server until ctx ends, then shuts down gracefully: event
// streams end, calls in flight finish (within --grace), and the store
// writes what it buffers before it closes.
func (a *app) serve(ctx context.Context, f serveFlags) (err error) {
	// One INFO line per call: lines that arrive together share a write.
	log, err := newLogger(newGroupWriter(a.stderr), f.logFormat, f.logLevel)
	if err != nil {
		return err
	}
	addr := f.addr
	if addr == "" && a.cfg != nil {
		addr = a.cfg.Server.Addr
	}
	if addr == "" {
		addr = defaultAddr
	}
	var configKeys []httpapi.Key
	if a.cfg != nil {
		for i, k := range a.cfg.Server.Keys {
			configKeys = append(configKeys, httpapi.ConfigKey(i, k))
		}
	}
	keys, err := httpapi.NewKeyring(f.keys, configKeys...)
	if err != nil {
		return err
	}
	if keys.Empty() {
		next, changed, err := loopbackOnly(addr)
		if err != nil {
			return err
		}
		if changed {
			log.Warn("no API keys are configured: listening on loopback only", "asked", addr, "addr", next)
		} else {
			log.Info("no API keys are configured: the API is open to local clients")
		}
		addr = next
	}

	if f.pprof != "" {
		if _, err := servePprof(ctx, f.pprof, log); err != nil {
			return err
		}
	}

	store, err := a.openServeStore(ctx, f.records)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	// The store closes last, within the grace period (or at once after a
	// second signal): what setup started over it (the engine's approval
	// inbox, the event relay, the Redis limiter, MCP imports) ends first,
	// so that nothing holds a connection the store's Close waits for.
	closeWithin, stopped := f.grace, false
	defer func() {
		a.close()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeWithin)
		defer cancel()
		ferr := store.Flush(cctx)
		cerr := store.Close(cctx)
		if e := errors.Join(ferr, cerr); e != nil && err == nil {
			err = fmt.Errorf("close store: %w", e)
		}
		if stopped {
			log.Info("stopped")
		}
	}()
	metrics := httpapi.NewMetrics()
	// With an OTLP endpoint configured (OTEL_EXPORTER_OTLP_ENDPOINT), every
	// request and every call is a span.
	tr, err := startTraces(ctx, log)
	if err != nil {
		return err
	}
	defer tr.stop()
	calls := tr.calls(store) // what the engine saves records to
	if tr.on() {
		log.Info("sending traces over OTLP")
	}
	observed := withDecisions(store, metrics.Observe(calls, log))
	// A confirm tool called over MCP asks the MCP client first (by
	// elicitation), else waits in the approval inbox like any other.
	a.wrapApprover = func(fallback wield.Approver) wield.Approver { return mcpbridge.NewApprover(fallback) }
	a.serving = true
	a.inboxLog = log
	reg, eng, err := a.setup(observed)
	if err != nil {
		return err
	}
	mopts := &mcpbridge.ServerOptions{Calls: store, Logger: log, ClientKey: mcpClientKey, MaxBody: maxBody(a.cfg)}
	if err := a.mcpInputRequired(mopts, observed); err != nil {
		return err
	}
	tr.serve(reg, mopts, "tcp")
	if a.cfg != nil {
		mcpOffer(mopts, a.cfg.MCP)
	}
	mopts.TaskAfter = f.taskAfter.of(a.cfg)
	mcpSrv := mcpbridge.NewServer(eng, reg, mopts)
	defer mcpSrv.Close()
	go returnMemory(ctx, mcpSrv.Sessions)

	// base is the context of every request: it outlives ctx so that calls in
	// flight finish, and ends when the grace period is over, with a cause
	// that the calls it cuts report.
	base, cancelBase := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelBase(context.Canceled)
	// One approval inbox: the engine's, which the API decides through too,
	// so a decision wakes the call that waits for it at once.
	inbox := a.inbox
	// Decided calls whose callers left (before the start, or while
	// serving) run, or are refused, and are recorded: the engine's inbox
	// takes them up, since it knows which callers still wait.
	if n, err := a.inbox.Resume(base, eng); err != nil {
		return err
	} else if n > 0 {
		log.Info("taking up approvals left from before the start", "count", n)
	}
	srv, err := httpapi.New(httpapi.Options{Engine: eng, Store: store, Approvals: inbox, Keys: keys,
		Metrics: metrics, Logger: log, Agents: a.agents, Heartbeat: f.heartbeat, MCP: mcpSrv.Handler(), Imports: a.imports(),
		AllowWorkflowBypass: a.cfg != nil && a.cfg.Server.AllowWorkflowBypass, SelfApproval: a.cfg != nil && a.cfg.Server.SelfApproval,
		MaxBody: maxBody(a.cfg)})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	// The tools' guard refuses this address from now on: a model must not
	// call the API of the server that runs it.
	defer httptool.Listening(ln.Addr())()
	bound := ln.Addr().String()
	if f.addrFile != "" {
		if err := os.WriteFile(f.addrFile, []byte(bound+"\n"), 0o644); err != nil {
			ln.Close()
			return fmt.Errorf("write --addr-file: %w", err)
		}
	}
	// Once this line is out (and the --addr-file written), the port
	// accepts connections: the listener is open, and they queue until
	// Serve takes them.
	fmt.Fprintf(a.stderr, "listening on http://%s\n", bound)
	go releaseAfterStart(log)
	handler := withConsole(srv.Handler())
	if keys.Empty() {
		// Without keys the server trusts whoever reaches it on loopback:
		// a web page in the user's browser must not be one of them.
		handler = browserGuard(handler)
	}
	if tr.on() {
		handler = tracedHandler(handler)
	}
	// A request must be in within body_timeout (net/http lifts the
	// deadline once the body is read: event streams are not limited), and
	// one address holds at most max_conns_per_client connections.
	bodyTimeout, maxConns := serverLimits(a.cfg)
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       bodyTimeout,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	closeUnusedOnShutdown(hs)
	endMCPStreamsOnShutdown(hs)
	// A tasks/result waiting for a task that runs on another server
	// sharing the store ends at once too, told to ask again: nothing here
	// would end it within the grace period.
	hs.RegisterOnShutdown(mcpSrv.EndWaits)
	// So do the calls waiting for a person's approval (up to its timeout,
	// 15 min): the approval stays pending, and once decided the call runs
	// or is refused, recorded under its ID, by the server that takes it up.
	hs.RegisterOnShutdown(eng.EndApprovalWaits)
	// The MCP fast path's calls learn of a client gone away from their
	// connection, not by watching every request's context.
	sl := mcpbridge.WatchConns(hs, httpapi.LimitListener(ln, maxConns, log))
	served := make(chan error, 1)
	go func() { served <- hs.Serve(sl) }()
	log.Info("serving", "addr", bound, "keys", !keys.Empty())

	select {
	case <-ctx.Done():
	case err := <-served:
		srv.Close()
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("shutting down: finishing calls in flight", "grace", f.grace)
	srv.Close() // event streams end, so Shutdown does not wait for them
	grace, hurried, release := gracePeriod(f.grace, log)
	defer release()
	drain(hs, grace, cancelBase, log)
	<-served
	// MCP tasks are no request's either, but were promised a result:
	// they have what is left of the grace period to finish.
	mcpSrv.DrainTasks(grace)
	// MCP calls parked on their clients' questions can be answered no
	// more (the listener is closed): they end now, and are recorded,
	// before the engine waits for its calls.
	mcpSrv.Close()
	// Work that is no request's (approved calls taken up by the inbox)
	// ends too, and says why.
	cancelBase(serverStopped("it stopped"))
	ectx, cancel := context.WithTimeout(context.Background(), cutMargin)
	defer cancel()
	if err := eng.Close(ectx); err != nil {
		log.Warn("shutdown: engine", "err", err)
	}
	if hurried() {
		closeWithin = cutMargin
	}
	stopped = true
	return nil
}

// mcpOffer passes the mcp: section of the configuration (instructions,
// resources, templates, prompts) to the MCP server.
func mcpOffer(o *mcpbridge.ServerOptions, m toolfile.MCPConfig) {
	o.SessionTimeout, o.MaxSessions, o.MaxSessionsPerClient = m.SessionIdle, m.MaxSessions, m.MaxSessionsPerClient
	o.Instructions = m.Instructions
	for _, r := range m.Resources {
		o.Resources = append(o.Resources, mcpbridge.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description,
			MIMEType: r.MIMEType, Text: r.Text, Blob: r.Blob, File: r.File})
	}
	for _, t := range m.ResourceTemplates {
		o.ResourceTemplates = append(o.ResourceTemplates, mcpbridge.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title,
			Description: t.Description, MIMEType: t.MIMEType, Text: t.Text, Completions: t.Completions})
	}
	for _, p := range m.Prompts {
		mp := mcpbridge.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			mp.Arguments = append(mp.Arguments, mcpbridge.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required, Values: a.Values})
		}
		for _, msg := range p.Messages {
			c := msg.Content
			mp.Messages = append(mp.Messages, mcpbridge.PromptMessage{Role: msg.Role, Content: mcpbridge.Content{Type: c.Type, Text: c.Text, Data: c.Data, MIMEType: c.MIMEType, URI: c.URI, Name: c.Name}})
		}
		for _, q := range p.Elicit {
			pq := mcpbridge.PromptQuestion{Key: q.As, Message: q.Message}
			if q.Schema != nil {
				pq.Schema = &jsonschema.Schema{}
				if err := json.Unmarshal(q.Schema, pq.Schema); err != nil {
					pq.Schema = nil // the server refuses the prompt: it says why
					pq.BadSchema = err
				}
			}
			mp.Elicit = append(mp.Elicit, pq)
		}
		o.Prompts = append(o.Prompts, mp)
	}
}
