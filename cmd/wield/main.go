// Command wield is the tool engine's binary: list the tools, call one, and
// (as later capabilities land) serve them.
//
//	wield list [--json | --format openai|openai-strict|responses|responses-strict|anthropic|anthropic-strict|gemini|gemini-json-schema|mcp|xml|json-prompt] [--deferred [--load T]]
//	           [--category C] [--tag T] [--toolset S] [--agent A]
//	wield call NAME [--args JSON | key=value | key:=JSON ...] [--conversation ID] [--timeout D]
//	wield calls [--conversation ID] [--tool T] [--status ok|error] [--since 1h] [--limit N] [--json]
//	wield stats [--conversation ID] [--caller ID [--brief]] [--json]
//	wield validate [--dialect D] [PATH...]
//	wield parse [--format F] < reply.txt
//	wield chat --model URL/NAME [--agent FILE]
//	wield serve [--addr A] [--config F] [--tools DIR] [--db DSN]
//	wield mcp [--http ADDR] [--toolset NAME] [--stateless]
//	wield keys create|list|revoke; wield approvals list|approve ID|deny ID
//
// Every command takes --db sqlite:PATH | postgres://... (default: $WIELD_DB,
// else $XDG_STATE_HOME/wield/wield.db, else ~/.local/state/wield/wield.db).
//
// Exit codes: 0 when the call succeeded, 1 when it failed (the result says
// why), 2 for usage errors.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/wieldhq/wield/internal/safetext"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	_ "time/tzdata" // current_time knows every zone even on machines without tzdata

	_ "github.com/wieldhq/wield/cmd/wield/internal/memprofile" // heap profile sampling only with --pprof

	goredis "github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/memstore"
	wredis "github.com/wieldhq/wield/redis"
	"github.com/wieldhq/wield/toolfile"
	"github.com/wieldhq/wield/toolsearch"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitError carries an exit code through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// usageError marks errors of the command line, which exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Run runs the program as main does, for tests: it returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := &app{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	root := app.command()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	app.close()
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	default:
		// An error may carry a server's, a file's or a tool's text: its
		// control characters are escaped, its lines kept.
		fmt.Fprintln(stderr, "wield:", safetext.Text(err.Error()))
		if hint := keyHint(err, app.key); hint != "" {
			fmt.Fprintln(stderr, "wield:", hint)
		}
		var ue usageError
		if errors.As(err, &ue) || isCobraUsage(err) {
			return 2
		}
		return 1
	}
}

// keyHint says how to give the key --server asks for, when a running
// server refused the command's request for want of one: the server's own
// words name HTTP headers, which a person at the command line does not set.
func keyHint(err error, key string) string {
	var he *httpapi.Error
	if !errors.As(err, &he) || he.Code != httpapi.CodeUnauthorized {
		return ""
	}
	if key == "" {
		return "the server needs an API key: give --key KEY or set WIELD_KEY ('wield keys create' makes one)"
	}
	return "the server does not know the key of --key (or WIELD_KEY): 'wield keys list' shows the keys there are"
}

// isCobraUsage recognises cobra's own argument and flag errors, which are
// plain errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires at most"} {
		if len(msg) >= len(p) && containsFold(msg, p) {
			return true
		}
	}
	return false
}

func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

type app struct {
	// ctx is Run's: it ends on SIGINT or SIGTERM, which ends a wait for the
	// MCP servers too.
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	db             string   // --db
	tools          []string // --tools
	config         string   // --config
	server, key    string   // --server, --key: talk to a running server
	cfg            *toolfile.Config
	// configProblems are the --config file's problems, which a command
	// annotated tellsConfigProblems (validate) tells and counts with its
	// own; other commands write its warnings as it loads.
	configProblems toolfile.Problems
	importer       *mcpbridge.Importer // the configured MCP servers' tools, once setup ran
	agents         []string            // the agents the tool files define, once setup ran
	closers        []func() error      // run when the command ends
	// agentDocs are those agents' documents, once setup ran (not kept when
	// serve watches the files): chat runs them as sub-agents.
	agentDocs []*toolfile.Agent
	// wrapApprover, when set, wraps the engine's approver (serve and mcp
	// ask MCP clients first, by elicitation).
	wrapApprover func(wield.Approver) wield.Approver
	// inboxLog, when set (serve sets it), receives the approval inbox's
	// failures; inbox is the engine's approval inbox once setup ran with a
	// store, which serve has take up decisions whose callers left.
	inboxLog *slog.Logger
	// importsMu guards importsDone (serve's and mcp's background imports
	// of MCP servers have ended) and afterImports, what runs then.
	importsMu    sync.Mutex
	importsDone  bool
	afterImports []func()
	// mcpDown is set when a configured MCP server did not answer the
	// imports of a command that waits for them (list, call, ...).
	mcpDown bool
	warnMu  sync.Mutex // warnf's lines, from goroutines
	inbox   *approval.Inbox
	// asking is set while a confirm call's question waits on the terminal,
	// so that progress does not write over it.
	asking atomic.Bool
	// serving is set by the commands that run until stopped (serve, mcp):
	// only they relay events between servers; a one-shot command would
	// start a relay and exit before it carried anything.
	serving bool
	// programs: --programs, the run_program tool (see programs.go): "",
	// "wait" or "fail" (what an inner call needing approval does).
	programs string
}

// close releases what setup made (MCP connections), latest first.
func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		_ = a.closers[i]()
	}
	a.closers = nil
}

func (a *app) command() *cobra.Command {
	root := &cobra.Command{
		Use:           "wield",
		Short:         "A tool engine for AI agents",
		Long:          "wield defines, organises and safely runs the tools that AI agents call.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringVar(&a.db, "db", defaultDB(), "where records are kept: sqlite:PATH or postgres://... (env WIELD_DB)")
	root.PersistentFlags().StringSliceVar(&a.tools, "tools", nil, "folders (or files) of tool files to load beside the built-in tools (repeatable)")
	root.PersistentFlags().StringVar(&a.server, "server", os.Getenv("WIELD_SERVER"), "list, call, calls, stats, approvals and pins talk to this running server (http://host:port) instead (env WIELD_SERVER)")
	root.PersistentFlags().StringVar(&a.key, "key", os.Getenv("WIELD_KEY"), "the API key for --server (env WIELD_KEY)")
	root.PersistentFlags().StringVar(&a.programs, "programs", "", "offer run_program: models write short Starlark programs whose tool calls each go through the engine; --programs=fail stops a program at an inner call that needs approval instead of waiting, --programs=off turns off programs.enabled of wield.yaml (docs/programs.md)")
	root.PersistentFlags().Lookup("programs").NoOptDefVal = "wait"
	root.PersistentFlags().StringVar(&a.config, "config", "", "a wield.yaml or config.yml (docs/configuration.md): tool folders, timeouts, concurrency, store, HTTP allowances")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if a.config == "" {
			return nil
		}
		cfg, err := toolfile.LoadConfig(a.config)
		var ps toolfile.Problems
		tells := cmd.Annotations[tellsConfigProblems] != ""
		if tells && errors.As(err, &ps) {
			// validate tells the configuration's problems with the
			// others, and counts them.
			a.configProblems = ps
			return nil
		}
		if errors.As(err, &ps) {
			// The warnings first, as warnings; the error is the rest.
			var errs, warnings toolfile.Problems
			for _, p := range ps {
				if p.Warning {
					warnings = append(warnings, p)
				} else {
					errs = append(errs, p)
				}
			}
			writeProblems(a.stderr, warnings, nil)
			return errs
		}
		if err != nil {
			return err
		}
		if tells {
			a.configProblems = cfg.Warnings
		} else {
			writeProblems(a.stderr, cfg.Warnings, nil)
		}
		a.cfg = cfg
		a.tools = append(cfg.ToolDirs, a.tools...)
		if !cmd.Flags().Changed("db") && cfg.Store != "" {
			a.db = cfg.Store
		}
		return nil
	}
	root.AddCommand(a.listCommand(), a.callCommand(), a.callsCommand(), a.statsCommand(), a.validateCommand(), a.parseCommand(), a.chatCommand(), a.serveCommand(), a.keysCommand(), a.approvalsCommand(), a.mcpCommand(), a.pinsCommand(), a.policyCommand())
	return root
}

// builtinOptions configures the built-in tools from the configuration:
// file tools only with allowed_paths, web_search only with a provider,
// env tools only for env_allow's variables, network tools behind the guard.
// Artifacts live in store, or in memory for commands without one.
func (a *app) builtinOptions(store wield.Storage) builtin.Options {
	opts := builtin.Options{Net: builtin.NetOptions{Guard: &httptool.Guard{}}}
	if store != nil {
		opts.Artifacts = store
	} else {
		opts.Artifacts = memstore.NewArtifacts()
	}
	if c := a.cfg; c != nil {
		opts.Files.AllowedPaths = c.AllowedPaths
		opts.Files.AllowHardLinks = c.AllowHardLinks
		opts.Files.MaxReadBytes, opts.Files.MaxWriteBytes = c.MaxFileRead, c.MaxFileWrite
		opts.Env.Allow = c.EnvAllow
		opts.Net = builtin.NetOptions{Guard: c.Guard(), Timeout: c.NetworkTimeout, SecretNames: c.SecretNames}
		opts.Search = builtin.SearchOptions{Provider: c.WebSearch.Provider, APIKey: c.WebSearch.APIKey, MaxResults: c.WebSearch.MaxResults, BaseURL: c.WebSearch.BaseURL, Guard: c.Guard()}
	}
	return opts
}

// limiter is the configured limiter: this process's, or the one shared
// through Redis.
func (a *app) limiter(c *toolfile.Config) (limit.Limiter, error) {
	if c.LimiterBackend != "redis" {
		lim, err := limit.New(c.Concurrency)
		if err != nil {
			return nil, fmt.Errorf("%s: concurrency: %w", a.config, err)
		}
		return lim, nil
	}
	rdb, err := a.redisClient()
	if err != nil {
		return nil, err
	}
	prefix := c.Redis.Prefix
	if prefix == "" {
		prefix = "wield"
	}
	lim, err := wredis.New(rdb, &wredis.Options{Config: c.Concurrency, Prefix: prefix + ":limit", LeaseTTL: c.Redis.LeaseTTL, PollInterval: c.Redis.PollInterval})
	if err != nil {
		rdb.Close()
		return nil, fmt.Errorf("%s: concurrency: %w", a.config, err)
	}
	// Its lease renewals and release listener stop, then its connections
	// close (closers run after the engine's calls ended).
	a.closers = append(a.closers, func() error { return errors.Join(lim.Close(), rdb.Close()) })
	return lim, nil
}

// redisClient is a new client of the configured redis.url.
func (a *app) redisClient() (*goredis.Client, error) {
	ro, err := goredis.ParseURL(a.cfg.Redis.URL)
	if err != nil {
		return nil, fmt.Errorf("%s: redis.url: %w", a.config, err)
	}
	return goredis.NewClient(ro), nil
}

// importMCP connects to the configured MCP servers and registers their
// tools (named server__tool). A server that cannot be reached now, or has
// not listed its tools within its timeout (mcp_servers[].timeout, 10 s by
// default), is retried in the background, with a warning; its tools appear
// when it answers. The servers are imported concurrently, each under its
// own deadline, so a slow one cannot spend the others' time. serve and mcp
// do not wait at all: they listen at once, and the tools appear (with
// tool_added events) as their servers answer. A one-shot command waits at
// most the longest timeout, and a signal ends the wait. Pins of the tools'
// definitions are kept beside the default database, so a server that
// changes a tool later has it held.
func (a *app) importMCP(reg *wield.Registry, c *toolfile.Config) (*mcpbridge.Importer, error) {
	if err := os.MkdirAll(stateDir(), 0o700); err != nil {
		return nil, fmt.Errorf("mcp pins: %w", err)
	}
	pins, err := mcpbridge.OpenFilePins(pinsFile())
	if err != nil {
		return nil, fmt.Errorf("mcp pins: %w", err)
	}
	im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{Pins: pins, Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	a.closers = append(a.closers, im.Close)
	a.importer = im
	if a.serving {
		// `wield pins accept` without --server writes the pins file:
		// picked up here, without a restart.
		a.watchPins(im, pinsFile())
	}
	ctx := a.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // a.stderr and errs
		errs []error
	)
	for _, s := range c.MCPServers {
		// Checked here, so that a configuration error stops every command
		// before any server is dialled.
		if sc := mcpbridge.ServerConfig(s); sc.Check() != nil {
			err := sc.Check()
			return nil, fmt.Errorf("%s: mcp_servers: %w", a.config, err)
		}
	}
	var tokens oauthTokens
	for _, s := range c.MCPServers {
		// Each server is added by name now, and connected below, in the
		// background: tool files loaded next may name it in mcp entries.
		var connect func(context.Context) error
		var err error
		if o, ok := c.MCPOAuth[s.Name]; ok && s.Enabled {
			var oc *mcpbridge.OAuthConfig
			if oc, err = a.oauthConfig(s, o, &tokens); err == nil {
				connect, err = im.StartOAuth(mcpbridge.ServerConfig(s), oc)
			}
		} else {
			connect, err = im.Start(mcpbridge.ServerConfig(s))
		}
		if err != nil {
			if !a.serving {
				return nil, fmt.Errorf("%s: mcp_servers: %w", a.config, err)
			}
			a.warnf("warning: %s: mcp_servers: %v", a.config, err)
			continue
		}
		wg.Go(func() {
			err := connect(ctx)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil || ctx.Err() != nil:
			case errors.Is(err, mcpbridge.ErrUnavailable):
				// Nothing may listen yet on a first run: said where the
				// server is written, and tried again until it answers.
				a.warnf("%s: warning: mcp server %s (%s) does not answer now (%s); it is tried again in the background, and its tools appear when it answers",
					c.MCPServerAt[s.Name], s.Name, cmp.Or(s.URL, strings.Join(s.Command, " ")),
					strings.TrimPrefix(reasonOf(err), "add: "+mcpbridge.ErrUnavailable.Error()+": "))
				a.importsMu.Lock()
				a.mcpDown = true
				a.importsMu.Unlock()
			case a.serving: // serving already: the server is left out
				a.warnf("warning: %s: mcp_servers: %v", a.config, err)
			default:
				errs = append(errs, fmt.Errorf("%s: mcp_servers: %w", a.config, err))
			}
		})
	}
	if a.serving {
		// Close, among the closers, ends the imports under way.
		go func() {
			wg.Wait()
			a.importsMu.Lock()
			a.importsDone = true
			later := a.afterImports
			a.afterImports = nil
			a.importsMu.Unlock()
			if ctx.Err() == nil {
				for _, f := range later {
					f()
				}
				if err := offerSearch(reg); err != nil {
					mu.Lock()
					a.warnf("warning: %v", err)
					mu.Unlock()
				}
			}
		}()
		return im, nil
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, errors.New("interrupted while waiting for the mcp servers to list their tools")
	}
	return im, errors.Join(errs...)
}

// offerSearch registers search_tools when the catalog is large (over the
// whole registry, as it is at each call), so that clients that would rather
// not read every definition can find what they need; the full list stays.
// serve and mcp call it again once the MCP servers' first imports ended;
// toolsearch.Offer is the one place that registers it, the agent loop's
// too.
func offerSearch(reg *wield.Registry) error {
	_, err := toolsearch.Offer(reg, toolsearch.DefaultThreshold)
	return err
}

// mcpNamed reports whether name is a configured MCP server's tool
// (server__tool): serve and mcp import in the background, so a toolset or
// agent may name one before its server has answered.
func (a *app) mcpNamed(name string) bool {
	return a.serving && a.importable(name)
}

// reasonOf is the part of a connection error a user acts on: the failed
// dial ("dial tcp 127.0.0.1:3000: connect: connection refused") when there
// is one, else the whole error.
func reasonOf(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	return err.Error()
}

// setup builds the registry and engine every command works with; store,
// when not nil, keeps the records and the approvals.
func (a *app) setup(store wield.Storage) (*wield.Registry, *engine.Engine, error) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0), Logger: slog.New(slog.NewTextHandler(a.stderr, nil))})
	defaults, err := builtin.All(a.builtinOptions(store))
	if err != nil {
		return nil, nil, fmt.Errorf("built-in tools: %w", err)
	}
	// The built-ins are defaults: a tool file of the same name replaces one.
	if err := reg.RegisterDefaults(defaults...); err != nil {
		return nil, nil, fmt.Errorf("register built-in tools: %w", err)
	}
	programs, err := a.offerPrograms(reg)
	if err != nil {
		return nil, nil, err
	}
	if c := a.cfg; a.serving && c != nil && c.Redis.ShareEvents && c.Redis.URL != "" {
		// Every process with this configuration puts its events on the
		// others' streams (and sees theirs).
		rdb, err := a.redisClient()
		if err != nil {
			return nil, nil, err
		}
		host, _ := os.Hostname()
		relay := wredis.NewRelay(rdb, c.Redis.Prefix, reg.Bus(), fmt.Sprintf("%s:%d", host, os.Getpid()), nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := relay.Run(ctx); err != nil && ctx.Err() == nil {
				a.warnf("warning: event relay: %v", err)
			}
		}()
		a.closers = append(a.closers, func() error { cancel(); <-done; return rdb.Close() })
	}
	kinds := a.fileKinds()
	if c := a.cfg; c != nil && len(c.MCPServers) > 0 {
		im, err := a.importMCP(reg, c)
		if err != nil {
			return nil, nil, err
		}
		kinds["mcp"] = im.Kind()
	}
	if len(a.tools) > 0 {
		l := &toolfile.Loader{Builtins: toolfile.HandlersOf(defaults...), Kinds: kinds, AgentTools: a.agentTools(),
			Known: func(name string) bool { _, ok := reg.Tool(name); return ok || a.mcpNamed(name) }, Off: a.offSetting}
		l.MCPServerURLs = a.mcpServerURLs()
		agents, err := a.loadToolFiles(reg, l)
		if err != nil {
			return nil, nil, err
		}
		a.agents = agents
	}
	if err := offerSearch(reg); err != nil {
		return nil, nil, err
	}
	pol, err := a.policies(reg)
	if err != nil {
		return nil, nil, err
	}
	opts := &engine.Options{Policy: pol}
	if c := a.cfg; c != nil {
		opts.DefaultTimeout, opts.NetworkTimeout, opts.SecretNames = c.DefaultTimeout, c.NetworkTimeout, c.SecretNames
		opts.StrictValidation = c.StrictValidation
		opts.MaxOutput, opts.ApprovalTimeout = c.MaxOutput, c.ApprovalTimeout
		// A client may send arguments as large as server.max_body lets
		// it: a larger body limit raises the engine's own bound, which a
		// smaller one leaves as it is (a CLI's or a model's arguments
		// do not pass through it).
		if n := c.Server.MaxBody; n > engine.DefaultMaxArguments {
			opts.MaxArguments = int(n)
		}
		opts.Retry = engine.RetryPolicy{MaxAttempts: c.Retry.MaxAttempts, Backoff: c.Retry.Backoff, MaxBackoff: c.Retry.MaxBackoff}
		lim, err := a.limiter(c)
		if err != nil {
			return nil, nil, err
		}
		opts.Limiter = lim
	}
	if store != nil {
		opts.Store = store
		ao := &approval.Options{Logger: a.inboxLog}
		if _, ok := store.(wield.DecisionNotifier); !ok && a.cfg != nil && a.cfg.Redis.URL != "" {
			// Servers sharing a store without LISTEN/NOTIFY hear of each
			// other's decisions through Redis.
			rdb, err := a.redisClient()
			if err != nil {
				return nil, nil, err
			}
			ao.Notifier = wredis.NewNotifier(rdb, a.cfg.Redis.Prefix)
			a.closers = append(a.closers, rdb.Close)
		}
		a.inbox = approval.New(store, ao)
		// The inbox's listener and Resume's work end before the store
		// closes (withStore and serve run the closers first).
		a.closers = append(a.closers, a.inbox.Close)
		opts.Approver = a.inbox
		if a.wrapApprover != nil {
			opts.Approver = a.wrapApprover(opts.Approver)
		}
	}
	eng := engine.New(reg, opts)
	if programs != nil {
		programs(eng)
	}
	return reg, eng, nil
}

// agentTools are the built-in tools that exist where agents do (see
// toolfile.Loader.AgentTools): call_subagent, which checks agent_name
// against the agents the tool files define. The loader registers it before
// it makes the toolkits, at start as on every reload, so an agent or a
// toolset may name it; `wield validate` gives its loader the same.
func (a *app) agentTools() []*wield.Tool {
	return []*wield.Tool{builtin.CallSubagent(func() []string { return a.agents })}
}

// whenImported runs f once the background imports of MCP servers have
// ended (at once if they have).
func (a *app) whenImported(f func()) {
	a.importsMu.Lock()
	if !a.importsDone {
		a.afterImports = append(a.afterImports, f)
		a.importsMu.Unlock()
		return
	}
	a.importsMu.Unlock()
	f()
}

// warnf writes a warning line on stderr, which goroutines share, with its
// control characters escaped (its lines kept): it may carry what an MCP
// server, Redis or a file said.
func (a *app) warnf(format string, args ...any) {
	a.warnMu.Lock()
	defer a.warnMu.Unlock()
	fmt.Fprintln(a.stderr, safetext.Text(fmt.Sprintf(format, args...)))
}
