package mcpbench

import (
	"bufio"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report writes the tables of a run as Markdown.
func report(res *results, out io.Writer) error {
	w := bufio.NewWriter(out)
	cfg := res.cfg
	per := fmt.Sprintf("%s per case", cfg.Duration)
	if cfg.Calls > 0 {
		per = fmt.Sprintf("%s calls per case, %s per listing case (smoke)", group(float64(cfg.Calls)), group(float64(max(cfg.Calls/10, 5))))
	}
	fmt.Fprintf(w, "## `wield serve` against its peers (bench/serve-peers.sh)\n\n")
	fmt.Fprintf(w, "%s; %d cores, %s; load average %s before, %s after; %s; %d rounds of %s, interleaved (each round runs every case on every server back to back); tables show medians over the rounds.\n\n",
		res.started.UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), cpuModel(), res.loadStart, res.loadEnd, runtime.Version(), cfg.Rounds, per)
	size := int64(-1)
	if fi, err := os.Stat(cfg.Wield); err == nil {
		size = fi.Size()
	}
	fmt.Fprintf(w, "- wield: the binary built from the tree (%s bytes, %s), started as `wield serve --addr 127.0.0.1:0 --addr-file F` in an empty folder that is its HOME and working directory (so: SQLite records in sync mode, an INFO log line per call, metrics, events), its log to a file; wield-async adds `--records async`.\n", group(float64(size)), buildOf(cfg.Wield, cfg.Revision))
	fmt.Fprintf(w, "- plain: net/http + encoding/json by hand, stateless; mcp-go: mark3labs/mcp-go's streamable HTTP server, input validation on; go-sdk: the official SDK's streamable HTTP server, typed echo tool. Each server is a process of its own.\n")
	fmt.Fprintf(w, "- Clients in the bench process, protocol %s: raw = one keep-alive HTTP/1.1 connection per client, initialize once, prebuilt request bytes, every answer read whole and checked (any failure fails the run); go-sdk = mcp.NewClient over StreamableClientTransport, one session per client.\n", protocolVersion)
	fmt.Fprintf(w, "- Server CPU: utime+stime of /proc/PID/stat over the timed calls (warm-up excluded), per call, to a clock tick (%s) over the calls of a case; client CPU: the bench process's own. RSS: VmRSS of /proc/PID/status.\n\n", time.Second/time.Duration(cfg.ClkTck))

	mainServers := []string{srvPlain, srvMCPGo, srvSDK, srvWield, srvWieldAsync}
	for _, cl := range []struct{ name, title string }{
		{ClientRaw, "raw JSON-RPC client"},
		{ClientSDK, "go-sdk client"},
	} {
		fmt.Fprintf(w, "### MCP tools/call of echo, %s\n\n", cl.title)
		header(w, mainServers)
		for _, c := range []int{1, 8, 64} {
			key := func(s string) caseKey { return caseKey{"mcp", cl.name, c, s} }
			row(w, fmt.Sprintf("c=%d calls/s (× mcp-go)", c), mainServers, func(s string) string {
				v := group(res.median(key(s), sample.perSecond))
				if s != srvMCPGo {
					v += fmt.Sprintf(" (%.2f×)", res.ratio(key(s), key(srvMCPGo), sample.perSecond))
				}
				return v
			})
			row(w, fmt.Sprintf("c=%d server CPU µs/call", c), mainServers, func(s string) string {
				return fmt.Sprintf("%.0f", res.median(key(s), sample.serverPer))
			})
			row(w, fmt.Sprintf("c=%d client CPU µs/call", c), mainServers, func(s string) string {
				return fmt.Sprintf("%.0f", res.median(key(s), sample.clientPer))
			})
			row(w, fmt.Sprintf("c=%d × mcp-go, each round", c), mainServers, func(s string) string {
				if s == srvMCPGo {
					return ""
				}
				return res.ratios(key(s), key(srvMCPGo), sample.perSecond)
			})
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "### Memory of the servers above\n\n")
	header(w, mainServers)
	row(w, "RSS idle (after start, before any call)", mainServers, func(s string) string { return fmt.Sprintf("%.1f MiB", mib(res.idle[s])) })
	row(w, "RSS after the rounds", mainServers, func(s string) string { return fmt.Sprintf("%.1f MiB", mib(res.loaded[s])) })
	row(w, "of which anonymous (heap, stacks), idle / after", mainServers, func(s string) string {
		return fmt.Sprintf("%.1f / %.1f MiB", mib(res.idleAnon[s]), mib(res.anon[s]))
	})
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The rest of the RSS is pages of the program's file. wield gives back those its start touched once it listens (madvise MADV_PAGEOUT on its own program's mappings: they stay in the page cache, no longer in its resident set), which the peers do not; how many count otherwise depends on how the file came into the page cache (larger folios are mapped whole), so the anonymous part is the figure that compares the programs' own memory.\n\n")

	restServers := []string{srvPlain, srvWield, srvWieldAsync}
	fmt.Fprintf(w, "### REST: POST /v1/tools/echo/call, raw client\n\n")
	header(w, restServers)
	for _, c := range []int{8, 64} {
		key := func(s string) caseKey { return caseKey{"rest", ClientRaw, c, s} }
		row(w, fmt.Sprintf("c=%d calls/s (× plain)", c), restServers, func(s string) string {
			v := group(res.median(key(s), sample.perSecond))
			if s != srvPlain {
				v += fmt.Sprintf(" (%.2f×)", res.ratio(key(s), key(srvPlain), sample.perSecond))
			}
			return v
		})
		row(w, fmt.Sprintf("c=%d server CPU µs/call", c), restServers, func(s string) string {
			return fmt.Sprintf("%.0f", res.median(key(s), sample.serverPer))
		})
	}
	fmt.Fprintln(w)

	listServers := []string{srvPlain, srvMCPGo, srvSDK, srvWield}
	fmt.Fprintf(w, "### tools/list of %s tools, one raw client\n\n", group(listTools))
	fmt.Fprintf(w, "wield serve with %s tool files (echo-like, `entry: {type: builtin, handler: echo}`) beside its %d built-in tools; the peers serve the very tools wield lists (names, schemas, annotations). A listing follows nextCursor to the end.\n\n", group(float64(res.listing.files)), res.listing.builtins)
	header(w, listServers)
	key := func(s string) caseKey { return caseKey{"list", ClientRaw, 1, s} }
	row(w, "µs per listing (× plain's time)", listServers, func(s string) string {
		v := group(res.median(key(s), sample.wallPer))
		if s != srvPlain {
			v += fmt.Sprintf(" (%.2f×)", res.ratio(key(s), key(srvPlain), sample.wallPer))
		}
		return v
	})
	row(w, "server CPU µs per listing", listServers, func(s string) string { return group(res.median(key(s), sample.serverPer)) })
	row(w, "bytes per listing", listServers, func(s string) string { return group(float64(res.listBytes[s])) })
	fmt.Fprintln(w)

	fmt.Fprintf(w, "### A fresh wield serve under %s calls (raw client, c=8)\n\n", group(float64(cfg.Long)))
	longServers := []string{srvWield, srvWieldAsync}
	header(w, longServers)
	row(w, "RSS idle", longServers, func(s string) string { return fmt.Sprintf("%.1f MiB", mib(res.long[s].idle)) })
	for q := range 4 {
		n := 0
		for i := range q + 1 {
			n += cfg.Long / 4
			if i < cfg.Long%4 {
				n++
			}
		}
		row(w, fmt.Sprintf("RSS after %s calls", group(float64(n))), longServers, func(s string) string { return fmt.Sprintf("%.1f MiB", mib(res.long[s].after[q])) })
	}
	row(w, "of which anonymous, idle / after", longServers, func(s string) string {
		return fmt.Sprintf("%.1f / %.1f MiB", mib(res.long[s].idleAnon), mib(res.long[s].anonAfter))
	})
	row(w, "RSS 2 s after the calls (anonymous)", longServers, func(s string) string {
		return fmt.Sprintf("%.1f MiB (%.1f)", mib(res.long[s].quiet), mib(res.long[s].quietAnon))
	})
	row(w, "calls/s", longServers, func(s string) string { return group(res.long[s].rate) })
	fmt.Fprintln(w)
	names := make([]string, 0, len(res.logs))
	for n := range res.logs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "- log of %s: %s\n", n, res.logs[n])
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "### Issue 15's targets\n\n| target | measured | met |\n| --- | ---: | --- |\n")
	target := func(what, measured string, met bool) {
		fmt.Fprintf(w, "| %s | %s | %s |\n", what, measured, yesNo(met))
	}
	mcpKey := func(c int, s string) caseKey { return caseKey{"mcp", ClientRaw, c, s} }
	for _, c := range []int{8, 64} {
		r := res.ratio(mcpKey(c, srvWield), mcpKey(c, srvMCPGo), sample.perSecond)
		target(fmt.Sprintf("wield (defaults) MCP calls/s ≥ 1.5× mcp-go, c=%d, raw client", c), fmt.Sprintf("%.2f×", r), r >= 1.5)
	}
	cpu := res.median(mcpKey(8, srvWield), sample.serverPer)
	target("wield (defaults) server CPU ≤ 80 µs/call, c=8, raw client", fmt.Sprintf("%.0f µs", cpu), cpu <= 80)
	after := res.long[srvWield].after[3]
	longWhat := fmt.Sprintf("wield RSS after %s calls ≤ 40 MiB", group(float64(cfg.Long)))
	if cfg.Long < 100000 {
		longWhat += " (the target is after 100,000: this run made fewer)"
	}
	target(longWhat, fmt.Sprintf("%.1f MiB", mib(after)), after <= 40<<20)
	target("wield RSS idle ≤ 25 MiB", fmt.Sprintf("%.1f MiB", mib(res.idle[srvWield])), res.idle[srvWield] <= 25<<20)
	target("the binary ≤ 60 MB", fmt.Sprintf("%.1f MB", float64(size)/1e6), size >= 0 && size <= 60e6)
	for _, t := range []struct {
		server string
		min    float64
	}{{srvWield, 0.5}, {srvWieldAsync, 0.8}} {
		for _, c := range []int{8, 64} {
			k := func(s string) caseKey { return caseKey{"rest", ClientRaw, c, s} }
			r := res.ratio(k(t.server), k(srvPlain), sample.perSecond)
			target(fmt.Sprintf("REST %s ≥ %.1f× plain, c=%d", t.server, t.min, c), fmt.Sprintf("%.2f×", r), r >= t.min)
		}
	}
	r := res.ratio(key(srvWield), key(srvPlain), sample.wallPer)
	target("tools/list of 1,000 tools ≤ 2× plain's time", fmt.Sprintf("%.2f×", r), r <= 2)
	return w.Flush()
}

func header(w io.Writer, servers []string) {
	fmt.Fprintf(w, "| |")
	for _, s := range servers {
		fmt.Fprintf(w, " %s |", s)
	}
	fmt.Fprintf(w, "\n| --- |%s\n", strings.Repeat(" ---: |", len(servers)))
}

func row(w io.Writer, name string, servers []string, cell func(string) string) {
	fmt.Fprintf(w, "| %s |", name)
	for _, s := range servers {
		fmt.Fprintf(w, " %s |", cell(s))
	}
	fmt.Fprintln(w)
}

// median is the median over the rounds of f of a case's samples.
func (res *results) median(k caseKey, f func(sample) float64) float64 {
	var v []float64
	for _, s := range res.samples[k] {
		v = append(v, f(s))
	}
	return median(v)
}

// ratio is the median over the rounds of f(a)/f(b) in the same round.
func (res *results) ratio(a, b caseKey, f func(sample) float64) float64 {
	return median(res.roundRatios(a, b, f))
}

// ratios lists each round's f(a)/f(b).
func (res *results) ratios(a, b caseKey, f func(sample) float64) string {
	var out []string
	for _, r := range res.roundRatios(a, b, f) {
		out = append(out, fmt.Sprintf("%.2f", r))
	}
	return strings.Join(out, " ")
}

func (res *results) roundRatios(a, b caseKey, f func(sample) float64) []float64 {
	sa, sb := res.samples[a], res.samples[b]
	var v []float64
	for i := range min(len(sa), len(sb)) {
		v = append(v, f(sa[i])/f(sb[i]))
	}
	return v
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// group writes n rounded, with thousands separated by commas.
func group(n float64) string {
	s := strconv.FormatFloat(n, 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// buildOf says which commit a Go binary was built from (or, when it does
// not say, the one given), and with which Go.
func buildOf(bin, given string) string {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "build unknown"
	}
	rev, modified := given, false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "built with " + info.GoVersion
	}
	if modified {
		rev += " with local changes"
	}
	return "commit " + rev + ", " + info.GoVersion
}
