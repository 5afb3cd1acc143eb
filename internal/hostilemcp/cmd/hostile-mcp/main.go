// Command hostile-mcp is an MCP server over stdio that attacks its client,
// for journeys through wield: one flag per attack.
//
//	hostile-mcp -endless-cursor         # tools/list pages for ever, with the same cursor
//	hostile-mcp -tools 10000            # ten thousand tools, in pages of 1000
//	hostile-mcp -names collide|empty|case|bad
//	hostile-mcp -hang-list              # tools/list is never answered
//	hostile-mcp -trickle-list           # tools/list answers one tool a page, every 500 ms, for ever
//	hostile-mcp -bad-frame json|oversized  # tools/call is answered by a line a client cannot read
//	hostile-mcp -huge-description 10000000  # echo's description is 10 MB
//	hostile-mcp -title-only TEXT        # echo has no description, and TEXT as its title
//	hostile-mcp -huge-enum 1000000      # echo's argument pick has an enum of a million values
//	hostile-mcp -unique-items           # echo's argument xs is an array of unique items
//	hostile-mcp -huge-error 10000000    # tool fail answers isError with 10 MB of text
//	hostile-mcp -huge-result 150000000  # tool huge answers with 150 MB of text
//	hostile-mcp -hang-call              # tools/call is never answered, until the client cancels it
//	hostile-mcp -flood-log 100000      # each tools/call first sends 100,000 log lines (also -flood-progress, -flood-list-changed)
//	hostile-mcp -flood-size 65536       # each flooded notification carries 64 KiB more
//	hostile-mcp -flood-idle -flood-list-changed 10000  # 10,000 list_changed once initialized, no call pending
//	hostile-mcp -http 127.0.0.1:0       # streamable HTTP instead of stdio; "listening on URL" on stderr
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
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
	flag.IntVar(&o.HugeDescription, "huge-description", 0, "bytes of echo's description")
	flag.StringVar(&o.TitleOnly, "title-only", "", "echo's title, with no description")
	flag.IntVar(&o.HugeEnum, "huge-enum", 0, "values of the enum of echo's argument pick")
	flag.BoolVar(&o.UniqueItems, "unique-items", false, "give echo an argument xs of unique items")
	flag.IntVar(&o.HugeError, "huge-error", 0, "bytes of the isError text of tool fail")
	flag.IntVar(&o.HugeResult, "huge-result", 0, "bytes of the text of tool huge")
	flag.BoolVar(&o.HangCall, "hang-call", false, "never answer tools/call (until the client cancels it)")
	flag.IntVar(&o.FloodLog, "flood-log", 0, "notifications/message sent by each tools/call before it answers")
	flag.IntVar(&o.FloodProgress, "flood-progress", 0, "notifications/progress sent by each tools/call, for its token and others")
	flag.IntVar(&o.FloodListChanged, "flood-list-changed", 0, "notifications/tools/list_changed sent by each tools/call")
	flag.StringVar(&o.ProgressMessage, "progress-message", "", "a notifications/progress message each tools/call with a progress token sends")
	flag.DurationVar(&o.ProgressWait, "progress-wait", 500*time.Millisecond, "how long a tools/call waits after its -progress-message")
	flag.IntVar(&o.FloodSize, "flood-size", 0, "bytes of padding in each flooded notification")
	flag.BoolVar(&o.FloodIdle, "flood-idle", false, "also send -flood-list-changed list_changed once the client is initialized")
	addr := flag.String("http", "", "serve streamable HTTP on this address (127.0.0.1 only) instead of stdio")
	flag.Parse()
	if *addr != "" {
		if err := serveHTTP(o, *addr); err != nil {
			fmt.Fprintln(os.Stderr, "hostile-mcp:", err)
			os.Exit(1)
		}
		return
	}
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

// serveHTTP serves the attacks over streamable HTTP until the process is
// killed; bad frames are stdio's.
func serveHTTP(o hostilemcp.Options, addr string) error {
	if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" {
		return fmt.Errorf("-http %q: want 127.0.0.1:PORT", addr)
	}
	if o.BadFrame != "" {
		return errors.New("-bad-frame is for stdio")
	}
	srv, err := hostilemcp.New(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", ln.Addr())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	return http.Serve(ln, h)
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
