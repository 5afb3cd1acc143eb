package promtext

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// processFamilies reads the figures from sysctl, getrusage, /dev/fd and
// getrlimit; the memory sizes need the C API (task_info) and are left out,
// as client_golang leaves them out without cgo.
func processFamilies(add func(name string, v float64)) {
	if p, err := unix.SysctlKinfoProc("kern.proc.pid", os.Getpid()); err == nil {
		add("process_start_time_seconds", float64(p.Proc.P_starttime.Nano()/1e9))
	}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
		add("process_cpu_seconds_total", time.Duration(ru.Stime.Nano()+ru.Utime.Nano()).Seconds())
	}
	if d, err := os.Open("/dev/fd"); err == nil {
		names, err := d.Readdirnames(-1)
		d.Close()
		if err == nil {
			add("process_open_fds", float64(len(names)-1)) // less /dev/fd's own
		}
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		add("process_max_fds", float64(lim.Cur))
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		add("process_virtual_memory_max_bytes", float64(lim.Cur))
	}
}
