package mcpbridge_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestServerConnGone: a session's tools/call on the fast path, over a real
// HTTP/1.1 connection, ends when its client goes away mid-call or when the
// server's base context ends (the cause is then the base's), whether the
// server watches its connections (WatchConns) or each request's context;
// a call before it on the same connection, answered, ends nothing.
func TestServerConnGone(t *testing.T) {
	stopping := errors.New("the grace period is over")
	for _, watched := range []bool{true, false} {
		for _, how := range []string{"client goes away", "base context ends"} {
			t.Run(fmt.Sprintf("watched=%v/%s", watched, how), func(t *testing.T) {
				started := make(chan struct{}, 1)
				causes := make(chan error, 1)
				block := wield.Func("block", "Wait until canceled", func(ctx context.Context, _ struct{}) (string, error) {
					started <- struct{}{}
					select {
					case <-ctx.Done():
						causes <- context.Cause(ctx)
						return "", ctx.Err()
					case <-time.After(srvWait):
						causes <- nil
						return "not canceled", nil
					}
				})
				f := srvNew(t, nil, nil, block)
				base, cancelBase := context.WithCancelCause(context.Background())
				defer cancelBase(nil)
				hs := &http.Server{Handler: f.srv.Handler(), BaseContext: func(net.Listener) context.Context { return base }}
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				if watched {
					ln = mcpbridge.WatchConns(hs, ln)
				}
				go func() { _ = hs.Serve(ln) }()
				defer hs.Close()
				id := srvOpen(t, f.srv.Handler(), "127.0.0.1:1")

				conn, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(srvWait))
				rd := bufio.NewReader(conn)
				post := func(body string) {
					t.Helper()
					_, err := fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+
						"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n"+
						"Content-Length: %d\r\n\r\n%s", id, len(body), body)
					if err != nil {
						t.Fatal(err)
					}
				}
				post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
				resp, err := http.ReadResponse(rd, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("echo: status %d", resp.StatusCode)
				}

				post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
				select {
				case <-started:
				case <-time.After(srvWait):
					t.Fatal("the call did not start")
				}
				if how == "client goes away" {
					conn.Close()
				} else {
					cancelBase(stopping)
				}
				var cause error
				select {
				case cause = <-causes:
				case <-time.After(2 * srvWait):
					t.Fatal("the tool did not end")
				}
				switch {
				case cause == nil:
					t.Fatalf("%s: the call was not canceled", how)
				case errors.Is(cause, wield.ErrCallerCanceled):
					t.Errorf("%s: canceled as on purpose (%v)", how, cause)
				case how == "base context ends" && !errors.Is(cause, stopping):
					t.Errorf("%s: cause %v, want the base's (%v)", how, cause, stopping)
				}
			})
		}
	}
}

// TestServerConnHalfClose: a connection accepted through WatchConns passes
// on a half-close (net/http ends a connection whose body it will not read,
// after a 413, with CloseWrite, so that the client reads the answer
// instead of a reset) and its sendfile path: hiding them behind the
// wrapper turned a 413 into a reset.
func TestServerConnHalfClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	wl := mcpbridge.WatchConns(&http.Server{}, ln)
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := wl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if _, ok := server.(io.ReaderFrom); !ok {
		t.Error("the watched connection hides its ReadFrom")
	}
	cw, ok := server.(interface{ CloseWrite() error })
	if !ok {
		t.Fatal("the watched connection hides its CloseWrite")
	}
	if _, err := server.Write([]byte("413")); err != nil {
		t.Fatal(err)
	}
	if err := cw.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	client.SetDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(client) // ends at the half-close's EOF
	if err != nil || string(got) != "413" {
		t.Fatalf("client read %q, %v; want 413 then EOF", got, err)
	}
	// The other half stays open: the server still reads what the client sends.
	if _, err := client.Write([]byte("rest")); err != nil {
		t.Fatal(err)
	}
	server.SetDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(server, buf); err != nil || string(buf) != "rest" {
		t.Fatalf("server read %q, %v after the half-close", buf, err)
	}
}
