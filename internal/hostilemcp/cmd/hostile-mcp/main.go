// Command hostile-mcp is an MCP server over stdio that attacks its client,
// for journeys through wield: one flag per attack.
//
//	hostile-mcp -endless-cursor         # tools/list pages for ever, with the same cursor
//	hostile-mcp -tools 10000            # ten thousand tools, in pages of 1000
//	hostile-mcp -names collide|empty|case|bad
//	hostile-mcp -hang-list              # tools/list is never answered
//	hostile-mcp -trickle-list           # tools/list answers one tool a page, every 500 ms, for ever
//	hostile-mcp -bad-frame json|oversized  # tools/call is answered by a line a client cannot read
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield/internal/hostilemcp"
)

func main() {
	var o hostilemcp.Options
	flag.StringVar(&o.ID, "id", "hostile", "told in every tool's answer")
	flag.BoolVar(&o.EndlessCursor, "endless-cursor", false, "answer every tools/list with the same nextCursor")
	flag.IntVar(&o.Tools, "tools", 0, "offer that many more tools")
	flag.IntVar(&o.PageSize, "page-size", 1000, "tools per page")
	flag.StringVar(&o.Names, "names", "", "hostile names: collide, empty, case or bad")
	flag.BoolVar(&o.HangList, "hang-list", false, "never answer tools/list")
	flag.BoolVar(&o.TrickleList, "trickle-list", false, "answer tools/list one tool a page, slowly, for ever")
	flag.DurationVar(&o.TrickleEvery, "trickle-every", 500*time.Millisecond, "the pause before each page of -trickle-list")
	flag.StringVar(&o.BadFrame, "bad-frame", "", "answer tools/call with a line that is not JSON (json) or too large (oversized)")
	flag.Parse()
	out := &lockedWriter{w: os.Stdout}
	o.Out = out
	srv, err := hostilemcp.New(o)
	if err == nil {
		err = srv.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: nopCloser{out}})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile-mcp:", err)
		os.Exit(1)
	}
}

// lockedWriter keeps the transport's messages and the bad frames whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
