package mcpbench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// ABConfig says what [RunAB] compares: two wield binaries, each started
// as [Run] starts wield (the README's command, its defaults), in one run.
type ABConfig struct {
	A, B     string        // the wield binaries: A the reference, B the change
	Revision string        // B's commit, when the binary does not say
	Flags    []string      // more flags for both (--records async)
	Rounds   int           // interleaved rounds
	Duration time.Duration // how long each case runs
	ClkTck   int           // clock ticks a second of /proc/PID/stat
	Work     string        // a folder for the servers' homes and logs
	Progress io.Writer     // a line per case as it ends
}

// RunAB measures two wield binaries side by side, as a change is judged on
// a shared machine: MCP tools/call with the raw client at c = 8 and 64 and
// REST POST /v1/tools/echo/call at c = 8 and 64, the two servers' cases
// back to back in every round (the order alternating), then RSS idle and
// after the rounds. It writes a table of medians and of B/A ratios taken
// within each round: calls/s, server CPU per call.
func RunAB(cfg ABConfig, out io.Writer) error {
	if cfg.A == "" || cfg.B == "" || cfg.Rounds < 1 || cfg.Duration <= 0 || cfg.ClkTck < 1 {
		return fmt.Errorf("ab: want two binaries, rounds ≥ 1, a duration and clock ticks ≥ 1 (got %+v)", cfg)
	}
	res := &results{
		cfg:     Config{Rounds: cfg.Rounds, Duration: cfg.Duration, ClkTck: cfg.ClkTck, Progress: cfg.Progress},
		started: time.Now(), loadStart: loadAverage(),
		samples: map[caseKey][]sample{}, idle: map[string]int64{}, loaded: map[string]int64{},
		idleAnon: map[string]int64{}, anon: map[string]int64{},
	}
	var servers []*process
	defer func() {
		for _, p := range servers {
			p.stop()
		}
	}()
	for _, s := range []struct{ name, bin string }{{"A", cfg.A}, {"B", cfg.B}} {
		p, err := startWield(s.name, s.bin, filepath.Join(cfg.Work, s.name), cfg.Flags...)
		if err != nil {
			return err
		}
		servers = append(servers, p)
	}
	time.Sleep(time.Second)
	for _, p := range servers {
		if err := readRSS(p, res.idle, res.idleAnon); err != nil {
			return err
		}
	}
	type abCase struct {
		table string
		c     int
		dial  dialer
	}
	cases := []abCase{{"mcp", 8, dialRaw}, {"mcp", 64, dialRaw}, {"rest", 8, dialREST}, {"rest", 64, dialREST}}
	for round := range cfg.Rounds {
		for _, k := range cases {
			for _, p := range rotate(servers, round) {
				if err := res.measure(caseKey{k.table, ClientRaw, k.c, p.name}, p, k.dial, k.c, 0); err != nil {
					return err
				}
			}
		}
	}
	for _, p := range servers {
		if err := readRSS(p, res.loaded, res.anon); err != nil {
			return err
		}
	}
	res.loadEnd = loadAverage()

	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "A/B of two wield binaries (WIELD_BASE=A bench/serve-peers.sh, B the tree's build), %s; %d cores; load average %s before, %s after; %d rounds of %s per case, interleaved; flags: %v\n\n",
		res.started.UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), res.loadStart, res.loadEnd, cfg.Rounds, cfg.Duration, cfg.Flags)
	for _, b := range []struct{ name, bin, rev string }{{"A", cfg.A, ""}, {"B", cfg.B, cfg.Revision}} {
		size := int64(-1)
		if fi, err := os.Stat(b.bin); err == nil {
			size = fi.Size()
		}
		fmt.Fprintf(w, "- %s: %s (%s bytes, %s)\n", b.name, b.bin, group(float64(size)), buildOf(b.bin, b.rev))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| case | A calls/s | B calls/s | B/A each round | B/A | A µs/call | B µs/call | B/A CPU |\n| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n")
	for _, k := range cases {
		a, b := caseKey{k.table, ClientRaw, k.c, "A"}, caseKey{k.table, ClientRaw, k.c, "B"}
		fmt.Fprintf(w, "| %s c=%d | %s | %s | %s | %.2f× | %.0f | %.0f | %.2f× |\n", k.table, k.c,
			group(res.median(a, sample.perSecond)), group(res.median(b, sample.perSecond)),
			res.ratios(b, a, sample.perSecond), res.ratio(b, a, sample.perSecond),
			res.median(a, sample.serverPer), res.median(b, sample.serverPer), res.ratio(b, a, sample.serverPer))
	}
	fmt.Fprintf(w, "\n| RSS (anonymous part) | A | B |\n| --- | ---: | ---: |\n| idle | %.1f MiB (%.1f) | %.1f MiB (%.1f) |\n| after the rounds | %.1f MiB (%.1f) | %.1f MiB (%.1f) |\n",
		mib(res.idle["A"]), mib(res.idleAnon["A"]), mib(res.idle["B"]), mib(res.idleAnon["B"]),
		mib(res.loaded["A"]), mib(res.anon["A"]), mib(res.loaded["B"]), mib(res.anon["B"]))
	return w.Flush()
}
