//go:build unix

package procgroup_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wieldhq/wield/internal/procgroup"
)

// TestSignalReachesTheGroup: a shell that started a child in the
// background is stopped with its child by one Signal; Alive says so.
func TestSignalReachesTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("sh", "-c", `sleep 300 & echo $! > "$0"; wait`, pidFile)
	procgroup.Own(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(10 * time.Second)
	for child == 0 {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the shell never wrote its child's PID")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	if !procgroup.Alive(cmd.Process) {
		t.Fatal("Alive = false with the shell and its child running")
	}
	if err := procgroup.Signal(cmd.Process, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for procgroup.Alive(cmd.Process) {
		if time.Now().After(deadline) {
			t.Fatalf("the shell's child %d outlived SIGTERM to the group", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSignalAfterTheGroupIsGone: signalling the group of a program that
// has exited and been waited for, alone in its group, says
// os.ErrProcessDone, as os.Process.Signal does: exec.Cmd's Wait, whose
// Cancel may run just after the program exited, then reports the
// program's own exit rather than the failure of the cancel.
func TestSignalAfterTheGroupIsGone(t *testing.T) {
	cmd := exec.Command("true")
	procgroup.Own(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := procgroup.Signal(cmd.Process, os.Kill); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal after the group is gone: %v; want os.ErrProcessDone", err)
	}
}
