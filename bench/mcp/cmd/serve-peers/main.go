// Command serve-peers measures `wield serve`, as users run it, against
// the MCP servers of the official Go SDK and mark3labs/mcp-go and a plain
// net/http handler: bench/serve-peers.sh builds wield and this program
// and runs it. See package mcpbench for what it measures.
//
//	serve-peers -wield PATH [-rounds 3] [-duration 2s] [-calls N] [-long 100000] [-clk-tck 100]
//	serve-peers -wield PATH -base PATH [-async] [-rounds 3] [-duration 2s]
//
// With -base, it compares two wield binaries instead (see
// mcpbench.RunAB): -base is the reference, -wield the change.
//
// The same program is each peer's server process: run with
// MCPBENCH_SERVE set, it serves instead (see mcpbench.Serve).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	mcpbench "github.com/wieldhq/wield/bench/mcp"
)

func main() {
	if spec := os.Getenv("MCPBENCH_SERVE"); spec != "" {
		if err := mcpbench.Serve(spec); err != nil {
			fmt.Fprintln(os.Stderr, "serve-peers: serve:", err)
			os.Exit(1)
		}
		return
	}
	var cfg mcpbench.Config
	flag.StringVar(&cfg.Wield, "wield", "", "the wield binary to measure (required)")
	flag.StringVar(&cfg.Revision, "revision", "", "the commit the wield binary was built from, if the binary does not say")
	flag.IntVar(&cfg.Rounds, "rounds", 3, "interleaved rounds")
	flag.DurationVar(&cfg.Duration, "duration", 2*time.Second, "how long each case runs")
	flag.IntVar(&cfg.Calls, "calls", 0, "if not 0, calls per case instead of -duration (a tenth of it per listing case)")
	flag.IntVar(&cfg.Long, "long", 100000, "calls made to a fresh wield serve before its RSS is read")
	flag.IntVar(&cfg.ClkTck, "clk-tck", 100, "clock ticks a second of /proc/PID/stat (getconf CLK_TCK)")
	base := flag.String("base", "", "a reference wield binary: compare -wield with it instead of the peers")
	async := flag.Bool("async", false, "with -base: both with --records async")
	flag.Parse()
	if cfg.Wield == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	work, err := os.MkdirTemp("", "serve-peers-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-peers:", err)
		os.Exit(1)
	}
	cfg.Work = work
	cfg.Progress = os.Stderr
	if *base != "" {
		ab := mcpbench.ABConfig{A: *base, B: cfg.Wield, Revision: cfg.Revision, Rounds: cfg.Rounds, Duration: cfg.Duration, ClkTck: cfg.ClkTck, Work: work, Progress: os.Stderr}
		if *async {
			ab.Flags = []string{"--records", "async"}
		}
		err = mcpbench.RunAB(ab, os.Stdout)
	} else {
		err = mcpbench.Run(cfg, os.Stdout)
	}
	os.RemoveAll(work)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-peers:", err)
		os.Exit(1)
	}
}
