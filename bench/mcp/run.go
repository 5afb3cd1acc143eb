package mcpbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config says what [Run] measures, and for how long.
type Config struct {
	Wield    string        // the wield binary, built from the tree
	Revision string        // the tree's commit, when the binary does not say (GOFLAGS=-buildvcs=false)
	Rounds   int           // interleaved rounds; the tables show medians over them
	Duration time.Duration // how long each case runs, when Calls is 0
	Calls    int           // if not 0, each case is this many calls (lists: a tenth) instead of Duration
	Long     int           // calls made to a fresh wield serve before its RSS is read (the issue: 100,000)
	ClkTck   int           // clock ticks a second of /proc/PID/stat (getconf CLK_TCK)
	Work     string        // a folder for wield's homes, logs and tool files
	Progress io.Writer     // a line per case as it ends
}

// The servers, by the name the tables give them.
const (
	srvPlain      = "plain"
	srvMCPGo      = "mcp-go"
	srvSDK        = "go-sdk"
	srvWield      = "wield"
	srvWieldAsync = "wield-async"
)

// listTools is how many tools the tools/list case lists.
const listTools = 1000

// sample is what one case measured in one round.
type sample struct {
	calls  int
	wall   time.Duration
	server time.Duration // the server's CPU, from /proc
	client time.Duration // this process's CPU: every client goroutine
}

func (s sample) perSecond() float64 { return float64(s.calls) / s.wall.Seconds() }
func (s sample) serverPer() float64 { return float64(s.server.Microseconds()) / float64(s.calls) }
func (s sample) clientPer() float64 { return float64(s.client.Microseconds()) / float64(s.calls) }
func (s sample) wallPer() float64   { return float64(s.wall.Microseconds()) / float64(s.calls) }

// caseKey names a case: the table, the client, the concurrency, the
// server.
type caseKey struct {
	table  string // "mcp", "rest", "list"
	client string
	c      int
	server string
}

// longRun is the RSS of a fresh wield serve as calls accumulate.
type longRun struct {
	idle  int64
	after []int64 // after each quarter of Config.Long calls
	// the anonymous parts, idle and after all calls (see ProcRSSAnon)
	idleAnon, anonAfter int64
	// RSS and its anonymous part 2 s after the calls, the server quiet
	// (wield gives its free memory back once a busy server goes quiet)
	quiet, quietAnon int64
	rate             float64 // calls/s over all of them
}

// results is everything a run measured, for [report].
type results struct {
	cfg       Config
	started   time.Time
	loadStart string
	loadEnd   string
	samples   map[caseKey][]sample
	idle      map[string]int64 // RSS before any call
	loaded    map[string]int64 // RSS after every round
	idleAnon  map[string]int64 // their anonymous parts (see ProcRSSAnon)
	anon      map[string]int64
	long      map[string]*longRun
	listing   struct{ builtins, files, bytes int }
	listBytes map[string]int // bytes of one listing, per server
	logs      map[string]string
}

// Run measures wield serve against its peers as [Config] says and writes
// the tables to out (see the package doc). A failed call, a server that
// exits or does not answer, fails the run: the error says where.
func Run(cfg Config, out io.Writer) error {
	if cfg.Rounds < 1 || cfg.ClkTck < 1 || cfg.Long < 4 || (cfg.Calls < 1 && cfg.Duration <= 0) {
		return fmt.Errorf("run: want rounds ≥ 1, clock ticks ≥ 1, long ≥ 4 and calls or a duration (got %+v)", cfg)
	}
	res := &results{
		cfg: cfg, started: time.Now(), loadStart: loadAverage(),
		samples: map[caseKey][]sample{}, idle: map[string]int64{}, loaded: map[string]int64{},
		idleAnon: map[string]int64{}, anon: map[string]int64{},
		long: map[string]*longRun{}, listBytes: map[string]int{}, logs: map[string]string{},
	}
	var running []*process
	defer func() {
		for _, p := range running {
			p.stop()
		}
	}()
	start := func(p *process, err error) (*process, error) {
		if err == nil {
			running = append(running, p)
		}
		return p, err
	}

	// The servers of the tools/call and REST cases, idle RSS read once
	// all are up and have settled.
	main := make([]*process, 0, 5)
	for _, s := range []struct{ name, kind string }{{srvPlain, KindPlain}, {srvMCPGo, KindMCPGo}, {srvSDK, KindSDK}} {
		p, err := start(startPeer(s.name, s.kind, ""))
		if err != nil {
			return err
		}
		main = append(main, p)
	}
	for _, s := range []struct {
		name  string
		flags []string
	}{{srvWield, nil}, {srvWieldAsync, []string{"--records", "async"}}} {
		p, err := start(startWield(s.name, cfg.Wield, filepath.Join(cfg.Work, s.name), s.flags...))
		if err != nil {
			return err
		}
		main = append(main, p)
	}
	time.Sleep(time.Second)
	for _, p := range main {
		if err := readRSS(p, res.idle, res.idleAnon); err != nil {
			return err
		}
	}
	byName := map[string]*process{}
	for _, p := range main {
		byName[p.name] = p
	}

	// The tools/list servers: wield with tool files that make, with its
	// built-in tools, exactly listTools tools; the peers with the very
	// tools wield lists.
	lists, err := startListServers(res, byName[srvWield], start)
	if err != nil {
		return err
	}

	rest := []*process{byName[srvPlain], byName[srvWield], byName[srvWieldAsync]}
	listCalls := 0 // a listing is ~10× a call: a tenth as many
	if cfg.Calls > 0 {
		listCalls = max(cfg.Calls/10, 5)
	}
	for round := range cfg.Rounds {
		for _, c := range []int{1, 8, 64} {
			for _, cl := range []struct {
				name string
				dial dialer
			}{{ClientRaw, dialRaw}, {ClientSDK, dialSDK}} {
				for _, p := range rotate(main, round) {
					if err := res.measure(caseKey{"mcp", cl.name, c, p.name}, p, cl.dial, c, cfg.Calls); err != nil {
						return err
					}
				}
			}
		}
		for _, c := range []int{8, 64} {
			for _, p := range rotate(rest, round) {
				if err := res.measure(caseKey{"rest", ClientRaw, c, p.name}, p, dialREST, c, cfg.Calls); err != nil {
					return err
				}
			}
		}
		for _, p := range rotate(lists, round) {
			if err := res.measure(caseKey{"list", ClientRaw, 1, p.name}, p, dialList(listTools), 1, listCalls); err != nil {
				return err
			}
		}
	}
	for _, p := range main {
		if err := readRSS(p, res.loaded, res.anon); err != nil {
			return err
		}
	}

	// RSS of a fresh wield serve as calls accumulate, up to Long.
	for _, s := range []struct {
		name  string
		flags []string
	}{{srvWield, nil}, {srvWieldAsync, []string{"--records", "async"}}} {
		p, err := start(startWield(s.name, cfg.Wield, filepath.Join(cfg.Work, s.name+"-long"), s.flags...))
		if err != nil {
			return err
		}
		if res.long[s.name], err = res.measureLong(p); err != nil {
			return err
		}
		p.stop()
		res.logs[s.name+" (long)"] = logSummary(p.log)
	}
	for _, p := range running {
		p.stop()
	}
	running = nil
	for _, p := range main {
		if p.log != "" {
			res.logs[p.name] = logSummary(p.log)
		}
	}
	res.loadEnd = loadAverage()
	return report(res, out)
}

// readRSS notes p's RSS in rss and its anonymous part in anon.
func readRSS(p *process, rss, anon map[string]int64) error {
	r, err := p.rss()
	if err != nil {
		return err
	}
	a, err := p.anon()
	if err != nil {
		return err
	}
	rss[p.name], anon[p.name] = r, a
	return nil
}

// startListServers writes the tool files, starts wield on them and the
// peers on the very tools wield lists, and returns the four servers.
func startListServers(res *results, wield *process, start func(*process, error) (*process, error)) ([]*process, error) {
	cfg := res.cfg
	builtins, _, err := listOf(wield.addr)
	if err != nil {
		return nil, fmt.Errorf("list wield's built-in tools: %w", err)
	}
	// wield adds tools of its own to large catalogs (search_tools): the
	// files are as many as make the listing exactly listTools, found by
	// starting it again with fewer when it lists more.
	files := listTools - len(builtins)
	dir := filepath.Join(cfg.Work, "tools")
	var (
		w     *process
		tools []json.RawMessage
		size  int
	)
	for attempt := 0; ; attempt++ {
		if files < 1 {
			return nil, fmt.Errorf("wield serve lists %d built-in tools: no room for tool files in %d", len(builtins), listTools)
		}
		os.RemoveAll(dir)
		if err := writeToolFiles(dir, files); err != nil {
			return nil, err
		}
		if w, err = startWield(srvWield, cfg.Wield, filepath.Join(cfg.Work, fmt.Sprintf("wield-list-%d", attempt)), "--tools", dir); err != nil {
			return nil, err
		}
		tools, size, err = listOf(w.addr)
		if err != nil {
			w.stop()
			return nil, fmt.Errorf("list wield's tools: %w", err)
		}
		if len(tools) == listTools {
			break
		}
		w.stop()
		if attempt == 2 {
			return nil, fmt.Errorf("wield serve with %d tool files lists %d tools, want %d", files, len(tools), listTools)
		}
		files -= len(tools) - listTools
	}
	start(w, nil)
	res.listing.builtins, res.listing.files = listTools-files, files
	res.listing.bytes = size
	listing, err := json.Marshal(tools)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(cfg.Work, "listing.json")
	if err := os.WriteFile(file, listing, 0o644); err != nil {
		return nil, err
	}
	out := []*process{w}
	for _, s := range []struct{ name, kind string }{{srvPlain, KindPlain}, {srvMCPGo, KindMCPGo}, {srvSDK, KindSDK}} {
		p, err := start(startPeer(s.name, s.kind, file))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	for _, p := range out {
		tools, size, err := listOf(p.addr)
		if err == nil && len(tools) != listTools {
			err = fmt.Errorf("%d tools, want %d", len(tools), listTools)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: tools/list: %w", p.name, err)
		}
		res.listBytes[p.name] = size
	}
	return out, nil
}

// listOf lists the tools of the MCP server at addr, on a connection of
// its own: the tools and the bytes of the listing.
func listOf(addr string) ([]json.RawMessage, int, error) {
	conn, err := DialRaw(addr, "/mcp")
	if err != nil {
		return nil, 0, err
	}
	defer conn.Close()
	if err := conn.Initialize(protocolVersion); err != nil {
		return nil, 0, err
	}
	tools, size, _, err := listAll(conn)
	return tools, size, err
}

// writeToolFiles writes n tool files into dir, each an echo-like tool
// (one string parameter, the built-in echo as its entry), as a user
// would declare them (docs/tool-files.md).
func writeToolFiles(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		name := fmt.Sprintf("echo_%04d", i+1)
		text := "name: " + name + `
description: Echo a message back
parameters:
  - name: message
    type: string
    description: the message to echo
entry: {type: builtin, handler: echo}
`
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// rotate is servers starting at the round's index, so that no server is
// always first after the machine's pause or last after the others'
// clean-ups.
func rotate(servers []*process, round int) []*process {
	k := round % len(servers)
	return append(append([]*process(nil), servers[k:]...), servers[:k]...)
}

// warmCalls is how many untimed calls each client makes first (its
// connection and session are already up): enough to warm the server's
// pools and caches, few at high concurrency.
func warmCalls(c int) int { return max(2, 256/c) }

// measure runs one case: c callers of dial against p, after warm-up
// calls, for cfg.Duration or calls calls (when not 0), and keeps the
// sample.
func (res *results) measure(key caseKey, p *process, dial dialer, c, calls int) error {
	cfg := res.cfg
	limit := cfg.Duration
	if calls > 0 {
		limit = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit+2*time.Minute)
	defer cancel()
	callers, shared, err := dial(ctx, p.addr, c)
	if err != nil {
		return fmt.Errorf("%s %s c=%d on %s: connect: %w", key.table, key.client, c, p.name, err)
	}
	defer shared()
	defer closeAll(callers)
	if err := run(callers, warmCalls(c)*len(callers), 0); err != nil {
		return fmt.Errorf("%s %s c=%d on %s: warm-up: %w", key.table, key.client, c, p.name, err)
	}
	server0, err := p.cpu(cfg.ClkTck)
	if err != nil {
		return err
	}
	client0, err := ProcCPU("self", cfg.ClkTck)
	if err != nil {
		return err
	}
	t0 := time.Now()
	done, err := runCounted(callers, calls, limit)
	wall := time.Since(t0)
	if err != nil {
		return fmt.Errorf("%s %s c=%d on %s: %w", key.table, key.client, c, p.name, err)
	}
	server1, err := p.cpu(cfg.ClkTck)
	if err != nil {
		return err
	}
	client1, _ := ProcCPU("self", cfg.ClkTck)
	s := sample{calls: done, wall: wall, server: server1 - server0, client: client1 - client0}
	res.samples[key] = append(res.samples[key], s)
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "round %d  %-4s %-6s c=%-2d %-11s %9s calls/s  server %7.1f µs/call  client %6.1f µs/call\n",
			len(res.samples[key]), key.table, key.client, c, p.name, group(s.perSecond()), s.serverPer(), s.clientPer())
	}
	time.Sleep(50 * time.Millisecond) // the sessions' clean-up, before the next server's case
	return nil
}

// run makes calls calls over callers, or runs until limit, and fails on
// the first failed call.
func run(callers []caller, calls int, limit time.Duration) error {
	_, err := runCounted(callers, calls, limit)
	return err
}

// runCounted is run, answering how many calls succeeded. Each caller is a
// goroutine; with calls > 0 they share the count, else each runs until
// the limit. Every failure is counted; any fails the case.
func runCounted(callers []caller, calls int, limit time.Duration) (int, error) {
	var (
		claimed, done, failed atomic.Int64
		first                 atomic.Value
		wg                    sync.WaitGroup
	)
	deadline := time.Now().Add(limit)
	for _, cl := range callers {
		wg.Go(func() {
			n := int64(0)
			defer func() { done.Add(n) }()
			for {
				if calls > 0 {
					if claimed.Add(1) > int64(calls) {
						return
					}
				} else if !time.Now().Before(deadline) {
					return
				}
				if err := cl.call(); err != nil {
					failed.Add(1)
					first.CompareAndSwap(nil, err)
					return
				}
				n++
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		err, _ := first.Load().(error)
		return int(done.Load()), fmt.Errorf("%d failed calls (of %d), the first: %w", f, done.Load()+f, err)
	}
	if done.Load() == 0 {
		return 0, errors.New("no call was made")
	}
	return int(done.Load()), nil
}

// measureLong makes cfg.Long calls of echo to a fresh wield, 8 clients,
// reading its RSS before and after each quarter.
func (res *results) measureLong(p *process) (*longRun, error) {
	cfg := res.cfg
	time.Sleep(time.Second)
	idle, err := p.rss()
	if err != nil {
		return nil, err
	}
	idleAnon, err := p.anon()
	if err != nil {
		return nil, err
	}
	l := &longRun{idle: idle, idleAnon: idleAnon}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	callers, shared, err := dialRaw(ctx, p.addr, 8)
	if err != nil {
		return nil, err
	}
	defer shared()
	defer closeAll(callers)
	t0 := time.Now()
	for q := range 4 {
		n := cfg.Long / 4
		if q < cfg.Long%4 {
			n++
		}
		if err := run(callers, n, 0); err != nil {
			return nil, fmt.Errorf("%s: %d calls: %w", p.name, cfg.Long, err)
		}
		rss, err := p.rss()
		if err != nil {
			return nil, err
		}
		l.after = append(l.after, rss)
	}
	l.rate = float64(cfg.Long) / time.Since(t0).Seconds()
	if l.anonAfter, err = p.anon(); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second)
	if l.quiet, err = p.rss(); err != nil {
		return nil, err
	}
	if l.quietAnon, err = p.anon(); err != nil {
		return nil, err
	}
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "long %-11s %s calls: RSS %.1f MiB idle, %.1f MiB after\n", p.name, group(float64(cfg.Long)), mib(l.idle), mib(l.after[3]))
	}
	return l, nil
}

// logSummary says how much wield logged, and how many call lines: the
// INFO line per call the defaults write.
func logSummary(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Count(string(data), "\n")
	calls := strings.Count(string(data), " msg=call ")
	return fmt.Sprintf("%s lines (%s call lines), %.1f MiB", group(float64(lines)), group(float64(calls)), mib(int64(len(data))))
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
