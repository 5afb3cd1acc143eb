//go:build unix

package journeys

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingEntry returns the entry point of the official
// server-everything, installed by scripts/npm-up.
func everythingEntry(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed: this journey needs Node 20 or later")
	}
	root, err := filepath.Abs(filepath.Join("..", ".cache", "npm"))
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("WIELD_NPM_DIR"); d != "" {
		root = d
	}
	entry := filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("server-everything is not installed at %s: run scripts/npm-up", entry)
	}
	return entry
}

// TestJourneyMCPRelay: `wield serve` imports the official server-everything
// over stdio; an MCP client that calls its long-running operation through
// wield with a progress token gets the server's three progress notices
// under its own token, and its log messages; a client that cancels a
// call has wield send notifications/cancelled to the imported server (seen
// on the server's input), gets no more notices of it, and the call is
// recorded as canceled; SIGTERM stops the server with its wrapper, and
// nothing of it outlives wield.
func TestJourneyMCPRelay(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	entry := everythingEntry(t)
	u := newUser(t)
	// The server's input is copied to a file on its way, to see what wield
	// sends it.
	input := u.path("server-input.jsonl")
	u.write("wield.yaml", `mcp_servers:
  - name: ev
    command: [sh, -c, 'tee -a "$0" | exec node "$1" stdio "$0"', `+input+`, `+entry+`]
    timeout: 60s
`)
	s := u.serve("--config", "wield.yaml")
	const long = "ev__trigger-long-running-operation"
	if !s.listed(long, 60*time.Second) {
		t.Fatalf("%s never appeared in /v1/tools:\n%s", long, s.stderr)
	}

	var mu sync.Mutex
	var progress []string
	var logs []string
	notices := make(chan struct{}, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			tok, _ := r.Params.ProgressToken.(string)
			mu.Lock()
			progress = append(progress, tok)
			mu.Unlock()
			if tok != "journey-cancel" {
				return
			}
			// Only the call to cancel's own notices: the first call's
			// last notice may be handled after its result (the go-sdk
			// reads notifications on a queue of their own), and taken
			// for the second call's it had the test cancel that call
			// before its request left the client, so nothing reached
			// wield to cancel (1 run in 3 on a loaded machine).
			select {
			case notices <- struct{}{}:
			default:
			}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, string(r.Params.Level)+" "+r.Params.Logger)
			mu.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect to wield's MCP endpoint: %v\n%s", err, s.stderr)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}

	// The imported server logs every 5 s once asked to; the 6 s operation
	// then sees at least one of them.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ev__toggle-simulated-logging", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: long, Arguments: map[string]any{"duration": 6, "steps": 3}}
	p.SetProgressToken("journey")
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Long running operation completed") {
		t.Fatalf("the long-running operation answered %+v", res)
	}
	mu.Lock()
	// The server sends a notice after each 2 s step; the third goes out
	// in the instant before its result, which the go-sdk may handle first
	// (it reads notifications on a queue of their own), and a notice that
	// arrives after the result is not sent on (docs/mcp.md, the relay's
	// limits). The two spaced ones always reach the client: on a loaded
	// machine the third did not, 1 run in 4.
	if n := len(progress); n < 2 || n > 3 || slices.ContainsFunc(progress, func(tok string) bool { return tok != "journey" }) {
		t.Errorf("progress notices under tokens %q, want two or three, all under journey", progress)
	}
	if len(logs) == 0 {
		t.Errorf("no log message of the imported server reached the client")
	}
	t.Logf("relayed: %d progress notices, log messages %q", len(progress), logs)
	progress = nil
	mu.Unlock()

	// Cancel a 30 s operation after its first notice.
	cctx, stop := context.WithCancel(ctx)
	p = &mcp.CallToolParams{Name: long, Arguments: map[string]any{"duration": 30, "steps": 30}}
	p.SetProgressToken("journey-cancel")
	errc := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := cs.CallTool(cctx, p)
		errc <- err
	}()
	select {
	case <-notices:
	case <-time.After(30 * time.Second):
		t.Fatalf("no progress notice within 30 s:\n%s", s.stderr)
	}
	stop()
	if err := <-errc; err == nil {
		t.Error("the canceled call returned no error")
	}
	if !eventually(10*time.Second, func() bool {
		b, _ := os.ReadFile(input)
		return bytes.Contains(b, []byte(`"notifications/cancelled"`))
	}) {
		t.Errorf("wield sent the imported server no notifications/cancelled")
	}
	var rec struct {
		Calls []struct {
			Result struct {
				ErrorType string `json:"error_type"`
			} `json:"result"`
		} `json:"calls"`
	}
	if !eventually(10*time.Second, func() bool {
		code, body := s.do("GET", "/v1/calls?tool="+long, "")
		if code != 200 {
			return false
		}
		rec.Calls = nil
		if err := json.Unmarshal(body, &rec); err != nil {
			return false
		}
		for _, c := range rec.Calls {
			if c.Result.ErrorType == "canceled" {
				return true
			}
		}
		return false
	}) {
		t.Errorf("no call of %s recorded as canceled: %+v", long, rec)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the canceled operation took %s, as long as it would have run", took)
	}
	// The operation runs on upstream; none of its later notices reach the
	// client that canceled it.
	canceled := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(slices.DeleteFunc(slices.Clone(progress), func(tok string) bool { return tok != "journey-cancel" }))
	}
	before := canceled()
	time.Sleep(2500 * time.Millisecond) // two of the operation's 1 s steps
	if n := canceled() - before; n != 0 {
		t.Errorf("%d progress notices reached the client after it canceled", n)
	}
	cs.Close()
	if code, took := s.stop(syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("exit %d after %v of SIGTERM, want 0:\n%s", code, took, s.stderr)
	}
	// The server, started through sh and running its simulated logging
	// (so it does not exit when its input closes), is stopped with its
	// wrapper: nothing whose command line names this journey's input file
	// (tee, and node, given it as an argument it ignores) outlives wield.
	if left := processesNaming(input); len(left) > 0 {
		t.Errorf("still running after wield exited: %q", left)
	}
}

// processesNaming returns the command lines of the running processes whose
// command line contains s (zombies, which have none, are not listed).
func processesNaming(s string) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		found = append(found, string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})))
	}
	return found
}
