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
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …: comm may hold spaces and
		// parentheses, so the fields are counted from the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(b[i+1:])
		if len(fields) < 3 {
			continue
		}
		if g, err := strconv.Atoi(string(fields[2])); err == nil && g == pgid && string(fields[0]) != "Z" {
			return true
		}
	}
	return false
}
