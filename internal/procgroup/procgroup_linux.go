package procgroup

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// runningIn reports whether a process of group pgid is running, from
// /proc: a zombie is not running. When /proc cannot be read it says yes,
// as the signal did.
func runningIn(pgid int) bool {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return true
	}
	for _, f := range stats {
		state, g, ok := stat(f)
		if ok && g == pgid && state != "Z" {
			return true
		}
	}
	return false
}

// running reports whether process pid runs, from /proc: not a zombie.
func running(pid int) bool {
	state, _, ok := stat("/proc/" + strconv.Itoa(pid) + "/stat")
	return ok && state != "Z"
}

// stat reads a process's state and process group from its /proc stat
// file; ok is false when it cannot be read (the process is gone).
func stat(path string) (state string, pgrp int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, false
	}
	// pid (comm) state ppid pgrp …: comm may hold spaces and parentheses,
	// so the fields are counted from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, false
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 3 {
		return "", 0, false
	}
	g, err := strconv.Atoi(string(fields[2]))
	return string(fields[0]), g, err == nil
}
