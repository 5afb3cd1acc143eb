package mcpbench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRawConn calls echo over the raw client on every peer's handler,
// which answer in JSON (plain, mcp-go) and in SSE over chunked bodies
// (go-sdk), with and without sessions; and checks that what is not a
// success is a failure.
func TestRawConn(t *testing.T) {
	for _, kind := range []string{KindPlain, KindMCPGo, KindSDK} {
		t.Run(kind, func(t *testing.T) {
			h, closeFn, err := Handler(kind, 3, false)
			if err != nil {
				t.Fatal(err)
			}
			defer closeFn()
			mux := http.NewServeMux()
			if kind == KindPlain {
				mux.Handle("/", h)
			} else {
				mux.Handle("/mcp", h)
			}
			srv := httptest.NewServer(mux)
			defer srv.Close()
			addr := strings.TrimPrefix(srv.URL, "http://")

			conn, err := DialRaw(addr, "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.Initialize(protocolVersion); err != nil {
				t.Fatal(err)
			}
			if (conn.session != "") != (kind != KindPlain) {
				t.Errorf("session %q: want one from every server but plain", conn.session)
			}
			conn.Prepare(echoCall, []string{`"result"`, `hello`}, `"isError":true`)
			for i := range 3 {
				if err := conn.Call(); err != nil {
					t.Fatalf("call %d: %v", i+1, err)
				}
			}
			if conn.id != 3 {
				t.Errorf("id = %d after 3 calls, want 3", conn.id)
			}

			// A tool that does not exist: an error, however the server says it.
			conn.Prepare(strings.Replace(echoCall, `"echo"`, `"nope"`, 1), []string{`"result"`, `hello`}, `"isError":true`)
			if err := conn.Call(); err == nil {
				t.Error("a call of an unknown tool passed as a success")
			}

			tools, size, pages, err := listAll(conn)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) != 3 || size == 0 || pages != 1 {
				t.Errorf("listAll: %d tools, %d bytes, %d pages; want 3 tools in one page", len(tools), size, pages)
			}
		})
	}
}

// TestRawConnREST calls the plain server's REST echo.
func TestRawConnREST(t *testing.T) {
	h, closeFn, err := Handler(KindPlain, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	srv := httptest.NewServer(h)
	defer srv.Close()
	callers, shared, err := dialREST(context.Background(), strings.TrimPrefix(srv.URL, "http://"), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer shared()
	defer closeAll(callers)
	n, err := runCounted(callers, 10, 0)
	if err != nil || n != 10 {
		t.Fatalf("runCounted = %d, %v; want 10 calls", n, err)
	}
}

// TestRunCountedFails checks that a failed call fails the case.
func TestRunCountedFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	callers, shared, err := dialREST(context.Background(), strings.TrimPrefix(srv.URL, "http://"), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer shared()
	defer closeAll(callers)
	if _, err := runCounted(callers, 0, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "status 500") {
		t.Fatalf("runCounted = %v, want the 500 as a failure", err)
	}
}

// TestProc reads this process's CPU and RSS from /proc.
func TestProc(t *testing.T) {
	cpu, err := ProcCPU("self", 100)
	if err != nil || cpu < 0 {
		t.Fatalf("ProcCPU = %v, %v", cpu, err)
	}
	rss, err := ProcRSS("self")
	if err != nil || rss < 1<<20 {
		t.Fatalf("ProcRSS = %d, %v; want at least 1 MiB", rss, err)
	}
	if _, err := ProcRSS("0"); err == nil {
		t.Error("ProcRSS of pid 0 did not fail")
	}
	// The anonymous part grows with what the heap holds, and is less
	// than the whole.
	before, err := ProcRSSAnon("self")
	if err != nil || before <= 0 || before > rss {
		t.Fatalf("ProcRSSAnon = %d, %v; want more than 0 and at most RSS %d", before, err, rss)
	}
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = 1
	}
	after, err := ProcRSSAnon("self")
	if err != nil || after < before+32<<20 {
		t.Errorf("ProcRSSAnon with 64 MiB more held = %d, %v; want at least %d", after, err, before+32<<20)
	}
	if held[len(held)-1] != 1 {
		t.Fatal("lost the held bytes")
	}
}

// TestNextCursor finds the cursor of a page, and none where there is
// none.
func TestNextCursor(t *testing.T) {
	for body, want := range map[string]string{
		`{"result":{"tools":[],"nextCursor":"abc="}}`:                   "abc=",
		`{"result":{"tools":[]}}`:                                       "",
		"event: message\ndata: {\"result\":{\"nextCursor\":\"x\"}}\n\n": "x",
	} {
		if got := nextCursor([]byte(body)); got != want {
			t.Errorf("nextCursor(%s) = %q, want %q", body, got, want)
		}
	}
}
