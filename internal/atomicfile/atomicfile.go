// Package atomicfile replaces small files whole: readers see the old
// content or the new, never a part, and a crash leaves one of the two.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with b: it writes a temporary file beside it
// (created with mode 0600, so secrets are never readable by others on the
// way), syncs it, renames it over path and syncs the folder, so that the
// rename survives a crash too. The temporary file is removed on failure.
func Write(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
