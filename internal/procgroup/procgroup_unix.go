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

// Signal sends sig to the process group of p, started with Own. A group
// that no longer exists is [os.ErrProcessDone], as p.Signal says of a
// process that has finished: exec.Cmd's Wait takes any other error of its
// Cancel, which may run once the program has exited and been waited for,
// for a failure of a program that succeeded.
func Signal(p *os.Process, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return p.Signal(sig)
	}
	if err := syscall.Kill(-p.Pid, s); err != nil {
		if err == syscall.ESRCH {
			return os.ErrProcessDone
		}
		return err
	}
	return nil
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

// Running reports whether process pid runs; on Linux a zombie (exited, not
// yet reaped) does not. For a process that is not the caller's child,
// whose Wait cannot say.
func Running(pid int) bool { return running(pid) }
