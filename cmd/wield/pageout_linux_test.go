package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// exeResident is how much of this process's program file is in its
// resident set, in KiB: the Rss of its mappings of /proc/self/exe.
func exeResident(t *testing.T) int {
	t.Helper()
	var exe syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &exe); err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	kib, ours := 0, false
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			ino, _ := strconv.ParseUint(f[4], 10, 64)
			ours = ino == exe.Ino
		case ours && len(f) == 3 && f[0] == "Rss:":
			n, _ := strconv.Atoi(f[1])
			kib += n
		}
	}
	return kib
}

// TestReleaseStartPages: the program's pages a start touched leave the
// resident set (Linux 5.4 or later), and the program goes on running
// from them.
func TestReleaseStartPages(t *testing.T) {
	before := exeResident(t)
	advised, err := releaseStartPages()
	if err != nil {
		t.Fatal(err)
	}
	if advised == 0 {
		t.Fatal("no mapping of the program file was found in /proc/self/maps")
	}
	after := exeResident(t)
	t.Logf("program pages resident: %d KiB before, %d KiB after (%d KiB of mappings advised)", before, after, advised>>10)
	if after > before/2 {
		t.Errorf("program pages resident: %d KiB after, from %d KiB: not given back", after, before)
	}
}
