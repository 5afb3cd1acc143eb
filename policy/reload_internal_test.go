package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReloadUnchanged compares a reload of unchanged policy files (a
// watcher's interval): now (read, digest, compare) and before (read,
// parse every file, then compare the digest), in one run. 20 files of 10
// policies each.
func BenchmarkReloadUnchanged(b *testing.B) {
	dir := b.TempDir()
	for i := range 20 {
		var src strings.Builder
		for j := range 10 {
			fmt.Fprintf(&src, "@id(\"p%d_%d\")\npermit(principal, action == Action::\"call\", resource) when { resource.name == \"tool_%d\" };\n", i, j, j)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%02d.cedar", i)), []byte(src.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := Load(Enforce, dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("digest-first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if changed, err := s.reload(); changed || err != nil {
				b.Fatal(changed, err)
			}
		}
	})
	b.Run("parse-first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			src, err := readFiles(s.paths)
			if err != nil {
				b.Fatal(err)
			}
			l, err := src.parse()
			if err != nil || l.digest != s.cur.Load().digest {
				b.Fatal("changed", err)
			}
		}
	})
}
