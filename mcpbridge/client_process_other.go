//go:build !unix

package mcpbridge

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

var (
	impTerm os.Signal = syscall.SIGTERM // refused on Windows: the kill follows
	impKill os.Signal = os.Kill
)

// impOwnGroup does nothing here: there are no process groups to signal.
func impOwnGroup(*exec.Cmd) {}

// impSignal signals the server's process; where SIGTERM cannot be sent
// (Windows) it is killed.
func impSignal(cmd *exec.Cmd, _ int, sig os.Signal) {
	if cmd.Process.Signal(sig) != nil {
		_ = cmd.Process.Kill()
	}
}

func impEndGroup(int, time.Duration) {}
