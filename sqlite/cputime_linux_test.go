package sqlite

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the calling thread's user and system CPU time: on a shared
// machine wall time per record says more about the neighbours than about
// the writer.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
