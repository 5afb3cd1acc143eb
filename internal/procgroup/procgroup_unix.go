//go:build unix

package procgroup

import (
	"os"
	"os/exec"
	"syscall"
)

// Own has cmd start in a process group of its own, whose ID is its PID.
// A terminal's Ctrl-C then reaches the caller only, which stops the
// program itself.
func Own(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// Signal sends sig to the process group of p, started with Own.
func Signal(p *os.Process, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return p.Signal(sig)
	}
	return syscall.Kill(-p.Pid, s)
}

// Alive reports whether any process of p's group is left running. On
// Linux an exited process not yet reaped (a zombie: its parent, often
// init in a container, has not waited for it) is not counted.
func Alive(p *os.Process) bool {
	if syscall.Kill(-p.Pid, 0) != nil {
		return false
	}
	return runningIn(p.Pid)
}
