//go:build unix

package builtin

import (
	"io/fs"
	"os"
	"syscall"
)

// openLinks is the number of names (hard links) of an opened file, from
// the file's own fstat: fi is f.Stat(). It is 1 when the system does not
// say.
func openLinks(_ *os.File, fi fs.FileInfo) uint64 { return statLinks(fi) }

// entryLinks is the number of names of the entry rel of root, as Lstat
// gave it in fi.
func entryLinks(_ *os.Root, _ string, fi fs.FileInfo) uint64 { return statLinks(fi) }

func statLinks(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink) // uint16 on darwin, uint32 or uint64 on linux
	}
	return 1
}
