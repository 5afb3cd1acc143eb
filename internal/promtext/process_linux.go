package promtext

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of the times of /proc/PID/stat (USER_HZ, 100 on
// every Linux platform Go supports; procfs assumes it too).
const userHZ = 100

// processFamilies reads the figures from /proc and getrlimit.
func processFamilies(add func(name string, v float64)) {
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		// pid (comm) state ppid …: comm may hold spaces and parentheses;
		// after the last ')' come the fields from the third on.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			f := strings.Fields(string(b[i+1:]))
			field := func(n int) float64 { // n: the field's number in proc(5)
				if n-3 >= len(f) {
					return 0
				}
				v, _ := strconv.ParseUint(f[n-3], 10, 64)
				return float64(v)
			}
			if len(f) >= 22 {
				add("process_cpu_seconds_total", (field(14)+field(15))/userHZ)
				add("process_virtual_memory_bytes", field(23))
				add("process_resident_memory_bytes", field(24)*float64(os.Getpagesize()))
				if boot, ok := bootTime(); ok {
					add("process_start_time_seconds", boot+field(22)/userHZ)
				}
			}
		}
	}
	if d, err := os.Open("/proc/self/fd"); err == nil {
		names, err := d.Readdirnames(-1)
		d.Close()
		if err == nil {
			add("process_open_fds", float64(len(names)))
		}
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		add("process_max_fds", float64(lim.Cur))
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		add("process_virtual_memory_max_bytes", float64(lim.Cur))
	}
	if in, out, ok := netOctets(); ok {
		add("process_network_receive_bytes_total", in)
		add("process_network_transmit_bytes_total", out)
	}
}

// bootTime is the btime line of /proc/stat, in seconds since 1970.
func bootTime() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			t, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return float64(t), err == nil
		}
	}
	return 0, false
}

// netOctets are InOctets and OutOctets of the IpExt lines of
// /proc/self/net/netstat (a line of names, then one of values): the bytes
// of the process's network namespace.
func netOctets() (in, out float64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	var names []string
	for line := range strings.SplitSeq(string(b), "\n") {
		rest, isIP := strings.CutPrefix(line, "IpExt:")
		if !isIP {
			continue
		}
		if names == nil {
			names = strings.Fields(rest)
			continue
		}
		for i, v := range strings.Fields(rest) {
			if i >= len(names) {
				break
			}
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			switch names[i] {
			case "InOctets":
				in = n
			case "OutOctets":
				out = n
			}
		}
		return in, out, true
	}
	return 0, 0, false
}
