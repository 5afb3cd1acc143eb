package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/mcpbridge"
)

// mcpFlags are the flags of `wield mcp`.
type mcpFlags struct {
	http           string
	toolset        string
	stateless      bool
	public         bool
	allowedHosts   []string
	allowedOrigins []string
	grace          time.Duration
	code           bool
	taskAfter      taskAfterFlag
}

func (a *app) mcpCommand() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the tools to MCP clients, over stdio or streamable HTTP",
		Long: `Serve the tools as an MCP server. Every call goes through the engine:
validation, permissions, limits and records, as for any other caller.

By default the server speaks MCP over stdin and stdout, as desktop clients
start local servers; logs go to stderr only. With --http it serves streamable
HTTP instead: the tools at /mcp and each toolset at /mcp/{toolset}. It listens
on loopback addresses only unless --public is given, and refuses requests whose
Host or Origin header names another site.

A tool that needs confirmation asks the MCP client's user (by elicitation)
when the client can: in a session mid-call, or for a 2026-07-28 client by
answering input_required, whose signed requestState the retry brings back
with the answer; otherwise the call waits in the approval inbox
('wield approvals').

Call records are readable as the resources wield://calls/{id} and
wield://calls/{id}/output.`,
		Example: `  wield mcp
  wield mcp --toolset research
  wield mcp --code
  wield mcp --http 127.0.0.1:7421

  # In a desktop client's configuration:
  {"mcpServers": {"wield": {"command": "wield", "args": ["mcp"]}}}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.taskAfter.set = cmd.Flags().Changed(taskAfterName)
			return a.mcp(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	f.taskAfter.add(fl)
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP on this address (host:port) instead of stdio")
	fl.StringVar(&f.toolset, "toolset", "", "serve only this toolset")
	fl.BoolVar(&f.code, "code", false, "serve one tool, run_program: clients write Starlark programs that call the other tools (docs/programs.md)")
	fl.BoolVar(&f.stateless, "stateless", false, "with --http: no sessions; the server cannot ask clients anything, so confirmations wait in the inbox")
	fl.BoolVar(&f.public, "public", false, "with --http: allow an address that is not loopback")
	fl.StringSliceVar(&f.allowedHosts, "allowed-host", nil, "with --http: a Host header to accept besides loopback names (repeatable)")
	fl.StringSliceVar(&f.allowedOrigins, "allowed-origin", nil, "with --http: an Origin to accept besides loopback ones, like https://app.example (repeatable)")
	fl.DurationVar(&f.grace, "grace", 10*time.Second, "on shutdown (SIGTERM; over stdio, the end of stdin too), how long requests in flight may take to finish")
	cmd.AddCommand(a.mcpLoginCommand(), a.mcpLogoutCommand())
	return cmd
}

// mcp runs the server until ctx ends or, over stdio, the client leaves.
func (a *app) mcp(ctx context.Context, f mcpFlags) error {
	if f.http == "" && (f.stateless || f.public || len(f.allowedHosts) > 0 || len(f.allowedOrigins) > 0) {
		return usagef("--stateless, --public, --allowed-host and --allowed-origin go with --http")
	}
	if f.http != "" && !f.public {
		if err := mcpLoopback(f.http); err != nil {
			return err
		}
	}
	if f.code {
		if f.toolset != "" {
			return usagef("--code serves run_program alone; it does not go with --toolset")
		}
		if a.programs == "" {
			a.programs = "wait"
			if a.cfg != nil && a.cfg.Programs.OnApproval != "" {
				a.programs = a.cfg.Programs.OnApproval // wield.yaml's programs.on_approval
			}
		}
		f.toolset = programsToolset
	}
	log := slog.New(shutdownQuiet{ctx, slog.NewTextHandler(a.stderr, nil)})
	// With an OTLP endpoint configured, every tools/call and every call is
	// a span, as with serve.
	tr, err := startTraces(ctx, log)
	if err != nil {
		return err
	}
	defer tr.stop()
	return a.withStore(ctx, func(store wield.Storage) error {
		reg, eng, err := a.mcpSetup(tr.calls(store), log)
		if err != nil {
			return err
		}
		defer func() {
			// The server drained its requests: calls cut then have a
			// moment to record how they ended.
			ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cutMargin)
			defer cancel()
			if err := eng.Close(ectx); err != nil {
				log.Warn("shutdown: engine", "err", err)
			}
		}()
		if f.toolset != "" {
			if _, ok := reg.Toolset(f.toolset); !ok {
				return usagef("--toolset %q: no such toolset", f.toolset)
			}
		}
		mopts := &mcpbridge.ServerOptions{
			Name:           "wield",
			Toolset:        f.toolset,
			Stateless:      f.stateless,
			Calls:          store,
			AllowedHosts:   f.allowedHosts,
			AllowedOrigins: f.allowedOrigins,
			Logger:         log,
			MaxBody:        maxBody(a.cfg),
		}
		if a.cfg != nil {
			mcpOffer(mopts, a.cfg.MCP) // resources and prompts of the configuration
		}
		mopts.TaskAfter = f.taskAfter.of(a.cfg)
		if a.inbox != nil {
			if err := a.mcpInputRequired(mopts, store); err != nil {
				return err
			}
		}
		transport := "pipe" // stdio, in the conventions' words
		if f.http != "" {
			transport = "tcp"
		}
		tr.serve(reg, mopts, transport)
		// Decided calls whose callers left (before the start, or while
		// serving) run, or are refused, and are recorded, as serve does; the
		// inbox's Close ends this work.
		if a.inbox != nil {
			if _, err := a.inbox.Resume(context.WithoutCancel(ctx), eng); err != nil {
				return err
			}
		}
		srv := mcpbridge.NewServer(eng, reg, mopts)
		defer srv.Close()
		if f.http == "" {
			out, closeOut, err := stdioProtocol(a.stdout)
			if err != nil {
				return err
			}
			defer closeOut()
			go releaseAfterStart(log)
			// The end of the input is held back until what was asked before
			// it is answered (within --grace): a call waiting for a person's
			// approval ends then, as on a shutdown, its approval pending.
			d := newStdioDrain(ctx, a.stdin, out, f.grace, eng.EndApprovalWaits)
			// The first answer (initialize's) runs code once that serving
			// does not need again; over stdio it may come before or while the
			// release above runs, so the pages are given back once more after it.
			var once sync.Once
			w := d.writer()
			return srv.ServeStdio(ctx, d, writerFunc(func(p []byte) (int, error) {
				n, err := w.Write(p)
				once.Do(func() { go releaseAfterStart(log) })
				return n, err
			}))
		}
		return a.mcpHTTP(ctx, srv, eng, f, log)
	})
}

// mcpSetup is setup with the engine's approver asking MCP clients first.
func (a *app) mcpSetup(store wield.Storage, _ *slog.Logger) (*wield.Registry, *engine.Engine, error) {
	a.wrapApprover = func(fallback wield.Approver) wield.Approver { return mcpbridge.NewApprover(fallback) }
	a.serving = true
	return a.setup(store)
}

// mcpLoopback refuses an address that is not on a loopback interface.
func mcpLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--http %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("--http %q is not a loopback address: MCP servers are usually local; add --public to listen there", addr)
}

// mcpHTTP serves streamable HTTP until ctx ends. The first line on stderr
// is "listening on http://HOST:PORT/mcp".
func (a *app) mcpHTTP(ctx context.Context, srv *mcpbridge.Server, eng *engine.Engine, f mcpFlags, log *slog.Logger) error {
	ln, err := net.Listen("tcp", f.http)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer httptool.Listening(ln.Addr())() // the tools' guard refuses this server
	// A client's standing event stream (GET) lasts as long as its session:
	// shutting down ends those streams, and lets calls in flight finish.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	h := srv.Handler()
	bodyTimeout, maxConns := serverLimits(a.cfg)
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen" {
				rctx, cancel := context.WithCancel(r.Context())
				defer cancel()
				defer context.AfterFunc(streams, cancel)()
				r = r.WithContext(rctx)
			}
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       bodyTimeout, // not the GET streams: net/http lifts it once a body is read
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(endStreams)
	// A tasks/result waiting for a task that runs on another server
	// sharing the store ends at once too, told to ask again.
	hs.RegisterOnShutdown(srv.EndWaits)
	// So do the calls waiting for a person's approval: it stays pending.
	hs.RegisterOnShutdown(eng.EndApprovalWaits)
	// base is the context of every request: calls in flight outlive ctx
	// for the grace period, then are canceled with a cause they report.
	base, cancelBase := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelBase(context.Canceled)
	hs.BaseContext = func(net.Listener) context.Context { return base }
	closeUnusedOnShutdown(hs)
	go returnMemory(ctx, srv.Sessions)
	fmt.Fprintf(a.stderr, "listening on http://%s/mcp\n", ln.Addr())
	go releaseAfterStart(log)
	done := make(chan error, 1)
	// The MCP fast path's calls learn of a client gone away from their
	// connection, not by watching every request's context, as under serve.
	sl := mcpbridge.WatchConns(hs, httpapi.LimitListener(ln, maxConns, log))
	go func() { done <- hs.Serve(sl) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	grace, _, release := gracePeriod(f.grace, log)
	defer release()
	drain(hs, grace, cancelBase, log)
	serr := <-done
	srv.DrainTasks(grace) // MCP tasks finish within the grace period too
	if !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", serr)
	}
	return nil
}

// shutdownQuiet leaves out the go-sdk's ERROR "server run cancelled",
// which it logs when the context of its Run ends: over stdio that is this
// command's own shutdown (Ctrl-C, SIGTERM), no error.
type shutdownQuiet struct {
	ctx context.Context
	slog.Handler
}

func (h shutdownQuiet) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "server run cancelled" && h.ctx.Err() != nil {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h shutdownQuiet) WithAttrs(attrs []slog.Attr) slog.Handler {
	return shutdownQuiet{h.ctx, h.Handler.WithAttrs(attrs)}
}

func (h shutdownQuiet) WithGroup(name string) slog.Handler {
	return shutdownQuiet{h.ctx, h.Handler.WithGroup(name)}
}

// writerFunc is a function as an io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
