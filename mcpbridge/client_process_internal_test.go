//go:build unix

package mcpbridge

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wieldhq/wield/internal/procgroup"
)

// TestStopAfterTheServerExited: a server that exits by itself (a
// wrapper that started the real server in the background and returned, a
// crash) before wield closes it still has what it left of its group
// stopped by the close, which reports no error: the stdin that exec's
// Wait closed already is no failure.
func TestStopAfterTheServerExited(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("sh", "-c", `sleep 300 & echo $! > "$0"`, pidFile)
	tr := &impProcess{cmd: cmd, grace: time.Second, name: "wrapper", log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(10 * time.Second)
	for child == 0 || syscall.Kill(cmd.Process.Pid, 0) == nil { // the wrapper written its child's PID and been reaped
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the wrapper did not start its child and exit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for procgroup.Running(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the wrapper's child %d outlived the close", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStopSignalsNoReusedGroup: a server that exited leaving nothing of
// its process group is not signalled as a group when it is closed later:
// by then its PID may name another process group (the system gives a PID
// again once its group is empty; every command tool's program leads a
// group of its own). The reuse is played by pointing the exited server's
// process at a running group, as the PID would.
func TestStopSignalsNoReusedGroup(t *testing.T) {
	cmd := exec.Command("true")
	procgroup.Own(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &impProcessStdin{WriteCloser: stdin, cmd: cmd, grace: time.Second, name: "quick", log: slog.New(slog.NewTextHandler(io.Discard, nil)), exited: make(chan struct{})}
	p.reap() // the server is gone, and with it its group

	other := exec.Command("sleep", "300")
	procgroup.Own(other)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	cmd.Process.Pid = other.Process.Pid // the PID given again

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(other.Process.Pid, 0); err != nil {
		t.Fatalf("the group that took the exited server's PID was signalled: %v", err)
	}
	var st syscall.WaitStatus
	if pid, _ := syscall.Wait4(other.Process.Pid, &st, syscall.WNOHANG, nil); pid != 0 {
		t.Fatalf("the group that took the exited server's PID was ended: %v", st)
	}
}

// TestStopSaysWhyItWaits: a stdio server that does not exit when its stdin
// is closed holds wield's exit for the grace period (5 s), then gets
// SIGTERM, and that is said at WARN, the level wield's importer logs at in
// every command, so the person waiting knows why (docs/mcp.md says it is
// logged; at INFO it never reached stderr).
func TestStopSaysWhyItWaits(t *testing.T) {
	var log strings.Builder
	lw := &lockedWriter{w: &log}
	cmd := exec.Command("sleep", "300") // does not read its stdin
	tr := &impProcess{cmd: cmd, grace: 100 * time.Millisecond, name: "deaf",
		log: slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	if err := conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	got := lw.String()
	if !strings.Contains(got, "level=WARN") || !strings.Contains(got, "did not exit when its stdin was closed; sending SIGTERM") || !strings.Contains(got, "server=deaf") {
		t.Errorf("the log at WARN:\n%s\nwant the SIGTERM said, naming the server", got)
	}
}

// lockedWriter lets the server's goroutines and the test share a log.
type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
