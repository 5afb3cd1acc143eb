//go:build unix && !linux

package procgroup

// runningIn says yes: without /proc a zombie cannot be told from a running
// process, and the signal reached one.
func runningIn(int) bool { return true }
