//go:build !unix && !windows

package mcpbridge

import "os"

// tryLockFile has no file lock to take here (plan9, wasm): a change of
// the token file is then only serialized within this process.
func tryLockFile(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) {}
