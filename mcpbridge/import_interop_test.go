//go:build unix

package mcpbridge_test

// Interop with the official TypeScript servers, installed by scripts/npm-up
// into .cache/npm at pinned versions.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

// impNPMServer returns the entry point of an npm MCP server, failing the
// test when it is not installed.
func impNPMServer(t *testing.T, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed: the MCP interop tests need Node 20 or later")
	}
	root, err := filepath.Abs(filepath.Join("..", ".cache", "npm"))
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("WIELD_NPM_DIR"); d != "" {
		root = d
	}
	path := filepath.Join(root, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is not installed at %s: run scripts/npm-up", pkg, path)
	}
	return path
}

func impLoopbackPreload(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "loopback.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// impNodeHTTP is an npm server run over HTTP, on loopback.
type impNodeHTTP struct {
	t    *testing.T
	cmd  *exec.Cmd
	port int
}

// impStartNodeHTTP runs `node <entry> <mode>` on the port (0: any) and waits
// for it to listen.
func impStartNodeHTTP(t *testing.T, entry, mode string, port int) *impNodeHTTP {
	t.Helper()
	cmd := exec.Command("node", "--require", impLoopbackPreload(t), entry, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &impNodeHTTP{t: t, cmd: cmd}
	t.Cleanup(n.kill)
	ports := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "WIELD_LISTENING "); ok {
				if v, err := strconv.Atoi(p); err == nil {
					select {
					case ports <- v:
					default:
					}
				}
			}
		}
	}()
	select {
	case n.port = <-ports:
	case <-time.After(30 * time.Second):
		t.Fatalf("node %s %s did not start listening within 30 s", entry, mode)
	}
	return n
}

func (n *impNodeHTTP) kill() {
	if n.cmd.ProcessState == nil {
		_ = n.cmd.Process.Kill()
		_ = n.cmd.Wait()
	}
}

func (n *impNodeHTTP) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", n.port, path)
}

// impDirectTools lists a server's tools with the SDK alone, to compare.
func impDirectTools(t *testing.T, tr mcp.Transport) []*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("direct connect: %v", err)
	}
	defer cs.Close()
	var out []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("direct list: %v", err)
		}
		out = append(out, tool)
	}
	return out
}

func impApprovingEngine(t *testing.T, reg *wield.Registry) *engine.Engine {
	t.Helper()
	e := engine.New(reg, &engine.Options{Retry: engine.RetryPolicy{MaxAttempts: 1},
		Approver: wield.ApproverFunc(func(context.Context, *wield.ApprovalRequest) (wield.Decision, error) {
			return wield.Decision{Approved: true, By: "test"}, nil
		})})
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

// impCheckImported checks that every tool of direct is in the registry,
// named server__tool, with the same schemas and description.
func impCheckImported(t *testing.T, reg *wield.Registry, server string, direct []*mcp.Tool) {
	t.Helper()
	var want, got []string
	for _, d := range direct {
		want = append(want, server+"__"+d.Name)
	}
	sort.Strings(want)
	impEventually(t, "the registry holds the server's tools", func() bool {
		got = got[:0]
		for _, x := range reg.List(wield.Query{Category: wield.CategoryMCP}) {
			got = append(got, x.Name)
		}
		sort.Strings(got)
		return cmp.Equal(want, got)
	})
	if len(direct) == 0 {
		t.Fatal("the server lists no tools")
	}
	t.Logf("%d tools imported from %s", len(direct), server)
	for _, d := range direct {
		x, _ := reg.Tool(server + "__" + d.Name)
		if diff := cmp.Diff(impJSON(t, d.InputSchema), impJSON(t, x.InputSchema)); diff != "" {
			t.Errorf("%s: input schema (-want +got):\n%s", d.Name, diff)
		}
		if d.OutputSchema != nil {
			if diff := cmp.Diff(impJSON(t, d.OutputSchema), impJSON(t, x.OutputSchema)); diff != "" {
				t.Errorf("%s: output schema (-want +got):\n%s", d.Name, diff)
			}
		}
		if d.Description != "" && x.Description != d.Description {
			t.Errorf("%s: description %q, want %q", d.Name, x.Description, d.Description)
		}
		if want := mcpbridge.ImportAnnotations(d.Annotations); x.Annotations != want {
			t.Errorf("%s: annotations %+v, want %+v", d.Name, x.Annotations, want)
		}
	}
}

// impEverythingCalls are calls of server-everything's tools and their
// results, converted as seed 001 §7.2 says.
var impEverythingCalls = []struct {
	tool, args string
	want       impOutcome
}{
	{"echo", `{"message":"hi there"}`, impOutcome{OK: true, Output: `"Echo: hi there"`}},
	{"get-sum", `{"a":2,"b":3.5}`, impOutcome{OK: true, Output: `"The sum of 2 and 3.5 is 5.5."`}},
	{"get-sum", `{"a":"2","b":3}`, impOutcome{OK: true, Output: `"The sum of 2 and 3 is 5."`}}, // coerced by the engine
	{"get-structured-content", `{"location":"Chicago"}`, impOutcome{OK: true, Output: `{"conditions":"Light rain / drizzle","humidity":82,"temperature":36}`}},
	{"get-tiny-image", `{}`, impOutcome{OK: true, Output: `"Here's the image you requested:"`}},
	{"get-sum", `{"a":1}`, impOutcome{ErrorType: wield.ErrValidation, Error: "invalid arguments for tool 'ev__get-sum'"}},
}

func impRunCalls(t *testing.T, e *engine.Engine, server string) {
	t.Helper()
	for _, c := range impEverythingCalls {
		res := impCall(t, e, server+"__"+c.tool, c.args)
		got := impOutcomeOf(res)
		want := c.want
		if want.ErrorType == wield.ErrValidation {
			got.Error = strings.SplitN(got.Error, ":", 2)[0] // the field details are the validator's
			want.Error = strings.ReplaceAll(want.Error, "ev__", server+"__")
		}
		if want.Output != "" && strings.HasPrefix(want.Output, "{") {
			if diff := cmp.Diff(impJSONText(t, want.Output), impJSONText(t, got.Output)); diff != "" || !got.OK {
				t.Errorf("%s %s (-want +got):\n%s%+v", c.tool, c.args, diff, got)
			}
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", c.tool, c.args, diff)
		}
	}
}

// impPidCommand wraps a command so that it writes its pid to a file, and
// starts only while the gate file exists (so a test can hold a restart).
func impPidCommand(dir string, argv ...string) []string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	gate, pid := filepath.Join(dir, "gate"), filepath.Join(dir, "pid")
	script := fmt.Sprintf(`while [ ! -e '%s' ]; do sleep 0.05; done; echo $$ > '%s'; exec %s`, gate, pid, strings.Join(quoted, " "))
	return []string{"sh", "-c", script}
}

func impReadPid(t *testing.T, dir string) int {
	t.Helper()
	var pid int
	impEventually(t, "the server writes its pid", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

func TestImportInteropEverythingStdio(t *testing.T) {
	entry := impNPMServer(t, "server-everything")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, &mcpbridge.ImportOptions{ConnectTimeout: 60 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := im.Add(ctx, mcpbridge.ServerConfig{Name: "ev", Command: impPidCommand(dir, "node", entry, "stdio"), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	direct := impDirectTools(t, &mcp.CommandTransport{Command: exec.Command("node", entry, "stdio"), TerminateDuration: 100 * time.Millisecond})
	impCheckImported(t, reg, "ev", direct)
	e := impApprovingEngine(t, reg)
	impRunCalls(t, e, "ev")

	// Kill the server mid-session, holding its restart at the gate.
	pid := impReadPid(t, dir)
	if err := os.Remove(filepath.Join(dir, "gate")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "pid")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	impEventually(t, "the importer sees the server die", func() bool { return !im.Servers()[0].Connected })
	got := impOutcomeOf(impCall(t, e, "ev__echo", `{"message":"anyone?"}`))
	want := impOutcome{ErrorType: wield.ErrExecution, Error: `MCP server "ev" is not reachable right now; try again shortly`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("call while the server is down (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	impEventually(t, "the importer restarts the server", func() bool { return im.Servers()[0].Connected })
	if pid2 := impReadPid(t, dir); pid2 == pid {
		t.Errorf("the server was not restarted (pid %d)", pid)
	}
	if got := impOutcomeOf(impCall(t, e, "ev__echo", `{"message":"back"}`)); !cmp.Equal(impOutcome{OK: true, Output: `"Echo: back"`}, got) {
		t.Errorf("call after the restart: %+v", got)
	}
}

func TestImportInteropEverythingHTTP(t *testing.T) {
	entry := impNPMServer(t, "server-everything")
	node := impStartNodeHTTP(t, entry, "streamableHttp", 0)
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "ev", URL: node.url("/mcp"), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	direct := impDirectTools(t, &mcp.StreamableClientTransport{Endpoint: node.url("/mcp")})
	impCheckImported(t, reg, "ev", direct)
	e := impApprovingEngine(t, reg)
	impRunCalls(t, e, "ev")

	// Kill the server mid-session; the next call fails as transient, and
	// once the server is back on its port the importer reconnects.
	port := node.port
	node.kill()
	got := impOutcomeOf(impCall(t, e, "ev__echo", `{"message":"anyone?"}`))
	want := impOutcome{ErrorType: wield.ErrExecution, Error: `MCP server "ev" is not reachable right now; try again shortly`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("call while the server is down (-want +got):\n%s", diff)
	}
	impEventually(t, "the importer sees the outage", func() bool { return !im.Servers()[0].Connected })
	impStartNodeHTTP(t, entry, "streamableHttp", port)
	impEventually(t, "the importer reconnects", func() bool { return im.Servers()[0].Connected })
	if got := impOutcomeOf(impCall(t, e, "ev__echo", `{"message":"back"}`)); !cmp.Equal(impOutcome{OK: true, Output: `"Echo: back"`}, got) {
		t.Errorf("call after the restart: %+v", got)
	}
}

func TestImportInteropEverythingSSE(t *testing.T) {
	entry := impNPMServer(t, "server-everything")
	node := impStartNodeHTTP(t, entry, "sse", 0)
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "ev", URL: node.url("/sse"), Transport: "sse", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	direct := impDirectTools(t, &mcp.SSEClientTransport{Endpoint: node.url("/sse")})
	impCheckImported(t, reg, "ev", direct)
	impRunCalls(t, impApprovingEngine(t, reg), "ev")
}

func TestImportInteropFilesystem(t *testing.T) {
	entry := impNPMServer(t, "server-filesystem")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("line one\nline two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("no"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, &mcpbridge.ImportOptions{ConnectTimeout: 60 * time.Second})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "fs", Command: []string{"node", entry, root}, Tags: []string{"files"}, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	direct := impDirectTools(t, &mcp.CommandTransport{Command: exec.Command("node", entry, root), TerminateDuration: 100 * time.Millisecond})
	impCheckImported(t, reg, "fs", direct)
	if x, _ := reg.Tool("fs__read_text_file"); !x.HasTag("files") || !x.Annotations.ReadOnly || x.EffectivePermission() != wield.PermissionAuto {
		t.Errorf("fs__read_text_file: tags %v, annotations %+v, permission %s", x.Tags, x.Annotations, x.EffectivePermission())
	}
	e := impApprovingEngine(t, reg)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	tests := []struct {
		tool, args string
		want       impOutcome
	}{
		{"read_text_file", `{"path":` + q(filepath.Join(root, "notes.txt")) + `}`, impOutcome{OK: true, Output: `{"content":"line one\nline two\n"}`}},
		{"read_text_file", `{"path":` + q(filepath.Join(root, "notes.txt")) + `,"head":1}`, impOutcome{OK: true, Output: `{"content":"line one"}`}},
		{"read_file", `{"path":` + q(filepath.Join(root, "notes.txt")) + `}`, impOutcome{OK: true, Output: `{"content":"line one\nline two\n"}`}},
		{"list_directory", `{"path":` + q(root) + `}`, impOutcome{OK: true, Output: `{"content":"[FILE] notes.txt\n[DIR] sub"}`}},
	}
	for _, tt := range tests {
		got := impOutcomeOf(impCall(t, e, "fs__"+tt.tool, tt.args))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tt.tool, tt.args, diff)
		}
	}
	got := impOutcomeOf(impCall(t, e, "fs__read_text_file", `{"path":`+q(outside)+`}`))
	if got.OK || got.ErrorType != wield.ErrExecution || !strings.Contains(got.Error, "Access denied") {
		t.Errorf("read outside the allowed folder: %+v, want an execution_error saying access denied", got)
	}
}

// TestImportStdioKilledAfterGrace runs a stdio server (this test binary)
// that ignores both the end of its input and SIGTERM: Close must kill it.
func TestImportStdioKilledAfterGrace(t *testing.T) {
	if os.Getenv("WIELD_IMP_STUBBORN") != "" {
		impStubbornServer()
		return
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{KillGrace: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	cfg := mcpbridge.ServerConfig{Name: "stubborn", Enabled: true,
		Command: impPidCommand(dir, os.Args[0], "-test.run=^TestImportStdioKilledAfterGrace$"),
		Env:     map[string]string{"WIELD_IMP_STUBBORN": "1"}}
	if err := im.Add(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Tool("stubborn__ping"); !ok {
		t.Fatalf("tools: %v", impNames(reg))
	}
	pid := impReadPid(t, dir)
	done := make(chan struct{})
	var once sync.Once
	go func() { _ = im.Close(); once.Do(func() { close(done) }) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("after Close the server process %d is still there (kill -0: %v)", pid, err)
	}
}

// impStubbornServer serves one tool over stdio, then outlives its input and
// ignores SIGTERM, as a badly written server does.
func impStubbornServer() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM) // caught, and so not fatal
	srv := mcp.NewServer(&mcp.Implementation{Name: "stubborn"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ping", InputSchema: impObject}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
	})
	_ = srv.Run(context.Background(), &mcp.StdioTransport{})
	for {
		<-term
	}
}
