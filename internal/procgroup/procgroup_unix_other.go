//go:build unix && !linux

package procgroup

import "syscall"

// runningIn says yes: without /proc a zombie cannot be told from a running
// process, and the signal reached one.
func runningIn(int) bool { return true }

// running reports whether a signal reaches pid (a zombie included).
func running(pid int) bool { return syscall.Kill(pid, 0) == nil }
