//go:build unix

package journeys

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestJourneyMCPClientGone: an MCP client in a session calls a tool that
// runs for two minutes over `wield serve` and over `wield mcp --http`, and
// goes away mid-call (its connection closes, no notifications/cancelled).
// The call is canceled at once, and recorded so: neither server holds a call
// for a client that no longer waits for it.
func TestJourneyMCPClientGone(t *testing.T) {
	for _, how := range []string{"serve", "mcp --http"} {
		t.Run(how, func(t *testing.T) {
			u := newUser(t)
			var s *server
			if how == "serve" {
				s = u.serve()
			} else {
				s = u.mcpHTTP()
			}
			c := &http.Client{Timeout: 30 * time.Second}
			code, id, msg := mcpPost(t, c, s.url+"/mcp", "", floodInit)
			if code != 200 || id == "" {
				t.Fatalf("initialize: status %d, session %q, answer %v", code, id, msg)
			}
			if code, _, _ := mcpPost(t, c, s.url+"/mcp", id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
				t.Fatalf("notifications/initialized: status %d", code)
			}

			conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.url, "http://"), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"duration":120}}}`
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
				"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n"+
				"Content-Length: %d\r\n\r\n%s", id, len(body), body)
			// The call starts, and is not answered: the client gives up.
			conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			if n, _ := conn.Read(make([]byte, 1)); n != 0 {
				t.Fatal("the two-minute sleep was answered at once")
			}
			conn.Close()

			var page struct {
				Records []lcRecord `json:"records"`
			}
			if !eventually(10*time.Second, func() bool {
				u.must("calls", "--tool", "sleep", "--json").json(t, &page)
				return len(page.Records) == 1
			}) {
				t.Fatalf("%s: the call of a client gone away is not recorded within 10 s: still running", how)
			}
			if r := page.Records[0].Result; r.OK || r.ErrorType != "canceled" {
				t.Errorf("%s: the record of the call of a client gone away: %+v, want canceled", how, r)
			}
		})
	}
}
