// Command calls makes n MCP tools/call (or REST) echo calls at c at once
// to a running server with the raw client, for a profile or a reading of
// /proc while it runs: bench/serve-peers.sh measures; this loads.
//
//	calls -addr 127.0.0.1:PORT [-n 100000] [-c 8] [-rest]
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	mcpbench "github.com/wieldhq/wield/bench/mcp"
)

func main() {
	addr := flag.String("addr", "", "the server's host:port (required)")
	n := flag.Int("n", 100000, "calls in all")
	c := flag.Int("c", 8, "connections calling at once")
	rest := flag.Bool("rest", false, "POST /v1/tools/echo/call instead of MCP tools/call")
	flag.Parse()
	if *addr == "" || *c < 1 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	conns := make([]*mcpbench.RawConn, *c)
	for i := range conns {
		path := "/mcp"
		if *rest {
			path = "/v1/tools/echo/call"
		}
		conn, err := mcpbench.DialRaw(*addr, path)
		if err != nil {
			fail(err)
		}
		if *rest {
			conn.Prepare(`{"arguments":{"message":"hello"}}`, []string{`"ok":true`, `hello`}, "")
		} else {
			if err := conn.Initialize("2025-11-25"); err != nil {
				fail(err)
			}
			conn.Prepare(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`,
				[]string{`"result"`, `hello`}, `"isError":true`)
		}
		conns[i] = conn
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, *c)
	for i, conn := range conns {
		calls := *n / *c
		if i < *n%*c {
			calls++
		}
		wg.Go(func() {
			for range calls {
				if err := conn.Call(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		fail(err)
	}
	took := time.Since(start)
	fmt.Printf("%d calls at c=%d in %v: %.0f calls/s\n", *n, *c, took.Round(time.Millisecond), float64(*n)/took.Seconds())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "calls:", err)
	os.Exit(1)
}
