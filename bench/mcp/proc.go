package mcpbench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// ProcCPU is the user+system CPU time process pid has used so far, read
// from /proc/PID/stat (utime and stime, in clock ticks of clkTck a
// second: `getconf CLK_TCK`, 100 on Linux). It is read from outside the
// process so that every server, wield's binary included, is measured the
// same way, by the kernel's accounting rather than its own report. Use
// pid "self" for the calling process.
func ProcCPU(pid string, clkTck int) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted are those after its closing parenthesis, starting with the
	// state (field 3); utime and stime are fields 14 and 15.
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%s/stat: no command name", pid)
	}
	fields := bytes.Fields(data[end+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%s/stat: %d fields", pid, len(fields)+2)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%s/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / time.Duration(clkTck), nil
}

// ProcRSS is the resident set size of process pid in bytes, VmRSS of
// /proc/PID/status: the heap, the stacks, and the pages of the binary and
// its libraries that are in memory.
func ProcRSS(pid string) (int64, error) { return procStatus(pid, "VmRSS") }

// ProcRSSAnon is the anonymous part of ProcRSS, RssAnon of
// /proc/PID/status: the heap and the stacks, without the program's file.
// The pages of the file that count in VmRSS depend on how the file came
// into the page cache as much as on what the program touches (the same
// wield binary idled at 26.5 MiB of file pages after cp and at 30-38 MiB
// as the linker's output or a copy written in 1 MiB writes, 2026-11-27:
// larger folios, mapped whole), so the anonymous part is the figure that
// compares programs.
func ProcRSSAnon(pid string) (int64, error) { return procStatus(pid, "RssAnon") }

// procStatus is the field key of /proc/PID/status, in kB, in bytes.
func procStatus(pid, key string) (int64, error) {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(data) {
		rest, ok := bytes.CutPrefix(line, []byte(key+":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("/proc/%s/status: %s %q", pid, key, rest)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%s/status: %s: %w", pid, key, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/%s/status: no %s", pid, key)
}
