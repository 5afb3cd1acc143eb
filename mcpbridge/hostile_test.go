package mcpbridge_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/hostilemcp"
	"github.com/wieldhq/wield/mcpbridge"
)

// impLog is a log the test reads while the importer writes it.
type impLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *impLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *impLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// impHostile serves a hostile MCP server over streamable HTTP on loopback.
func impHostile(t *testing.T, o hostilemcp.Options) *impGoServer {
	t.Helper()
	srv, err := hostilemcp.New(o)
	if err != nil {
		t.Fatal(err)
	}
	g := &impGoServer{t: t, srv: srv}
	g.start("127.0.0.1:0")
	t.Cleanup(g.stop)
	return g
}

// impAddHostile imports one hostile server named h into a fresh registry,
// with pins in a file; it returns the registry, the log, the pins file and
// how long Add took.
func impAddHostile(t *testing.T, o hostilemcp.Options, cfg mcpbridge.ServerConfig) (*wield.Registry, *impLog, string, time.Duration) {
	t.Helper()
	g := impHostile(t, o)
	path := filepath.Join(t.TempDir(), "pins.json")
	pins, err := mcpbridge.OpenFilePins(path)
	if err != nil {
		t.Fatal(err)
	}
	log := &impLog{}
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Pins: pins, Logger: slog.New(slog.NewTextHandler(log, nil))})
	cfg.Name, cfg.URL, cfg.Enabled = "h", g.url(), true
	began := time.Now()
	if err := im.Add(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	return reg, log, path, time.Since(began)
}

// impPinned lists the remote names of server h in the pins file.
func impPinned(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var out []string
	for name := range all["h"] {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// TestImportEndlessCursor: a server that answers every tools/list with the
// same nextCursor is listed once; a warning names the server and the cursor.
func TestImportEndlessCursor(t *testing.T) {
	reg, log, _, took := impAddHostile(t, hostilemcp.Options{EndlessCursor: true}, mcpbridge.ServerConfig{})
	if diff := cmp.Diff([]string{"h__echo"}, impNames(reg)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if got := log.String(); !strings.Contains(got, `mcp server \"h\" gave the tools/list cursor \"again\" a second time`) {
		t.Errorf("log lacks the warning about the repeated cursor:\n%s", got)
	}
	t.Logf("endless cursor: listing ended after %v", took)
}

// TestImportListLimits: pages and tools of one listing are capped, per
// server; the first ones are kept, and a warning says which limit.
func TestImportListLimits(t *testing.T) {
	tests := []struct {
		name      string
		opts      hostilemcp.Options
		cfg       mcpbridge.ServerConfig
		wantTools int
		wantLog   string
	}{
		{"pages", hostilemcp.Options{Tools: 50, PageSize: 1}, mcpbridge.ServerConfig{MaxPages: 10}, 10,
			`mcp server \"h\" still had tools to list after 10 pages; the listing ends there with 10 tools (max_pages)`},
		{"tools", hostilemcp.Options{Tools: 100, PageSize: 7}, mcpbridge.ServerConfig{MaxTools: 20}, 20,
			`mcp server \"h\" lists more than 20 tools; the first 20 are imported, the rest left out (max_tools)`},
		{"default tools", hostilemcp.Options{Tools: 100_000}, mcpbridge.ServerConfig{}, mcpbridge.DefaultMaxTools,
			`mcp server \"h\" lists more than 10000 tools; the first 10000 are imported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, log, path, _ := impAddHostile(t, tt.opts, tt.cfg)
			names := impNames(reg)
			if len(names) != tt.wantTools || names[0] != "h__echo" || names[1] != "h__t000001" {
				t.Errorf("%d tools (%v…), want the first %d listed", len(names), names[:min(3, len(names))], tt.wantTools)
			}
			if got := log.String(); !strings.Contains(got, tt.wantLog) {
				t.Errorf("log lacks %s:\n%s", tt.wantLog, got)
			}
			if n := len(impPinned(t, path)); n != tt.wantTools {
				t.Errorf("%d tools pinned, want %d", n, tt.wantTools)
			}
		})
	}
}

// TestImportHostileNames: names that are empty, differ only in letter case,
// or that no model could use are refused with a warning, and never pinned;
// a tool name with __ is kept, since a server name cannot hold __.
func TestImportHostileNames(t *testing.T) {
	tests := []struct {
		names    string
		want     []string // registry names
		wantLogs []string
	}{
		{"collide", []string{"h__echo", "h__y__echo"}, nil},
		{"empty", []string{"h__echo"}, []string{`tool="" error="the name is empty"`}},
		{"case", []string{"h__echo"}, []string{
			`tool=Echo error="its name differs only in letter case from tool \"echo\"'s, which is kept"`,
			`tool=ECHO error="its name differs only in letter case from tool \"echo\"'s`}},
		{"bad", []string{"h__echo"}, []string{`tool="bad\x01name" error="tool \"h__bad\\x01name\": name \"h__bad\\x01name\" must be 1-128 characters`,
			`tool="with space"`, `tool=llllllllll`}},
	}
	for _, tt := range tests {
		t.Run(tt.names, func(t *testing.T) {
			reg, log, path, _ := impAddHostile(t, hostilemcp.Options{Names: tt.names}, mcpbridge.ServerConfig{})
			if diff := cmp.Diff(tt.want, impNames(reg)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			var pinned []string
			for _, n := range tt.want {
				pinned = append(pinned, strings.TrimPrefix(n, "h__"))
			}
			if diff := cmp.Diff(pinned, impPinned(t, path)); diff != "" {
				t.Errorf("pinned (-want +got):\n%s", diff)
			}
			got := log.String()
			for _, w := range tt.wantLogs {
				if !strings.Contains(got, w) {
					t.Errorf("log lacks %s:\n%s", w, got)
				}
			}
		})
	}
}

// TestImportCaseKeepsImported: the tool already imported keeps its name
// when the server later lists one differing only in case before it.
func TestImportCaseKeepsImported(t *testing.T) {
	g := impNewGoServer(t, impEchoArgs("echo", ""))
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "go", URL: g.url(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	r := impEchoArgs("ECHO", "")
	g.srv.AddTool(r.tool, r.handle) // listed first: the SDK sorts by name
	second := impEchoArgs("second", "")
	g.srv.AddTool(second.tool, second.handle)
	impEventually(t, "the list is refreshed", func() bool { _, ok := reg.Tool("go__second"); return ok })
	if diff := cmp.Diff([]string{"go__echo", "go__second"}, impNames(reg)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestImportServerNames: a server name that would make tool names
// ambiguous, or that differs only in case from an added one, is refused.
func TestImportServerNames(t *testing.T) {
	for _, name := range []string{"x__y", "x_", "__"} {
		err := (&mcpbridge.ServerConfig{Name: name, URL: "http://127.0.0.1:1/mcp", Enabled: true}).Check()
		if err == nil || !strings.Contains(err.Error(), "must not contain __ nor end with _") {
			t.Errorf("Check of %q = %v, want the name refused", name, err)
		}
	}
	// At most 64 characters.
	for n, ok := range map[int]bool{64: true, 65: false} {
		name := strings.Repeat("s", n)
		err := (&mcpbridge.ServerConfig{Name: name, URL: "http://127.0.0.1:1/mcp", Enabled: true}).Check()
		if (err == nil) != ok || !ok && !strings.Contains(err.Error(), "must be 1-64 characters") {
			t.Errorf("Check of a name of %d characters = %v, want accepted %v", n, err, ok)
		}
	}
	im := impImporter(t, wield.NewRegistry(nil), nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "x", URL: "http://127.0.0.1:1/mcp"}); err != nil {
		t.Fatal(err)
	}
	err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "X", URL: "http://127.0.0.1:1/mcp"})
	if err == nil || !strings.Contains(err.Error(), `differs only in letter case from server "x"'s`) {
		t.Errorf("Add of X after x = %v, want refused", err)
	}
}

// TestImportLinear: importing ten times the tools takes about ten times as
// long (pins written and the registry's index copied once per listing, not
// once per tool); it was 82 times (1,000 tools 4.9 s, 10,000 402 s).
func TestImportLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 11,000 tools")
	}
	_, _, _, small := impAddHostile(t, hostilemcp.Options{Tools: 1000}, mcpbridge.ServerConfig{})
	reg, _, path, large := impAddHostile(t, hostilemcp.Options{Tools: 9999}, mcpbridge.ServerConfig{})
	t.Logf("import of 1,000 tools %v, of 10,000 %v", small, large)
	if n := reg.Len(); n != 10000 {
		t.Fatalf("%d tools imported, want 10000", n)
	}
	if n := len(impPinned(t, path)); n != 10000 {
		t.Errorf("%d tools pinned, want 10000", n)
	}
	// Both bounds, wide: linear is ~10 times and quadratic was 82 times
	// (minutes). On a busy 2-core machine a fast 1,000 made an honest
	// linear import read 19 times, so the ratio alone cannot decide.
	if large > 40*small && large > 15*time.Second {
		t.Errorf("10,000 tools took %v, more than 40 times the %v of 1,000", large, small)
	}
}

// TestImportHungCall: a server that never answers tools/call holds the call
// only until its timeout: the caller gets a timeout, and the server is told
// the request was cancelled (notifications/cancelled ends its context).
func TestImportHungCall(t *testing.T) {
	cancelled := make(chan string, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	reg, _, _, _ := impAddHostile(t, hostilemcp.Options{HangCall: true, Cancelled: cancelled, Release: release}, mcpbridge.ServerConfig{})
	e := impEngine(t, reg)
	res, err := e.Call(t.Context(), wield.Call{Tool: "h__echo", Arguments: json.RawMessage(`{}`), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.ErrorType != wield.ErrTimeout {
		t.Errorf("hung call: %+v, want a timeout", impOutcomeOf(res))
	}
	select {
	case name := <-cancelled:
		if name != "echo" {
			t.Errorf("cancelled %q, want echo", name)
		}
	case <-time.After(10 * time.Second):
		t.Error("the server was not told the call was cancelled within 10s")
	}
}
