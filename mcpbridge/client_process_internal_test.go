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
	"syscall"
	"testing"
	"time"
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
	for running(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the wrapper's child %d outlived the close", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether process pid runs: not a zombie that its new
// parent (init, in a container often late) has not reaped.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: the signal reached it
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || !strings.HasPrefix(string(b[i+1:]), " Z")
}
