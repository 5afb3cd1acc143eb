package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// releaseStartPages asks Linux to reclaim the pages of wield's own program
// file that are in memory (madvise MADV_PAGEOUT on each mapping of
// /proc/self/exe), once the server is up. Starting touches much of a
// 45 MB program once and never again: every package's initialization,
// the migrations, the command line, the templates. Linux maps those pages
// in 64 KiB or larger runs (fault-around, large folios) and keeps them in
// the process's resident set, about 24 MiB of a freshly started server,
// until memory runs short. What serving needs comes back on first use,
// read from the page cache or the file (a few milliseconds on the first
// calls). Pages another process maps too (a second wield from the same
// file) are left alone by the kernel; before Linux 5.4 the advice is
// unknown and nothing happens. It reports how many bytes of mappings it
// advised.
func releaseStartPages() (int64, error) {
	var exe syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &exe); err != nil {
		return 0, err
	}
	path, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	dev := fmt.Sprintf("%02x:%02x", unix.Major(exe.Dev), unix.Minor(exe.Dev))
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	var advised int64
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		m, ok := parseMapping(sc.Text())
		// The program's mappings: its device and inode, or, where a
		// file system shows other numbers in maps than stat does
		// (overlayfs in a container), its path.
		if !ok || !(m.dev == dev && m.inode == exe.Ino || m.path == path) {
			continue
		}
		// The address is of a mapping, not of Go memory: no unsafe
		// conversion, the system call takes it as a number.
		if _, _, e := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), unix.MADV_PAGEOUT); e != 0 {
			return advised, fmt.Errorf("madvise %x-%x: %w", m.start, m.end, e)
		}
		advised += int64(m.end - m.start)
	}
	return advised, sc.Err()
}

// mapping is a line of /proc/self/maps.
type mapping struct {
	start, end uint64
	dev        string // major:minor, in hex
	inode      uint64
	path       string // as the kernel shows it: " (deleted)" after a replaced file's
}

// parseMapping reads a line of /proc/self/maps: "start-end perms offset
// dev inode path", the path (which may hold spaces) after the inode's
// padding; ok is false for a line that is not one.
func parseMapping(line string) (m mapping, ok bool) {
	rest := line
	var f [5]string
	for i := range f {
		rest = strings.TrimLeft(rest, " ")
		f[i], rest, _ = strings.Cut(rest, " ")
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return m, false
	}
	var err [3]error
	m.start, err[0] = strconv.ParseUint(lo, 16, 64)
	m.end, err[1] = strconv.ParseUint(hi, 16, 64)
	m.inode, err[2] = strconv.ParseUint(f[4], 10, 64)
	if errors.Join(err[:]...) != nil || m.end <= m.start {
		return m, false
	}
	m.dev, m.path = f[3], strings.TrimLeft(rest, " ")
	return m, true
}
