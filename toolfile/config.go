// # Configuration
//
// [LoadConfig] reads wield.yaml into a [Config]. Every key is optional:
//
//	tool_dirs: [tools/native, tools/builtin]  # relative to the config file
//	timeout: 30s                              # "30s" or seconds
//	network_timeout: 60s
//	concurrency:
//	  max: 10
//	  queue_size: 100
//	  queue_timeout: 30s
//	  strategy: fifo                          # fifo, priority or reject
//	  buckets: {http: {limit: 5, weight: 1}}
//	  backend: local                          # or redis: one limit for every server (see redis:)
//	allowed_paths: [./data]                   # what file tools may touch; relative to the config file
//	allow_hard_links: false                   # true: file tools use files with more than one name
//	max_file_read: 10485760                   # bytes of a file read_file reads at most
//	max_file_write: 10485760                  # bytes write_file writes (and move_file copies) at most
//	env_allow: [APP_MODE, "PUBLIC_*"]         # what get_env/set_env may see (none by default)
//	web_search: {provider: tavily, api_key: "${TAVILY_KEY}", max_results: 10}
//	mcp_servers:
//	  - {name: fs, command: [mcp-fs, /data], env: {ROOT: /data}}
//	  - {name: db, url: "http://localhost:3001", headers: {Authorization: "Bearer ${DB_TOKEN}"}, enabled: false}
//	  - {name: crm, url: "https://crm.example/mcp", oauth: {grant: client_credentials, client_id: wield, client_secret: "${CRM_SECRET}"}}
//	                                          # oauth: see MCPOAuth (wield mcp login NAME for grant authorization_code);
//	                                          # also max_pages: 100, max_tools: 10000 (one listing's limits);
//	                                          # timeout: 10s (to connect and list the tools; then it is retried in the background);
//	                                          # max_response: 16777216 (bytes of one message from an HTTP server);
//	                                          # a name may not contain __ nor end with _ (tools are <server>__<tool>)
//	store: sqlite:wield.db                    # or postgres://...
//	server: {addr: ":8080", keys: ["${WIELD_KEY}"]}
//	                                          # also body_timeout: 30s, max_conns_per_client: 512,
//	                                          # allow_workflow_bypass: false, self_approval: false,
//	                                          # max_body: 8388608 (bytes of a REST or MCP request's body)
//	http_allow: [127.0.0.1/32, 10.0.0.0/8, "127.0.0.1:8080"]   # a port: that port only
//	http_allow_hosts: [api.internal, "localhost:8080"]
//	secret_names: [GITHUB_TOKEN]
//	redis: {url: "redis://127.0.0.1:6379/0", prefix: wield, lease_ttl: 10s, share_events: true, poll_interval: 100ms}
//	                                          # with concurrency.backend: redis, the limits are shared
//	reload: {watch: true, interval: 5s}       # reload tool files on change, and/or every interval
//	strict_validation: false                  # true: no coercion ("5" for an integer is refused)
//	max_output: 65536                         # bytes of a call's output (or error) the caller gets; the record keeps it whole
//	approval_timeout: 15m                     # how long a call of a confirm tool waits for a decision
//	retry: {max_attempts: 3, backoff: 100ms, max_backoff: 2s}   # transient failures of idempotent tools
//	mcp: {resources: [...], resource_templates: [...], prompts: [...]}   # see MCPConfig
//	                                          # and session_idle: 10m, max_sessions: 5000, max_sessions_per_client: 100, request_state_ttl: 10m,
//	                                          # task_after: 30s, instructions: "..." (what initialize tells clients)
//
// Seed 004's ToolEngineConfig keys are accepted as written too:
// tools_directory (a folder), auto_reload with reload_interval (seconds:
// reload every interval), watch_for_changes (reload on change) and
// strict_validation; and in concurrency, max_concurrent, default_timeout
// (seconds) and bucket_limits {category: limit}.
//
// Seed 003's config.yml is accepted as written: a `tools:` mapping with
// timeout (milliseconds), maxConcurrent, allowedPaths, webSearch
// {provider, apiKey, maxResults} and mcpServers. It fills the same fields;
// setting one thing in both forms is a problem.
//
// `${NAME}` and `${NAME:-default}` are replaced in every string value by the
// environment variable (the default when it is unset or empty); `$${` stands
// for a literal `${`.
//
// # A first run
//
// What a configuration names may not be there yet. Each such thing is a
// warning (in [Config.Warnings], with its position) when what needs it is
// optional, and a problem when the setting cannot work without it:
//
//   - an allowed path that does not exist is a warning: the file tools use
//     the folder once it is created; one that is not a folder is a problem;
//   - an unset variable (without a default) in web_search turns web_search
//     off, with a warning that names the variable; so does an empty one as
//     the API key of a provider that needs a key;
//   - an unset variable in an enabled MCP server turns that server off, with
//     a warning; in a disabled server it is no concern, and the server is
//     left out;
//   - an unset variable in an allowed path leaves that folder out, with a
//     warning;
//   - an unset variable anywhere else (store, server, redis, tool_dirs,
//     timeouts, concurrency, http_allow, secret_names, env_allow, mcp) is a
//     problem: those settings mean something else, or nothing, without it.
//
// A variable with a default (`${NAME:-default}`) is never a concern. An MCP
// server that does not answer is not the configuration's concern: wield
// warns and keeps trying it in the background ([Config].MCPServerAt says
// where to point the warning).
package toolfile

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"github.com/wieldhq/wield/internal/searchurl"
	"io/fs"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/policy"
	"go.yaml.in/yaml/v3"
)

// Config is wield's configuration file, wield.yaml. A zero field means the
// engine's default.
type Config struct {
	// ToolDirs are the folders scanned for tool files, in order; relative
	// paths are resolved against the config file's folder.
	ToolDirs []string
	// ToolDirAt says where each of ToolDirs is written (its tool_dirs
	// item, tools_directory's value), by folder: [Loader.DirAt] reports a
	// folder that does not exist there.
	ToolDirAt map[string]Position
	// DefaultTimeout bounds a tool call; NetworkTimeout bounds a call of a
	// network tool (http, mcp, remote).
	DefaultTimeout time.Duration
	NetworkTimeout time.Duration
	// Concurrency configures the limiter that runs tool calls.
	Concurrency limit.Config
	// LimiterBackend is "local" (the default: this process's limits) or
	// "redis" (limits shared by every server using the same Redis).
	LimiterBackend string
	// Redis is the Redis that servers share.
	Redis Redis
	// AllowedPaths are the folders file tools may touch; relative paths are
	// resolved against the config file's folder.
	AllowedPaths []string
	// AllowHardLinks lets read_file and write_file use a file with more
	// than one name (a hard link, which may be a file outside the allowed
	// paths); off unless written.
	AllowHardLinks bool
	// MaxFileRead and MaxFileWrite bound, in bytes, the files read_file
	// reads and the content write_file writes (and move_file copies
	// between allowed folders): max_file_read and max_file_write, zero
	// meaning builtin's defaults (10 MiB each).
	MaxFileRead, MaxFileWrite int64
	// EnvAllow lists the environment variables get_env and set_env may
	// touch (a trailing * allows a prefix); none when empty.
	EnvAllow []string
	// WebSearch configures the web search tool.
	WebSearch WebSearch
	// MCPServers are the MCP servers whose tools are offered, in file order.
	MCPServers []MCPServer
	// Store is the store DSN: "sqlite:PATH" or "postgres://...".
	Store string
	// Server configures `wield serve`.
	Server Server
	// HTTPAllow and HTTPAllowHosts are the internal ranges and hosts that
	// HTTP tools may reach despite the SSRF guard; see [Config.Guard].
	// HTTPAllowPorts are http_allow's entries written with a port
	// ("127.0.0.1:8080", "10.0.0.0/8:443"): that port only.
	HTTPAllow      []netip.Prefix
	HTTPAllowPorts []httptool.Endpoint
	HTTPAllowHosts []string
	// SecretNames are names (of parameters, headers, query parameters)
	// whose values records, logs and events never keep, in addition to the
	// defaults (engine.DefaultSecretNames).
	SecretNames []string
	// Reload says when the tool folders are loaded again.
	Reload Reload
	// PolicyMode is what the Cedar policy files (*.cedar in the tool
	// folders) do with a call they deny: "enforce" ("" means it) refuses
	// it, "monitor" records and logs "would deny" and runs it (policy.mode,
	// read by [policy.ParseMode]).
	PolicyMode string
	// StrictValidation refuses arguments that need a coercion.
	StrictValidation bool
	// MaxOutput is the output budget in bytes (engine.Options.MaxOutput):
	// a larger output reaches the caller cut to its head and tail, the
	// record keeping it whole; a tool's own max_output wins. Zero means the
	// engine's default (64 KiB).
	MaxOutput int
	// ApprovalTimeout is how long a pending approval lives
	// (engine.Options.ApprovalTimeout); zero means the engine's default
	// (15 minutes).
	ApprovalTimeout time.Duration
	// Retry says how transient failures of idempotent tools are retried
	// (engine.Options.Retry); zero fields mean the engine's defaults.
	Retry Retry
	// Programs configures run_program (programs:), as the --programs flag
	// does; the flag, when given, wins.
	Programs Programs
	// MCP is what the MCP server offers besides tools: resources,
	// resource templates and prompts (see [MCPConfig]).
	MCP MCPConfig
	// MCPOAuth is the oauth of the MCP servers that have one, by name.
	MCPOAuth map[string]MCPOAuth
	// MCPServerAt says where each of MCPServers is written, by name, so
	// that a warning about a server that does not answer points at it.
	MCPServerAt map[string]Position
	// Warnings are what the file asks for that cannot be had now but need
	// not stop wield (see the package doc's "A first run"), each located;
	// show them to the user.
	Warnings Problems
	// MCPServersOff are the servers of mcp_servers left out because a
	// variable they need is unset, by name: the warning of Warnings that
	// says so.
	MCPServersOff map[string]Problem
}

// Programs configures run_program, the tool that runs a model's
// programs (docs/programs.md). Zero fields keep the defaults.
type Programs struct {
	// Enabled offers run_program (and the programs toolset).
	Enabled bool
	// OnApproval is what an inner call that needs approval does: "wait"
	// (the default, "") for the decision, or "fail" the program at once.
	OnApproval string
	// MaxCalls bounds a program's inner calls (1000 when zero).
	MaxCalls int
	// Timeout bounds a whole program, approval waits included (60 s when
	// zero).
	Timeout time.Duration
	// MaxSteps, MaxValue, MaxPrint and MaxMemory are program.Options'
	// bounds of the sandbox (Starlark steps, the bytes of the largest value
	// built, of print() output, and of heap growth); zero keeps program's
	// defaults.
	MaxSteps, MaxValue, MaxPrint, MaxMemory int
}

// Retry is retry: {max_attempts, backoff, max_backoff}, the engine's
// engine.RetryPolicy. Zero fields keep the engine's defaults (3 attempts,
// 100 ms before the second, doubling up to 2 s).
type Retry struct {
	MaxAttempts         int
	Backoff, MaxBackoff time.Duration
}

// Default retry settings, as the engine's: the messages of retry: name them.
const (
	defaultRetryBackoff    = 100 * time.Millisecond
	defaultRetryMaxBackoff = 2 * time.Second
)

// Position locates a setting in a configuration file.
type Position struct {
	File      string
	Line, Col int
}

// String formats the position as "file:line:col".
func (p Position) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Redis locates the Redis that wield servers share.
type Redis struct {
	// URL is redis://[user:password@]host:port/db (or rediss:// for TLS).
	URL string
	// Prefix names wield's keys ("wield" when empty).
	Prefix string
	// LeaseTTL is how long a crashed server's limiter slots outlive it
	// (10 s when zero).
	LeaseTTL time.Duration
	// ShareEvents puts every server's events on each server's stream.
	ShareEvents bool
	// PollInterval bounds how long a call waiting for a slot of the
	// shared limiter sleeps between two tries when no release is
	// announced, and a waiter of a dead server is dropped after three
	// (poll_interval; the redis package's 100 ms when zero).
	PollInterval time.Duration
}

// Reload says when tool files are loaded again while wield runs: on change
// notifications (Watch), every Interval (for file systems without
// reliable notifications), or both. The zero value loads them once.
type Reload struct {
	Watch    bool
	Interval time.Duration
}

// WebSearch configures the web search tool (seed 003 webSearch).
type WebSearch struct {
	// Provider is one of tavily, brave, bing, google, bocha, duckduckgo.
	Provider   string
	APIKey     string
	MaxResults int
	// BaseURL replaces the provider's scheme, host and port and prefixes
	// its path (a proxy, a self-hosted service in the provider's shape);
	// empty means the provider's public API. See builtin.SearchOptions.
	BaseURL string
}

// MCPServer is one MCP server: either a URL or a command to start, never
// both.
type MCPServer struct {
	Name string
	URL  string
	// Command is the program and its arguments, run without a shell.
	Command []string
	// Transport is "stdio" for a command, "http" (streamable HTTP, the
	// default for a URL) or "sse".
	Transport string
	Headers   map[string]string
	Env       map[string]string
	Tags      []string
	// Enabled is true unless the file says enabled: false.
	Enabled bool
	// MaxPages and MaxTools bound one listing of the server's tools
	// (max_pages, max_tools); zero means the importer's limits (100 pages,
	// 10000 tools).
	MaxPages, MaxTools int
	// Timeout bounds connecting to the server and listing its tools
	// (timeout, a duration such as 5s); zero means the importer's 10 s.
	Timeout time.Duration
	// MaxResponse bounds one message read from an HTTP server, in bytes
	// (max_response); zero means the importer's 16 MiB.
	MaxResponse int
	// Permission is given to every tool of the server (permission: auto,
	// confirm or deny), over what their annotations imply; empty keeps the
	// annotations' rule.
	Permission wield.Permission
}

// Server configures wield's own server.
type Server struct {
	// Addr is the listen address, such as ":8080".
	Addr string
	// Keys are the API keys clients must present.
	Keys []string
	// BodyTimeout is how long a client may take to send a request's body
	// (body_timeout; 30 s when zero): a body trickled slower is cut, and
	// its connection closed. Responses, event streams included, are not
	// limited by it.
	BodyTimeout time.Duration
	// MaxConnsPerClient bounds the connections open at once from one IP
	// address (max_conns_per_client; 512 when zero); more are refused.
	MaxConnsPerClient int
	// AllowWorkflowBypass (allow_workflow_bypass) lets requests to a
	// server without keys claim caller.type workflow_node, which bypasses
	// the concurrency limits; without it they are refused. With keys only
	// a key with the workflow right may claim it.
	AllowWorkflowBypass bool
	// SelfApproval (self_approval) lets the key that asked for a call
	// decide its approval, for a single-user setup with one key; without
	// it another key with the approve right must.
	SelfApproval bool
	// MaxBody bounds, in bytes, the body of a request to the REST API and
	// to the MCP endpoints (max_body); a larger one is refused (413)
	// naming the limit. Zero keeps each its default: 8 MiB for REST
	// (httpapi), 4 MiB for MCP (the go-sdk's). Tool arguments up to it
	// are accepted: the engine's own bound on them (8 MiB) is raised to a
	// larger MaxBody.
	MaxBody int64
}

// Guard returns the SSRF guard the configuration asks for: the default
// refusals, less the ranges, ports and hosts of http_allow and
// http_allow_hosts. wield's own listening address stays refused unless
// one of them names it with its port.
func (c *Config) Guard() *httptool.Guard {
	return &httptool.Guard{
		Allow:      append([]netip.Prefix(nil), c.HTTPAllow...),
		AllowPorts: append([]httptool.Endpoint(nil), c.HTTPAllowPorts...),
		AllowHosts: append([]string(nil), c.HTTPAllowHosts...),
	}
}

// webSearchProviders are the providers seed 003 and wield know.
var webSearchProviders = []string{"tavily", "brave", "bing", "google", "bocha", "duckduckgo"}

// LoadConfig reads a configuration file. Mistakes are returned together as
// [Problems], each with its line and column, with the file's warnings among
// them (Warning set), and no Config; a file that cannot be read is an error
// wrapping the os error. A file with warnings only loads, with them in
// [Config.Warnings].
func LoadConfig(path string) (*Config, error) {
	src, err := readRegular(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	c := newConfigDecoder(path, os.LookupEnv)
	cfg := c.config(src, filepath.Dir(path))
	sortProblems(c.problems)
	if Problems(c.problems).errors() {
		return nil, Problems(c.problems)
	}
	if len(c.problems) > 0 {
		cfg.Warnings = Problems(c.problems)
	}
	cfg.MCPServersOff = c.serversOff
	return cfg, nil
}

func newConfigDecoder(path string, lookup func(string) (string, bool)) *configDecoder {
	return &configDecoder{decoder: decoder{file: path}, expanded: map[*yaml.Node]bool{}, setBy: map[string]string{},
		lookup: lookup, empty: map[*yaml.Node][]string{}}
}

// configDecoder adds to decoder what configuration needs: environment
// expansion and the check that the two forms do not set one thing twice.
type configDecoder struct {
	decoder
	// expanded holds the string nodes that came from ${...}, which numbers
	// and booleans accept too: `max: ${MAX:-10}`.
	expanded map[*yaml.Node]bool
	// setBy maps a setting to the key that set it, with its position.
	setBy  map[string]string
	lookup func(string) (string, bool)
	src    []byte // for the columns of ${...} in values
	// serversOff are the MCP servers an unset variable turned off, with
	// the warning that says so ([Config].MCPServersOff).
	serversOff map[string]Problem
	// unset are the variables without a default that are not set, in file
	// order: each setting's decoder claims those under it that it can do
	// without; the rest are problems.
	unset []*unsetVar
	// empty holds the string nodes with a variable that is set but empty,
	// and the variables' names.
	empty map[*yaml.Node][]string
}

// unsetVar is a ${NAME} whose variable is not set.
type unsetVar struct {
	node    *yaml.Node
	name    string
	path    string  // the setting, as in "tools.webSearch.apiKey"
	at      Problem // where ${ stands, without a message
	claimed bool
}

// claim returns the unset variables under n (aliases followed), and takes
// them as dealt with.
func (c *configDecoder) claim(n *yaml.Node) []*unsetVar {
	if len(c.unset) == 0 {
		return nil
	}
	under := nodesUnder(n)
	var out []*unsetVar
	for _, u := range c.unset {
		if !u.claimed && under[u.node] {
			u.claimed = true
			out = append(out, u)
		}
	}
	return out
}

// nodesUnder is n and every node under it, aliases followed.
func nodesUnder(n *yaml.Node) map[*yaml.Node]bool {
	under := map[*yaml.Node]bool{}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || under[n] {
			return
		}
		under[n] = true
		walk(n.Alias)
		for _, k := range n.Content {
			walk(k)
		}
	}
	walk(n)
	return under
}

// usesUnset reports whether the value n uses an unset variable, to leave
// it undecoded: the variable is the problem, not what is left of the value.
func (c *configDecoder) usesUnset(n *yaml.Node) bool {
	return isUnset(c.unset, n)
}

// isUnset reports whether the value n uses an unset variable: its decoder
// leaves it alone, the setting being off.
func isUnset(unset []*unsetVar, n *yaml.Node) bool {
	n = unwrap(n)
	for _, u := range unset {
		if u.node == n {
			return true
		}
	}
	return false
}

// warnOff records that what is off because of the unset variables, at the
// first one.
func (c *configDecoder) warnOff(unset []*unsetVar, what string) Problem {
	names := make([]string, 0, len(unset))
	for _, u := range unset {
		if !contains(names, u.name) {
			names = append(names, u.name)
		}
	}
	p := unset[0].at
	p.Message = fmt.Sprintf("%s is off: environment variable %s %s not set (%s)", what, strings.Join(names, ", "), map[bool]string{true: "is", false: "are"}[len(names) == 1], unset[0].path)
	p.Warning = true
	c.problems = append(c.problems, p)
	return p
}

func (c *configDecoder) config(src []byte, dir string) *Config {
	c.src = src
	docs := c.parse(src)
	cfg := &Config{}
	if len(docs) == 0 {
		return cfg
	}
	if len(docs) > 1 {
		c.errorf(docs[1], "a config file holds one document")
	}
	c.expand(docs[0], "")
	fs, ok := c.mapping(docs[0], "config")
	if !ok {
		return cfg
	}
	autoOff := false
	defer func() {
		for _, u := range c.unset {
			if !u.claimed {
				p := u.at
				p.Message = fmt.Sprintf("%s: environment variable %s is not set", u.path, u.name)
				c.problems = append(c.problems, p)
			}
		}
		if autoOff {
			cfg.Reload.Interval = 0
		}
		if cfg.LimiterBackend == "redis" && cfg.Redis.URL == "" {
			c.errorf(docs[0], "concurrency.backend is redis, but redis.url is not set")
		}
	}()
	for _, f := range fs {
		switch f.name {
		case "tools_directory": // seed 004
			if c.set(f, "tools_directory", "tool folders") {
				cfg.ToolDirs = resolve(dir, []string{c.str(f)})
				c.toolDirAt(cfg, f.val)
			}
		case "auto_reload": // seed 004: off means no interval reloads
			autoOff = !c.boolean(f)
		case "reload_interval": // seed 004, seconds
			if c.set(f, "reload_interval", "reload interval") {
				cfg.Reload.Interval = c.dur(f, time.Second)
			}
		case "watch_for_changes": // seed 004
			if c.set(f, "watch_for_changes", "reload on change") {
				cfg.Reload.Watch = c.boolean(f)
			}
		case "reload":
			c.reload(f, &cfg.Reload)
		case "programs":
			c.programs(f, &cfg.Programs)
		case "policy":
			fs, ok := c.mapping(f.val, "policy")
			if !ok {
				continue
			}
			for _, pf := range fs {
				switch pf.name {
				case "mode":
					cfg.PolicyMode = c.str(pf)
					if _, err := policy.ParseMode(cfg.PolicyMode); err != nil {
						c.errorf(pf.val, "%v", err) // policy mode "…": use enforce or monitor
					}
				default:
					c.unknown(pf, "policy")
				}
			}
		case "redis":
			fs, ok := c.mapping(f.val, "redis")
			if !ok {
				continue
			}
			for _, rf := range fs {
				switch rf.name {
				case "url":
					cfg.Redis.URL = c.str(rf)
					if u := cfg.Redis.URL; !strings.HasPrefix(u, "redis://") && !strings.HasPrefix(u, "rediss://") {
						c.errorf(rf.val, "redis.url: %q is not a redis:// or rediss:// URL", u)
					}
				case "prefix":
					cfg.Redis.Prefix = c.str(rf)
				case "lease_ttl":
					cfg.Redis.LeaseTTL = c.dur(rf, time.Second)
				case "share_events":
					cfg.Redis.ShareEvents = c.boolean(rf)
				case "poll_interval":
					mark := len(c.problems)
					if cfg.Redis.PollInterval = c.dur(rf, time.Second); cfg.Redis.PollInterval == 0 && !c.usesUnset(rf.val) && !c.failed(mark) {
						c.errorf(rf.val, "redis.poll_interval: must be more than 0 (leave it out for the default, 100ms)")
					}
				default:
					c.unknown(rf, "redis")
				}
			}
		case "strict_validation":
			cfg.StrictValidation = c.boolean(f)
		case "max_output":
			mark := len(c.problems)
			if cfg.MaxOutput = c.integer(f); cfg.MaxOutput == 0 && !c.usesUnset(f.val) && !c.failed(mark) {
				c.errorf(f.val, "max_output: must be at least 1 (bytes; leave it out for the default, 65536)")
			}
		case "retry":
			c.retry(f, &cfg.Retry)
		case "approval_timeout":
			mark := len(c.problems)
			if cfg.ApprovalTimeout = c.dur(f, time.Second); cfg.ApprovalTimeout == 0 && !c.usesUnset(f.val) && !c.failed(mark) {
				c.errorf(f.val, "approval_timeout: must be more than 0 (leave it out for the default, 15m)")
			}
		case "tool_dirs":
			if !c.set(f, "tool_dirs", "tool folders") {
				continue
			}
			for _, d := range c.strings(f) {
				if !filepath.IsAbs(d) {
					d = filepath.Join(dir, d)
				}
				cfg.ToolDirs = append(cfg.ToolDirs, d)
			}
			if list, ok := seq(f.val); ok {
				for _, v := range list {
					c.toolDirAt(cfg, v)
				}
			}
		case "timeout":
			if c.set(f, "timeout", "default timeout") {
				cfg.DefaultTimeout = c.dur(f, time.Second)
			}
		case "network_timeout":
			cfg.NetworkTimeout = c.dur(f, time.Second)
		case "concurrency":
			c.concurrency(f, cfg)
		case "allowed_paths":
			if c.set(f, "allowed_paths", "allowed paths") {
				cfg.AllowedPaths = c.allowedPaths(f, "allowed_paths", dir)
			}
		case "allow_hard_links":
			cfg.AllowHardLinks = c.boolean(f)
		case "max_file_read":
			cfg.MaxFileRead = c.bytes(f, "max_file_read", "the default, 10485760")
		case "max_file_write":
			cfg.MaxFileWrite = c.bytes(f, "max_file_write", "the default, 10485760")
		case "env_allow":
			cfg.EnvAllow = c.strings(f)
		case "web_search":
			if c.set(f, "web_search", "web search") {
				cfg.WebSearch = c.webSearch(f, "web_search", "api_key", "max_results", "base_url")
			}
		case "mcp_servers":
			if c.set(f, "mcp_servers", "MCP servers") {
				cfg.MCPServers, cfg.MCPServerAt, cfg.MCPOAuth = c.mcpServers(f, "mcp_servers", dir)
			}
		case "store":
			cfg.Store = c.str(f)
			if s := cfg.Store; s != "" && !strings.HasPrefix(s, "sqlite:") && !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
				c.errorf(f.val, "store: %q is neither sqlite:PATH nor postgres://...", s)
			}
		case "server":
			cfg.Server = c.server(f)
		case "http_allow":
			cfg.HTTPAllow, cfg.HTTPAllowPorts = c.prefixes(f)
		case "http_allow_hosts":
			cfg.HTTPAllowHosts = c.strings(f)
		case "secret_names":
			cfg.SecretNames = c.strings(f)
		case "tools":
			c.seedTools(f, cfg, dir)
		case "mcp":
			cfg.MCP = c.mcpConfig(f, dir)
		default:
			c.unknown(f, "config")
		}
	}
	return cfg
}

// resolve makes relative paths relative to dir, the config file's folder.
func resolve(dir string, paths []string) []string {
	for i, p := range paths {
		if p != "" && !filepath.IsAbs(p) {
			paths[i] = filepath.Join(dir, p)
		}
	}
	return paths
}

// seedTools decodes seed 003's `tools:` mapping.
func (c *configDecoder) seedTools(tf field, cfg *Config, dir string) {
	if _, ok := seq(tf.val); ok {
		c.errorf(tf.val, "tools: expected a mapping, got list (tools: holds settings such as timeout and allowedPaths; tool folders are listed under tool_dirs)")
		return
	}
	fs, ok := c.mapping(tf.val, "tools")
	if !ok {
		return
	}
	for _, f := range fs {
		switch f.name {
		case "timeout":
			if c.set(f, "tools.timeout", "default timeout") {
				cfg.DefaultTimeout = c.dur(f, time.Millisecond)
			}
		case "maxConcurrent":
			if c.set(f, "tools.maxConcurrent", "concurrency max") {
				cfg.Concurrency.MaxConcurrent = c.integer(f)
			}
		case "allowedPaths":
			if c.set(f, "tools.allowedPaths", "allowed paths") {
				cfg.AllowedPaths = c.allowedPaths(f, "tools.allowedPaths", dir)
			}
		case "webSearch":
			if c.set(f, "tools.webSearch", "web search") {
				cfg.WebSearch = c.webSearch(f, "tools.webSearch", "apiKey", "maxResults", "baseUrl")
			}
		case "mcpServers":
			if c.set(f, "tools.mcpServers", "MCP servers") {
				cfg.MCPServers, cfg.MCPServerAt, cfg.MCPOAuth = c.mcpServers(f, "tools.mcpServers", dir)
			}
		default:
			c.unknown(f, "tools")
		}
	}
}

// allowedPaths reads the folders the file tools may touch, relative to dir.
// A folder that does not exist yet is a warning (the tools use it once it
// is created), as is one named by an unset variable (it is left out); one
// that exists but is not a folder is a problem.
func (c *configDecoder) allowedPaths(f field, what, dir string) []string {
	list, ok := seq(f.val)
	if !ok {
		return resolve(dir, c.strings(f)) // reports the mistake
	}
	var out []string
	for i, n := range list {
		key := fmt.Sprintf("%s[%d]", what, i)
		if unset := c.claim(n); len(unset) > 0 {
			p := unset[0].at
			p.Message = fmt.Sprintf("%s: environment variable %s is not set: the folder is left out of the file tools' allowed folders", key, unset[0].name)
			p.Warning = true
			c.problems = append(c.problems, p)
			continue
		}
		p := c.str(field{name: key, val: n})
		if p == "" {
			continue
		}
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(dir, p)
		}
		shown := abs
		if a, err := filepath.Abs(abs); err == nil {
			shown = a
		}
		switch st, err := os.Stat(abs); {
		case errors.Is(err, fs.ErrNotExist):
			c.warnf(n, "%s: the folder %q (%s) does not exist yet: the file tools will use it once it is created", key, p, shown)
		case err != nil:
			c.errorf(n, "%s: the folder %q (%s) cannot be used: %v", key, p, shown, errors.Unwrap(err))
			continue
		case !st.IsDir():
			c.errorf(n, "%s: %q (%s) is not a folder", key, p, shown)
			continue
		}
		out = append(out, abs)
	}
	return out
}

// set records that key sets what, and reports false with a problem when
// another key set it already.
func (c *configDecoder) set(f field, key, what string) bool {
	line, col := pos(f.key)
	if prev, ok := c.setBy[what]; ok {
		c.errorf(f.key, "%s: %s already set by %s", key, what, prev)
		return false
	}
	c.setBy[what] = fmt.Sprintf("%s at %d:%d", key, line, col)
	return true
}

func (c *configDecoder) concurrency(cf field, cfg *Config) {
	lc := &cfg.Concurrency
	fs, ok := c.mapping(cf.val, "concurrency")
	if !ok {
		return
	}
	for _, f := range fs {
		switch f.name {
		case "max", "max_concurrent":
			if c.set(f, "concurrency."+f.name, "concurrency max") {
				lc.MaxConcurrent = c.integer(f)
			}
		case "default_timeout": // seed 004's ConcurrencyConfig, seconds
			if c.set(f, "concurrency.default_timeout", "default timeout") {
				cfg.DefaultTimeout = c.dur(f, time.Second)
			}
		case "bucket_limits": // seed 004: {category: limit}
			bs, ok := c.mapping(f.val, "bucket_limits")
			if !ok || !c.set(f, "concurrency.bucket_limits", "buckets") {
				continue
			}
			if lc.Buckets == nil {
				lc.Buckets = make(map[string]limit.Bucket, len(bs))
			}
			for _, bf := range bs {
				lc.Buckets[bf.name] = limit.Bucket{Limit: c.integer(bf), Weight: 1}
			}
		case "queue_size":
			lc.QueueSize = c.integer(f)
		case "queue_timeout":
			lc.QueueTimeout = c.dur(f, time.Second)
		case "strategy":
			s := limit.Strategy(c.str(f))
			switch s {
			case "", limit.FIFO, limit.Priority, limit.Reject:
				lc.Strategy = s
			default:
				c.errorf(f.val, "strategy: %q is not fifo, priority or reject", s)
			}
		case "backend":
			switch b := c.str(f); b {
			case "local", "redis":
				cfg.LimiterBackend = b
			default:
				c.errorf(f.val, "backend: %q is not local or redis", b)
			}
		case "buckets":
			bs, ok := c.mapping(f.val, "buckets")
			if !ok || !c.set(f, "concurrency.buckets", "buckets") {
				continue
			}
			lc.Buckets = make(map[string]limit.Bucket, len(bs))
			for _, bf := range bs {
				lc.Buckets[bf.name] = c.bucket(bf)
			}
		default:
			c.unknown(f, "concurrency")
		}
	}
}

// reload decodes `reload: {watch, interval}`.
func (c *configDecoder) reload(rf field, r *Reload) {
	fs, ok := c.mapping(rf.val, "reload")
	if !ok {
		return
	}
	for _, f := range fs {
		switch f.name {
		case "watch":
			if c.set(f, "reload.watch", "reload on change") {
				r.Watch = c.boolean(f)
			}
		case "interval":
			if c.set(f, "reload.interval", "reload interval") {
				r.Interval = c.dur(f, time.Second)
			}
		default:
			c.unknown(f, "reload")
		}
	}
}

// retry reads retry: {max_attempts, backoff, max_backoff}. Each is more
// than zero when written, and the longest wait may not be shorter than the
// first (either may be the default).
func (c *configDecoder) retry(rf field, r *Retry) {
	fs, ok := c.mapping(rf.val, "retry")
	if !ok {
		return
	}
	start := len(c.problems)
	at := map[string]field{}
	for _, f := range fs {
		mark := len(c.problems)
		switch f.name {
		case "max_attempts":
			if r.MaxAttempts = c.integer(f); r.MaxAttempts == 0 && !c.usesUnset(f.val) && !c.failed(mark) {
				c.errorf(f.val, "retry.max_attempts: must be at least 1 (1: no retries; leave it out for the default, 3)")
			}
		case "backoff":
			if r.Backoff = c.dur(f, time.Second); r.Backoff == 0 && !c.usesUnset(f.val) && !c.failed(mark) {
				c.errorf(f.val, "retry.backoff: must be more than 0 (leave it out for the default, 100ms)")
			}
		case "max_backoff":
			if r.MaxBackoff = c.dur(f, time.Second); r.MaxBackoff == 0 && !c.usesUnset(f.val) && !c.failed(mark) {
				c.errorf(f.val, "retry.max_backoff: must be more than 0 (leave it out for the default, 2s)")
			}
		default:
			c.unknown(f, "retry")
			continue
		}
		at[f.name] = f
	}
	if (r.Backoff == 0 && r.MaxBackoff == 0) || c.failed(start) {
		return
	}
	first, longest := cmp.Or(r.Backoff, defaultRetryBackoff), cmp.Or(r.MaxBackoff, defaultRetryMaxBackoff)
	if longest < first {
		where, said := at["max_backoff"], fmt.Sprintf("%v", longest)
		if r.MaxBackoff == 0 {
			where, said = at["backoff"], fmt.Sprintf("%v (the default)", longest)
		}
		c.errorf(where.val, "retry: max_backoff %s is shorter than backoff %v, the first wait: raise max_backoff or lower backoff", said, first)
	}
}

// programs reads programs: {enabled, on_approval, max_calls, timeout}.
func (c *configDecoder) programs(pf field, p *Programs) {
	fs, ok := c.mapping(pf.val, "programs")
	if !ok {
		return
	}
	for _, f := range fs {
		switch f.name {
		case "enabled":
			p.Enabled = c.boolean(f)
		case "on_approval":
			p.OnApproval = c.str(f)
			if v := p.OnApproval; v != "wait" && v != "fail" {
				c.errorf(f.val, "programs.on_approval: %q is not wait or fail", v)
			}
		case "max_calls":
			p.MaxCalls = c.integer(f)
		case "timeout":
			p.Timeout = c.dur(f, time.Second)
		case "max_steps":
			p.MaxSteps = c.programBound(f, "10000000")
		case "max_value":
			p.MaxValue = c.programBound(f, "16777216")
		case "max_print":
			p.MaxPrint = c.programBound(f, "65536")
		case "max_memory":
			p.MaxMemory = c.programBound(f, "536870912")
		default:
			c.unknown(f, "programs")
		}
	}
}

// programBound reads one of a program's bounds: a positive integer (0
// would not be the default but nothing at all, so it is refused). def is
// program's default, for the message (TestProgramBoundDefaults holds them
// to program's constants; toolfile does not link the interpreter for them).
func (c *configDecoder) programBound(f field, def string) int {
	mark := len(c.problems)
	n := c.integer(f)
	if n == 0 && !c.usesUnset(f.val) && !c.failed(mark) {
		c.errorf(f.val, "programs.%s: must be at least 1 (leave it out for the default, %s)", f.name, def)
	}
	return n
}

func (c *configDecoder) bucket(bf field) limit.Bucket {
	var b limit.Bucket
	fs, ok := c.mapping(bf.val, "bucket "+bf.name)
	if !ok {
		return b
	}
	for _, f := range fs {
		switch f.name {
		case "limit":
			b.Limit = c.integer(f)
		case "weight":
			b.Weight = c.integer(f)
		default:
			c.unknown(f, "bucket "+bf.name)
		}
	}
	if b.Limit != 0 && b.Limit < max(b.Weight, 1) {
		c.errorf(bf.key, "bucket %s: limit %d is less than its weight %d", bf.name, b.Limit, b.Weight)
	}
	return b
}

// webSearch reads the web search settings. An unset variable in them turns
// web_search off with a warning, and so does an empty variable as the key of
// a provider that needs one: search is optional, and a first run may not
// have a key yet.
func (c *configDecoder) webSearch(wf field, what, apiKey, maxResults, baseURL string) WebSearch {
	var w WebSearch
	fs, ok := c.mapping(wf.val, what)
	if !ok {
		return w
	}
	unset := c.claim(wf.val)
	var keyNode *yaml.Node
	for _, f := range fs {
		if isUnset(unset, f.val) {
			continue
		}
		switch f.name {
		case "provider":
			w.Provider = c.str(f)
			if w.Provider != "" && !contains(webSearchProviders, w.Provider) {
				c.errorf(f.val, "provider: %q is not one of %s", w.Provider, strings.Join(webSearchProviders, ", "))
			}
		case apiKey:
			w.APIKey = c.str(f)
			keyNode = unwrap(f.val)
		case maxResults:
			w.MaxResults = c.integer(f)
		case baseURL:
			w.BaseURL = c.str(f)
			if _, err := searchurl.Check(w.BaseURL); err != nil { // as the provider will read it
				c.errorf(f.val, "%s: %v", baseURL, err)
			}
		default:
			c.unknown(f, what)
		}
	}
	switch {
	case len(unset) > 0:
		c.warnOff(unset, "web_search")
		return WebSearch{}
	case w.Provider == "":
		c.errorf(wf.key, "%s: provider is required", what)
	case !contains(webSearchProviders, w.Provider), w.Provider == "duckduckgo" || w.APIKey != "" && (w.Provider != "google" || strings.Contains(w.APIKey, ":")):
	case w.APIKey != "":
		c.errorf(keyNode, "%s: provider google needs its engine id (cx) with the key: write %s as KEY:CX", what, apiKey)
	case keyNode != nil && len(c.empty[keyNode]) > 0:
		c.warnf(keyNode, "web_search is off: environment variable %s is empty (%s.%s), and provider %s needs a key", strings.Join(c.empty[keyNode], ", "), what, apiKey, w.Provider)
		return WebSearch{}
	default:
		c.errorf(cmpOr(keyNode, wf.key), "%s: provider %s needs an API key (%s)", what, w.Provider, apiKey)
	}
	return w
}

func cmpOr(n, or *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return or
}

// mcpServers reads the MCP servers and where each is written. A server
// whose settings use an unset variable is left out: with a warning when it
// is enabled, silently when it is not (it would not be used).
func (c *configDecoder) mcpServers(sf field, what, dir string) ([]MCPServer, map[string]Position, map[string]MCPOAuth) {
	list, ok := seq(sf.val)
	if !ok {
		c.errorf(sf.val, "%s: expected a list of servers, got %s", what, kindName(sf.val))
		return nil, nil, nil
	}
	var out []MCPServer
	at := map[string]Position{}
	var auth map[string]MCPOAuth
	for _, n := range list {
		s, o, where, ok := c.mcpServer(n, what, dir)
		if !ok {
			continue
		}
		if _, dup := at[s.Name]; dup {
			c.errorf(n, "%s: duplicate server name %q", what, s.Name)
			continue
		}
		if i := slices.IndexFunc(out, func(o MCPServer) bool { return strings.EqualFold(o.Name, s.Name) }); i >= 0 {
			c.errorf(n, "%s: server name %q differs only in letter case from %q (at %s)", what, s.Name, out[i].Name, at[out[i].Name])
			continue
		}
		at[s.Name] = where
		out = append(out, s)
		if o != nil {
			if auth == nil {
				auth = map[string]MCPOAuth{}
			}
			auth[s.Name] = *o
		}
	}
	return out, at, auth
}

func (c *configDecoder) mcpServer(n *yaml.Node, what, dir string) (MCPServer, *MCPOAuth, Position, bool) {
	s := MCPServer{Enabled: true}
	fs, ok := c.mapping(n, what)
	if !ok {
		return s, nil, Position{}, false
	}
	var oauth *MCPOAuth
	var oauthAt *yaml.Node
	var oauthField field
	var permAt *yaml.Node // where permission: is written
	mark := len(c.problems)
	unset := c.claim(n)
	if len(fs) > 0 {
		n = fs[0].key // a block mapping's own position is its first colon
	}
	for _, f := range fs {
		if isUnset(unset, f.val) {
			continue
		}
		switch f.name {
		case "name":
			s.Name = c.str(f)
		case "url":
			s.URL = c.str(f)
		case "command":
			s.Command = c.strings(f)
		case "transport":
			s.Transport = c.str(f)
		case "headers":
			s.Headers = c.stringMap(f)
		case "env":
			s.Env = c.stringMap(f)
		case "tags":
			s.Tags = c.strings(f)
		case "enabled":
			s.Enabled = c.flag(f)
		case "max_pages":
			s.MaxPages = c.integer(f)
		case "max_tools":
			s.MaxTools = c.integer(f)
		case "timeout":
			s.Timeout = c.dur(f, time.Second)
		case "max_response":
			s.MaxResponse = c.integer(f)
		case "permission":
			s.Permission = wield.Permission(c.str(f))
			permAt = f.val // checked below, once the name is known
		case "oauth":
			oauthAt, oauthField = f.key, f // read below, once the name is known
		default:
			c.unknown(f, "mcp server")
		}
	}
	if oauthAt != nil {
		oauth = c.mcpOAuth(oauthField, s.Name, unset, dir)
	}
	line, col := pos(n)
	where := Position{File: c.decoder.file, Line: line, Col: col}
	switch {
	case s.Name == "":
		c.errorf(n, "mcp server: name is required")
	case strings.Contains(s.Name, "__") || strings.HasSuffix(s.Name, "_"):
		// Its tools are named <server>__<tool>: server x__y's tool echo
		// and server x's tool y__echo would both be x__y__echo.
		c.errorf(n, "mcp server %s: the name must not contain __ nor end with _ (its tools are named %s__<tool>, which would be ambiguous)", s.Name, s.Name)
	}
	switch s.Permission {
	case "", wield.PermissionAuto, wield.PermissionConfirm, wield.PermissionDeny:
	default:
		c.errorf(permAt, "mcp server %s: permission: %q is not auto, confirm or deny", s.Name, s.Permission)
	}
	if len(unset) > 0 {
		if s.Enabled && !c.failed(mark) {
			if c.serversOff == nil {
				c.serversOff = map[string]Problem{}
			}
			c.serversOff[s.Name] = c.warnOff(unset, "mcp server "+s.Name)
		}
		return s, nil, where, false
	}
	switch {
	case s.URL == "" && len(s.Command) == 0:
		c.errorf(n, "mcp server %s: needs a url or a command", s.Name)
	case s.URL != "" && len(s.Command) > 0:
		c.errorf(n, "mcp server %s: has both a url and a command", s.Name)
	case s.Transport == "" && s.URL != "":
		s.Transport = "http"
	case s.Transport == "":
		s.Transport = "stdio"
	case s.Transport == "stdio" && s.URL != "", s.Transport != "stdio" && s.URL == "":
		c.errorf(n, "mcp server %s: transport %s does not fit a %s", s.Name, s.Transport, map[bool]string{true: "url", false: "command"}[s.URL != ""])
	case s.Transport != "stdio" && s.Transport != "http" && s.Transport != "sse":
		c.errorf(n, "mcp server %s: transport %q is not stdio, http or sse", s.Name, s.Transport)
	}
	if oauth != nil {
		c.checkOAuthServer(&s, oauthAt)
	}
	return s, oauth, where, !c.failed(mark)
}

func (c *configDecoder) server(sf field) Server {
	var s Server
	fs, ok := c.mapping(sf.val, "server")
	if !ok {
		return s
	}
	for _, f := range fs {
		switch f.name {
		case "addr":
			s.Addr = c.str(f)
		case "keys":
			s.Keys = c.strings(f)
		case "body_timeout":
			s.BodyTimeout = c.dur(f, time.Second)
		case "max_conns_per_client":
			s.MaxConnsPerClient = c.integer(f)
		case "allow_workflow_bypass":
			s.AllowWorkflowBypass = c.boolean(f)
		case "self_approval":
			s.SelfApproval = c.boolean(f)
		case "max_body":
			s.MaxBody = c.bytes(f, "server.max_body", "the defaults, 8388608 for REST and 4194304 for MCP")
		default:
			c.unknown(f, "server")
		}
	}
	return s
}

// prefixes reads CIDR ranges, a bare address being its own /32 or /128,
// and ranges or addresses with a port ("127.0.0.1:8080", "[::1]:8080",
// "10.0.0.0/8:443").
func (c *configDecoder) prefixes(f field) ([]netip.Prefix, []httptool.Endpoint) {
	list, ok := seq(f.val)
	if !ok {
		c.errorf(f.val, "%s: expected a list of CIDR ranges, got %s", f.name, kindName(f.val))
		return nil, nil
	}
	var out []netip.Prefix
	var ports []httptool.Endpoint
	for _, n := range list {
		s := c.str(field{name: f.name, val: n})
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "[") || strings.Count(s, ":") == 1 {
			e, err := httptool.ParseEndpoint(s)
			if err != nil {
				c.errorf(n, "%s: %v", f.name, err)
				continue
			}
			ports = append(ports, e)
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				c.errorf(n, "%s: %q is not a CIDR range like \"10.0.0.0/8\", or one with a port like \"127.0.0.1:8080\"", f.name, s)
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, ports
}

func (c *configDecoder) stringMap(f field) map[string]string {
	fs, ok := c.mapping(f.val, f.name)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(fs))
	for _, e := range fs {
		out[e.name] = c.str(e)
	}
	return out
}

// integer reads a non-negative integer, written as one or expanded from
// the environment.
func (c *configDecoder) integer(f field) int {
	if c.usesUnset(f.val) {
		return 0
	}
	var v float64
	ok := false
	switch x := unwrap(f.val); {
	case c.expanded[x]:
		i, err := strconv.ParseInt(strings.TrimSpace(x.Value), 10, 64)
		v, ok = float64(i), err == nil
	default:
		var isInt bool
		v, isInt, ok = numberValue(x)
		ok = ok && isInt
	}
	switch {
	case !ok || v > 1<<31-1:
		c.errorf(f.val, "%s: expected a non-negative integer, got %s", f.name, kindName(f.val))
		return 0
	case v < 0:
		c.errorf(f.val, "%s: must not be negative", f.name)
		return 0
	}
	return int(v)
}

// bytes reads a size in bytes, a positive integer: zero is refused at its
// line, saying that leaving the key out is how to get def.
func (c *configDecoder) bytes(f field, key, def string) int64 {
	mark := len(c.problems)
	n := c.integer(f)
	if n == 0 && !c.usesUnset(f.val) && !c.failed(mark) {
		c.errorf(f.val, "%s: must be at least 1 (bytes; leave it out for %s)", key, def)
	}
	return int64(n)
}

// dur reads a duration like "30s", or a number of units.
func (c *configDecoder) dur(f field, unit time.Duration) time.Duration {
	if c.usesUnset(f.val) {
		return 0
	}
	x := unwrap(f.val)
	v, _, ok := numberValue(x)
	switch {
	case ok:
	case c.expanded[x]:
		if n, err := strconv.ParseFloat(x.Value, 64); err == nil {
			v, ok = n, true
		}
	case !isString(x):
		c.errorf(f.val, "%s: expected a duration like \"30s\" or a number, got %s", f.name, kindName(f.val))
		return 0
	}
	if !ok {
		d, err := time.ParseDuration(x.Value)
		switch {
		case err != nil:
			c.errorf(f.val, "%s: %q is not a duration like \"30s\"", f.name, x.Value)
		case d < 0:
			c.errorf(f.val, "%s: must not be negative", f.name)
		}
		return max(d, 0)
	}
	switch {
	case math.IsNaN(v):
		c.errorf(f.val, "%s: expected a duration like \"30s\" or a number, got %s", f.name, kindName(f.val))
	case v < 0:
		c.errorf(f.val, "%s: must not be negative", f.name)
	case v*float64(unit) > float64(1<<63-1):
		c.errorf(f.val, "%s: too long", f.name)
	default:
		return time.Duration(v * float64(unit))
	}
	return 0
}

// flag reads a boolean, written as one or expanded from the environment.
func (c *configDecoder) flag(f field) bool {
	if c.usesUnset(f.val) {
		return false
	}
	if x := unwrap(f.val); c.expanded[x] {
		if b, err := strconv.ParseBool(x.Value); err == nil {
			return b
		}
	}
	return c.boolean(f)
}

// expand replaces ${NAME} and ${NAME:-default} in the string values under
// n, in place, before anything is decoded. Keys are left alone, and so are
// aliases: their node is expanded where it is written.
func (c *configDecoder) expand(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if path != "" {
				key = path + "." + key
			}
			c.expand(n.Content[i+1], key)
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			c.expand(v, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.ScalarNode:
		if tag(n) == "!!str" {
			n.Value = c.expandString(n, n.Value, path)
		}
	}
}

func (c *configDecoder) expandString(n *yaml.Node, s, path string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			c.exprErrorf(n, s, i, "%s: unterminated ${", path)
			return s
		}
		expr := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(expr, ":-")
		switch v, ok := c.lookup(name); {
		case !validEnvName(name):
			c.exprErrorf(n, s, i, "%s: %q is not an environment variable name", path, name)
		case ok && (v != "" || !hasDef):
			b.WriteString(v)
			if v == "" {
				c.empty[n] = append(c.empty[n], name)
			}
		case hasDef:
			b.WriteString(def)
		default:
			c.unset = append(c.unset, &unsetVar{node: n, name: name, path: path, at: c.exprAt(n, s, i)})
		}
		i += end + 1
	}
	c.expanded[n] = true
	return b.String()
}

// exprErrorf reports a problem at offset i of a string value: exact when
// the value's text up to i stands as is on its first line in the file (a
// plain or quoted value without escapes before i), the value's start
// otherwise.
func (c *configDecoder) exprErrorf(n *yaml.Node, s string, i int, format string, args ...any) {
	p := c.exprAt(n, s, i)
	p.Message = fmt.Sprintf(format, args...)
	c.problems = append(c.problems, p)
}

// exprAt is where offset i of a string value stands, as exprErrorf says.
func (c *configDecoder) exprAt(n *yaml.Node, s string, i int) Problem {
	ln, col := pos(n)
	p := Problem{File: c.decoder.file, Line: ln, Col: col}
	quote := 0
	switch n.Style {
	case 0:
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		quote = 1
	default:
		return p
	}
	line := c.src
	for range n.Line - 1 {
		_, line, _ = bytes.Cut(line, []byte("\n"))
	}
	for range n.Column - 1 + quote { // columns count characters
		_, size := utf8.DecodeRune(line)
		line = line[size:]
	}
	if bytes.HasPrefix(line, []byte(s[:i])) {
		p.Col += quote + utf8.RuneCountInString(s[:i])
	}
	return p
}

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// configOnlyKeys are the top-level keys of a configuration that no tool
// file, toolset or agent has (tools: is both), for [LooksLikeConfig].
var configOnlyKeys = []string{"tools_directory", "auto_reload", "reload_interval", "watch_for_changes", "reload",
	"programs", "policy", "redis", "strict_validation", "max_output", "retry", "approval_timeout", "tool_dirs",
	"timeout", "network_timeout", "concurrency", "allowed_paths", "allow_hard_links", "max_file_read", "max_file_write", "env_allow", "web_search",
	"mcp_servers", "store", "server", "http_allow", "http_allow_hosts", "secret_names", "mcp"}

// LooksLikeConfig reports whether the YAML file at path is a configuration
// whatever its name (engine.yaml): one document, a mapping without name
// or kind (every tool, toolset and agent has a name; a tools: list has
// nothing else) with a tools: mapping or a key only a configuration has. A file
// that cannot be read or parsed is not one: the tool loader reports why.
func LooksLikeConfig(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
	default:
		return false
	}
	src, err := readRegular(path)
	if err != nil {
		return false
	}
	return looksLikeConfig(src)
}

// looksLikeConfig is LooksLikeConfig of a file's contents.
func looksLikeConfig(src []byte) bool {
	var doc map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return false
	}
	var more any
	if dec.Decode(&more) == nil {
		return false // a stream: tool documents
	}
	if _, ok := doc["name"]; ok {
		return false
	}
	if _, ok := doc["kind"]; ok {
		return false
	}
	if _, ok := doc["tools"].(map[string]any); ok {
		return true // the config.yml layout; a toolset's or a tools: list's is a list
	}
	for _, k := range configOnlyKeys {
		if _, ok := doc[k]; ok {
			return true
		}
	}
	return false
}
