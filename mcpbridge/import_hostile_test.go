package mcpbridge_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/hostilemcp"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestImportSlowListIsUnavailable: a server that never answers tools/list,
// or trickles it a page at a time, is unavailable once its timeout has
// passed (Add returns, the server is retried in the background), and the
// error says what happened.
func TestImportSlowListIsUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    hostilemcp.Options
		want string
	}{
		{"hang", hostilemcp.Options{HangList: true}, `mcp server "h" did not list its tools within 400ms (timeout)`},
		{"trickle", hostilemcp.Options{TrickleList: true, TrickleEvery: 50 * time.Millisecond},
			`mcp server "h" did not list its tools within 400ms (timeout); the `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			tc.o.Release = release
			g := impHostile(t, tc.o)
			reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
			im := impImporter(t, reg, nil)
			impRelease(t, release)
			began := time.Now()
			err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "h", URL: g.url(), Enabled: true, Timeout: 400 * time.Millisecond})
			took := time.Since(began)
			if !errors.Is(err, mcpbridge.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Add = %v, want ErrUnavailable saying %q", err, tc.want)
			}
			if took > 5*time.Second {
				t.Errorf("Add took %s with a timeout of 400ms", took)
			}
			if st := im.Servers(); len(st) != 1 || !strings.Contains(st[0].LastError, "did not list its tools") && !strings.Contains(st[0].LastError, "stopped answering") {
				t.Errorf("Servers() = %+v, want the listing problem as last error", st)
			}
		})
	}
}

// TestImportTimeoutDefault: without a server timeout the importer's
// ImportTimeout bounds the first listing, and servers added concurrently
// each get their own: a hanging server does not spend a good one's time.
func TestImportTimeoutDefault(t *testing.T) {
	release := make(chan struct{})
	hang := impHostile(t, hostilemcp.Options{HangList: true, Release: release})
	good := impHostile(t, hostilemcp.Options{ID: "good"})
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{ImportTimeout: 300 * time.Millisecond})
	impRelease(t, release)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, url := range []string{hang.url(), good.url()} {
		wg.Go(func() {
			errs[i] = im.Add(t.Context(), mcpbridge.ServerConfig{Name: []string{"hang", "good"}[i], URL: url, Enabled: true})
		})
	}
	wg.Wait()
	if !errors.Is(errs[0], mcpbridge.ErrUnavailable) || !strings.Contains(errs[0].Error(), "within 300ms") {
		t.Errorf("Add(hang) = %v, want unavailable within 300ms", errs[0])
	}
	if errs[1] != nil {
		t.Errorf("Add(good) = %v", errs[1])
	}
	if _, ok := reg.Tool("good__echo"); !ok {
		t.Error("good__echo is not registered")
	}
}

// TestImportAddCanceled: a caller that gives up (a signal) ends Add at
// once, whatever the server's timeout.
func TestImportAddCanceled(t *testing.T) {
	release := make(chan struct{})
	g := impHostile(t, hostilemcp.Options{HangList: true, Release: release})
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{ImportTimeout: time.Minute})
	impRelease(t, release)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	err := im.Add(ctx, mcpbridge.ServerConfig{Name: "h", URL: g.url(), Enabled: true})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Add = %v, want context.Canceled", err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("Add took %s after its context was canceled at 200ms", took)
	}
}

// hostileEnv makes the test binary a hostile stdio MCP server (see
// TestImportHostileStdioServer), its value the -bad-frame attack.
const hostileEnv = "WIELD_TEST_HOSTILE_BAD_FRAME"

// TestImportHostileStdioServer is not a test: run with hostileEnv set, the
// test binary serves a hostile MCP server over stdio, for the tests that
// need a stdio server.
func TestImportHostileStdioServer(t *testing.T) {
	mode, ok := os.LookupEnv(hostileEnv)
	if !ok {
		t.Skip("the helper process of TestImportBadFrame")
	}
	out := &impLockedWriter{w: os.Stdout}
	srv, err := hostilemcp.New(hostilemcp.Options{ID: "bad", BadFrame: mode, Out: out})
	if err == nil {
		err = srv.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: impNopCloser{out}})
	}
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(1)
	}
	os.Exit(0)
}

type impLockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *impLockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type impNopCloser struct{ io.Writer }

func (impNopCloser) Close() error { return nil }

// TestImportBadFrame: a stdio server that answers a call with a line that
// is not JSON, or too large to read, has the model told what happened
// (without the decoder's text) and not invited to try again; the server is
// reconnected for the next call.
func TestImportBadFrame(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"json", `MCP server "bad" sent a line that is not JSON, which wield could not read, so its connection was reset`},
		{"oversized", `MCP server "bad" sent a message over 16 MiB, which wield could not read, so its connection was reset`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
			im := impImporter(t, reg, nil)
			err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "bad", Enabled: true,
				Command: []string{os.Args[0], "-test.run=^TestImportHostileStdioServer$"}, Env: map[string]string{hostileEnv: tc.mode}})
			if err != nil {
				t.Fatal(err)
			}
			tool, ok := reg.Tool("bad__echo")
			if !ok {
				t.Fatal("bad__echo is not registered")
			}
			_, err = tool.Handler.Handle(t.Context(), []byte(`{}`))
			var we *wield.Error
			if !errors.As(err, &we) {
				t.Fatalf("call = %v, want a *wield.Error", err)
			}
			if !strings.HasPrefix(we.Message, tc.want) || !strings.Contains(we.Message, "calling it again is unlikely to help") {
				t.Errorf("message = %q, want %q… and no invitation to retry", we.Message, tc.want)
			}
			for _, leak := range []string{"invalid character", "exceeded the configured", "try again shortly"} {
				if strings.Contains(we.Message, leak) {
					t.Errorf("message %q says %q", we.Message, leak)
				}
			}
			if wield.IsTransient(err) {
				t.Error("the error is transient: the engine would retry a misbehaving server")
			}
		})
	}
}

// impRelease closes a hanging server's Release before the importer and the
// server are stopped (cleanups run last first), which wait for its request.
func impRelease(t *testing.T, c chan struct{}) {
	t.Cleanup(func() { close(c) })
}
