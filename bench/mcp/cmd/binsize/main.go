// Command binsize prints what a Go binary's loaded bytes are spent on: its
// sections (text, read-only data, the function table, data), then its
// symbols' bytes summed by module (a standard package by its first path
// element), largest first. Symbols the file does not hold (.bss,
// .noptrbss) are left out; the function table (.gopclntab) and
// go:func.* are not split by symbol, and grow with each module's text.
//
//	binsize [-n 30] BINARY
//
// bench/size.sh builds wield and runs it.
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

func main() {
	n := flag.Int("n", 30, "modules to list")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: binsize [-n 30] BINARY")
		os.Exit(2)
	}
	f, err := elf.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
	defer f.Close()
	st, err := os.Stat(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
	fmt.Printf("file %.1f MB\n", mb(uint64(st.Size())))
	var loaded uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || s.Size < 100_000 {
			continue
		}
		loaded += s.Size
		fmt.Printf("  %-12s %6.2f MB\n", s.Name, mb(s.Size))
	}
	fmt.Printf("loaded sections of 100 kB or more: %.2f MB\n\n", mb(loaded))

	syms, err := f.Symbols()
	if err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
	type cost struct{ text, other uint64 }
	by := map[string]*cost{}
	for _, s := range syms {
		if int(s.Section) >= len(f.Sections) || s.Section == elf.SHN_UNDEF || s.Size == 0 {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		m := module(s.Name)
		c := by[m]
		if c == nil {
			c = &cost{}
			by[m] = c
		}
		if sec.Flags&elf.SHF_EXECINSTR != 0 {
			c.text += s.Size
		} else {
			c.other += s.Size
		}
	}
	names := make([]string, 0, len(by))
	for m := range by {
		names = append(names, m)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := by[names[i]], by[names[j]]
		return a.text+a.other > b.text+b.other
	})
	fmt.Printf("%8s %8s %8s  %s\n", "MB", "text", "data", "module")
	for i, m := range names {
		if i == *n {
			break
		}
		c := by[m]
		fmt.Printf("%8.3f %8.3f %8.3f  %s\n", mb(c.text+c.other), mb(c.text), mb(c.other), m)
	}
}

func mb(n uint64) float64 { return float64(n) / 1e6 }

// module is the module (or standard package tree) a symbol belongs to.
func module(name string) string {
	for _, p := range []string{"type:.eq.", "type:.hash.", "type:", "go:itab.", "go:"} {
		if strings.HasPrefix(name, p) {
			if p == "go:" {
				return "go: (runtime tables)"
			}
			name = name[len(p):]
			break
		}
	}
	name = strings.TrimLeft(name, "*[]0123456789")
	// The package path ends at the first dot after its last slash.
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		name = name[:slash+1+dot]
	}
	parts := strings.Split(name, "/")
	switch {
	case !strings.Contains(parts[0], "."):
		return parts[0] // the standard library, by its top package
	case parts[0] == "github.com" || parts[0] == "golang.org" || parts[0] == "go.opentelemetry.io":
		if len(parts) >= 3 {
			if parts[1] == "wieldhq" && len(parts) >= 4 {
				return strings.Join(parts[:4], "/") // wield's packages one by one
			}
			return strings.Join(parts[:3], "/")
		}
	case len(parts) >= 2:
		return strings.Join(parts[:2], "/")
	}
	return name
}
