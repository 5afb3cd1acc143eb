//go:build windows

package builtin

import (
	"io/fs"
	"os"
	"syscall"
)

// openLinks is the number of names (hard links) of an opened file, from
// the handle itself (NumberOfLinks of GetFileInformationByHandle): Windows'
// FileInfo does not carry it. It is 1 when the system does not say.
func openLinks(f *os.File, _ fs.FileInfo) uint64 {
	var info syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &info); err != nil {
		return 1
	}
	return uint64(info.NumberOfLinks)
}

// entryLinks is the number of names of the entry rel of root, found by
// opening it (Lstat does not say on Windows).
func entryLinks(root *os.Root, rel string, fi fs.FileInfo) uint64 {
	f, err := root.Open(rel)
	if err != nil {
		return 1 // what cannot be opened cannot be read through
	}
	defer f.Close()
	return openLinks(f, fi)
}
