//go:build !unix && !windows

package builtin

import (
	"io/fs"
	"os"
)

// openLinks is 1 where the system does not say how many names a file has
// (Plan 9 has no hard links; WASI and js report none).
func openLinks(*os.File, fs.FileInfo) uint64 { return 1 }

// entryLinks is 1 where the system does not say.
func entryLinks(*os.Root, string, fs.FileInfo) uint64 { return 1 }
