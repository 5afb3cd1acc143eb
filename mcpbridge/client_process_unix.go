//go:build unix

package mcpbridge

import (
	"os/exec"
	"syscall"
	"time"
)

const (
	impTerm = syscall.SIGTERM
	impKill = syscall.SIGKILL
)

// impOwnGroup has cmd start in a process group of its own, whose ID is its
// PID: what it starts is in the group too, and a terminal's Ctrl-C reaches
// wield only, which stops its servers in order.
func impOwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// impSignal sends sig to the server's process group.
func impSignal(_ *exec.Cmd, pid int, sig syscall.Signal) {
	_ = syscall.Kill(-pid, sig)
}

// impEndGroup ends what is left of the group of a server that has exited:
// SIGTERM, then SIGKILL once grace has passed with any of it still there.
func impEndGroup(pid int, grace time.Duration) {
	if syscall.Kill(-pid, 0) != nil {
		return // nothing left
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if syscall.Kill(-pid, 0) != nil {
			return
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
