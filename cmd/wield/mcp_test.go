package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpWait bounds every wait of these tests.
const mcpWait = 20 * time.Second

// mcpBuffer is a bytes.Buffer safe for a writer and a reader at once.
type mcpBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *mcpBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *mcpBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// mcpRun runs `wield mcp args...` in-process on pipes, as a desktop client
// runs it, and returns the command's stdin and stdout from the client's
// side, its stderr, and a wait for its end.
func mcpRun(t *testing.T, ctx context.Context, args ...string) (in io.WriteCloser, out io.ReadCloser, stderr *mcpBuffer, wait func() error) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	stderr = &mcpBuffer{}
	a := &app{stdin: sr, stdout: sw, stderr: stderr, db: "sqlite:" + filepath.Join(t.TempDir(), "wield.db")}
	cmd := a.mcpCommand()
	cmd.SetArgs(args)
	cmd.SetIn(sr)
	cmd.SetOut(stderr) // cobra's own messages never go to the protocol
	cmd.SetErr(stderr)
	cmd.SilenceUsage = true
	done := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(ctx)
		sw.Close()
		done <- err
	}()
	var once sync.Once
	var err error
	wait = func() error {
		once.Do(func() {
			select {
			case err = <-done:
			case <-time.After(mcpWait):
				err = errors.New("wield mcp did not return")
			}
		})
		return err
	}
	return cw, cr, stderr, wait
}

func TestMCPStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), mcpWait)
	defer cancel()
	in, out, stderr, wait := mcpRun(t, ctx)
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: out, Writer: in}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr: %s)", err, stderr)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"echo", "calculator", "current_time"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": "2 * (3 + 4)"}})
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if res.IsError || len(text) != 1 || !regexp.MustCompile(`\b14\b`).MatchString(text[0]) {
		t.Errorf("calculator: isError=%v text=%q, want 14", res.IsError, text)
	}
	// The call is recorded and readable as a resource.
	id, _ := res.Meta["wield/call_id"].(string)
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "wield://calls/" + id})
	if err != nil {
		t.Fatalf("read the call's record: %v", err)
	}
	if len(rr.Contents) != 1 || !bytes.Contains([]byte(rr.Contents[0].Text), []byte(`"tool":"calculator"`)) {
		t.Errorf("record of the call: %+v", rr.Contents)
	}
	// The client leaving ends the command without an error.
	cs.Close()
	in.Close()
	if err := wait(); err != nil {
		t.Errorf("wield mcp: %v (stderr: %s)", err, stderr)
	}
}

func TestMCPHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, _, stderr, wait := mcpRun(t, ctx, "--http", "127.0.0.1:0")
	defer in.Close()
	listening := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/mcp)`)
	var url string
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(mcpWait)
	for url == "" {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("no listening line on stderr: %s", stderr)
		}
	}
	cctx, ccancel := context.WithTimeout(context.Background(), mcpWait)
	defer ccancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "over http"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Errorf("echo over HTTP failed: %+v", res.Content)
	}
	// Shutting down ends the session's standing stream and returns.
	cancel()
	if err := wait(); err != nil {
		t.Errorf("wield mcp --http: %v (stderr: %s)", err, stderr)
	}
	cs.Close()
}

func TestMCPUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:7421"}, `--http "0.0.0.0:7421" is not a loopback address: MCP servers are usually local; add --public to listen there`},
		{[]string{"--http", "nonsense"}, `--http "nonsense": address nonsense: missing port in address`},
		{[]string{"--stateless"}, "--stateless, --public, --allowed-host and --allowed-origin go with --http"},
		{[]string{"--toolset", "nope"}, `--toolset "nope": no such toolset`},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), mcpWait)
		in, _, stderr, wait := mcpRun(t, ctx, tt.args...)
		err := wait()
		in.Close()
		cancel()
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error (stderr: %s)", tt.args, err, stderr)
			continue
		}
		if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
			t.Errorf("%v: error (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestMCPStdioAnswersBeforeEOF: a client that writes its requests and closes
// stdin at once (a one-shot pipe: `wield mcp < requests.jsonl`) gets an
// answer to each request read before the end of its input, a call still
// running then included; the command then ends without an error. The go-sdk
// alone drops them all: the end of the input closes its connection before
// the answers are written.
func TestMCPStdioAnswersBeforeEOF(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"sleep","arguments":{"duration":0.3}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}
`
	start := time.Now()
	code, out, stderr := runIn(t, in, "mcp")
	if code != 0 {
		t.Fatalf("wield mcp < requests: exit %d, stderr %s", code, stderr)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("wield mcp took %v to answer and exit", took)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil && m.Result != nil {
			got[string(m.ID)] = true
		}
	}
	for _, id := range []string{`1`, `2`, `"three"`, `4`} {
		if !got[id] {
			t.Errorf("no result for request %s; stdout:\n%s\nstderr:\n%s", id, out, stderr)
		}
	}
}

// TestMCPStdioFractionalIDNotHeld: the go-sdk reads a number ID as its
// integer part (id 2.5 is answered as 2), so the requests held back for at
// the end of stdin are counted by the same ID: a client that sent 2.5 kept
// wield mcp waiting out the whole --grace for an answer under an ID the
// server never writes.
func TestMCPStdioFractionalIDNotHeld(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2.5,"method":"ping"}
`
	start := time.Now()
	code, out, stderr := runIn(t, in, "mcp", "--grace", "30s")
	if code != 0 {
		t.Fatalf("wield mcp < requests: exit %d, stderr %s", code, stderr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("wield mcp took %v to exit after a request with id 2.5 (--grace 30s); stdout:\n%s", took, out)
	}
	if !strings.Contains(out, `"id":2,"result"`) {
		t.Errorf("no answer to the ping; stdout:\n%s\nstderr:\n%s", out, stderr)
	}
}

func TestCanonicalIDAsTheSDKReadsIt(t *testing.T) {
	for _, c := range []struct{ req, resp string }{
		{`2.5`, `2`}, {`7`, `7`}, {`7.0`, `7`}, {`1e2`, `100`}, {`-3.9`, `-3`},
		{`"a\u0041"`, `"aA"`}, {`"<"`, `"\u003c"`},
	} {
		if a, b := canonicalID(json.RawMessage(c.req)), canonicalID(json.RawMessage(c.resp)); a != b {
			t.Errorf("request id %s is %s, its answer's id %s is %s", c.req, a, c.resp, b)
		}
	}
	if canonicalID(json.RawMessage(`1`)) == canonicalID(json.RawMessage(`"1"`)) {
		t.Error(`id 1 and id "1" are one`)
	}
}
