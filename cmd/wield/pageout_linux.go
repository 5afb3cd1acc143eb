package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
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
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	var advised int64
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode path
		f := bytes.Fields(sc.Bytes())
		if len(f) < 6 {
			continue
		}
		ino, err := strconv.ParseUint(string(f[4]), 10, 64)
		if err != nil || ino != exe.Ino || string(f[3]) != fmt.Sprintf("%02x:%02x", unix.Major(exe.Dev), unix.Minor(exe.Dev)) {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		// The address is of a mapping, not of Go memory: no unsafe
		// conversion, the system call takes it as a number.
		if _, _, e := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_PAGEOUT); e != 0 {
			return advised, fmt.Errorf("madvise %s: %w", f[0], e)
		}
		advised += int64(end - start)
	}
	return advised, sc.Err()
}
