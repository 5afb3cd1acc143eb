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
		if m, ok := parseMapping(sc.Text()); ok { // a mapping's first line
			ours = m.inode == exe.Ino
			continue
		}
		if f := strings.Fields(sc.Text()); ours && len(f) == 3 && f[0] == "Rss:" {
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

// TestParseMapping: the lines of /proc/self/maps, a path with spaces and a
// replaced file's " (deleted)" among them.
func TestParseMapping(t *testing.T) {
	for _, c := range []struct {
		line string
		want mapping
		ok   bool
	}{
		{"00400000-00452000 r-xp 00000000 fd:01 1234                               /usr/bin/wield", mapping{0x400000, 0x452000, "fd:01", 1234, "/usr/bin/wield"}, true},
		{"7f00-8f00 r--p 00001000 08:02 99 /opt/my tools/wield (deleted)", mapping{0x7f00, 0x8f00, "08:02", 99, "/opt/my tools/wield (deleted)"}, true},
		{"7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]", mapping{0x7ffd1000, 0x7ffd2000, "00:00", 0, "[stack]"}, true},
		{"7ffd1000-7ffd2000 rw-p 00000000 00:00 0", mapping{0x7ffd1000, 0x7ffd2000, "00:00", 0, ""}, true},
		{"", mapping{}, false},
		{"zz-10 r-xp 0 fd:01 1 /x", mapping{}, false},
		{"20-10 r-xp 0 fd:01 1 /x", mapping{}, false},
		{"10-20 r-xp 0 fd:01 x /x", mapping{}, false},
	} {
		got, ok := parseMapping(c.line)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("parseMapping(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}
