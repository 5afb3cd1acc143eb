// Package walkroot gives the root to walk for a folder a user named, so
// that tool files and policies are found alike in a folder given through a
// symbolic link.
package walkroot

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Of is the root to walk for dir: a folder given through a symbolic link
// is walked as the folder it names (filepath.WalkDir follows no link, the
// root's included, so it would visit the link alone), with the link's
// name in the paths. Any other dir is returned as it is.
func Of(dir string) string {
	if li, err := os.Lstat(dir); err != nil || li.Mode()&fs.ModeSymlink == 0 {
		return dir
	}
	if st, err := os.Stat(dir); err == nil && st.IsDir() && !strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + string(filepath.Separator)
	}
	return dir
}
