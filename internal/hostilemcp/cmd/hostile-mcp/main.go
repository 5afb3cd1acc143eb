// Command hostile-mcp is an MCP server over stdio that attacks its client,
// for journeys through wield: one flag per attack.
//
//	hostile-mcp -endless-cursor         # tools/list pages for ever, with the same cursor
//	hostile-mcp -tools 10000            # ten thousand tools, in pages of 1000
//	hostile-mcp -names collide|empty|case|bad
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

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
	flag.Parse()
	srv, err := hostilemcp.New(o)
	if err == nil {
		err = srv.Run(context.Background(), &mcp.StdioTransport{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile-mcp:", err)
		os.Exit(1)
	}
}
