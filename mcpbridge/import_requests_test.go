//go:build unix

package mcpbridge_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// requestsEnv makes the test binary a stdio MCP server that answers the
// handshake and tools/list (one tool, ask), and answers a call of ask
// with a flood of requests of its own to wield instead: the variable
// gives their method, how many and the bytes of padding each carries
// ("ping 2000 65536"). It never reads its stdin again, so wield's answers
// to them cannot be written.
const requestsEnv = "WIELD_TEST_SERVER_REQUESTS"

// TestImportRequestsHelper is not a test: run with requestsEnv set, the
// test binary is the server TestImportServerRequestFlood imports.
func TestImportRequestsHelper(t *testing.T) {
	spec, ok := os.LookupEnv(requestsEnv)
	if !ok {
		t.Skip("the helper process of TestImportServerRequestFlood")
	}
	f := strings.Fields(spec)
	method := f[0]
	n, _ := strconv.Atoi(f[1])
	pad, _ := strconv.Atoi(f[2])
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(0)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(line, &m)
		if m.ID == nil {
			continue
		}
		switch m.Method {
		case "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"asker","version":"1"}}}`+"\n", m.ID)
		case "tools/list":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"ask","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}`+"\n", m.ID)
		case "tools/call":
			padding := strings.Repeat("x", pad)
			for i := range n {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":"q%d","method":%q,"params":{"_meta":{"pad":%q}}}`+"\n", i, method, padding)
			}
			out.Flush()
			time.Sleep(time.Hour) // stdin unread: no answer of wield's gets through
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", m.ID)
		}
		out.Flush()
	}
}

// TestImportServerRequestFlood: a stdio server that sends wield request
// after request (ping, roots/list) and reads none of the answers cannot
// make wield hold a goroutine and the request for each: past a bound of
// requests awaiting their answers its connection is reset, and the call
// fails saying what the server did, without waiting for its timeout.
// Before, each request held a goroutine until its answer could be written
// (never), and the importer's Close waited for them for ever.
func TestImportServerRequestFlood(t *testing.T) {
	for _, method := range []string{"ping", "roots/list"} {
		t.Run(strings.ReplaceAll(method, "/", "_"), func(t *testing.T) {
			// 64 MiB of requests; the first thousand or so are answered
			// before the pipe to the server's stdin is full.
			const n, pad = 4000, 16 << 10
			reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
			im := impImporter(t, reg, nil)
			if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "q", Enabled: true,
				Command: []string{os.Args[0], "-test.run=^TestImportRequestsHelper$"},
				Env:     map[string]string{requestsEnv: fmt.Sprintf("%s %d %d", method, n, pad)}}); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			goroutines := runtime.NumGoroutine()
			e := impEngine(t, reg)
			done := make(chan *wield.Result, 1)
			began := time.Now()
			go func() { done <- impCall(t, e, "q__ask", `{}`) }()
			var peakG int
			var peakHeap uint64
			var res *wield.Result
			for res == nil {
				select {
				case res = <-done:
				case <-time.After(20 * time.Millisecond):
				}
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peakG = max(peakG, runtime.NumGoroutine())
				peakHeap = max(peakHeap, m.HeapInuse)
			}
			took := time.Since(began)
			if grew := peakG - goroutines; grew > 300 {
				t.Errorf("%d goroutines more while the server flooded %d requests", grew, n)
			}
			if grew := int64(peakHeap) - int64(before.HeapInuse); grew > 32<<20 {
				t.Errorf("heap grew %d MiB while the server flooded %d MiB of requests", grew>>20, n*pad>>20)
			}
			out := impOutcomeOf(res)
			if out.OK || !strings.Contains(out.Error, "requests") || took > 20*time.Second { // the call's own limit is 30 s
				t.Errorf("after %v: %+v, want a failure naming the server's requests", took, out)
			}
			// Closing does not wait for answers that cannot be written.
			closed := make(chan struct{})
			began = time.Now()
			go func() { _ = im.Close(); close(closed) }()
			select {
			case <-closed:
				if took := time.Since(began); took > 5*time.Second {
					t.Errorf("Close took %v", took)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("Close still waits after 15s")
			}
		})
	}
}
