//go:build !unix

package procgroup

import (
	"os"
	"os/exec"
)

// Own does nothing: there are no process groups to start in.
func Own(*exec.Cmd) {}

// Signal signals p alone; a signal the system cannot send (SIGTERM on
// Windows) kills it.
func Signal(p *os.Process, sig os.Signal) error {
	if err := p.Signal(sig); err != nil {
		return p.Kill()
	}
	return nil
}

// Alive reports false: only p itself was signalled, and its Wait says
// whether it is left.
func Alive(*os.Process) bool { return false }

// Running reports whether process pid can still be found (Windows finds a
// process that has exited as long as a handle to it is open).
func Running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
