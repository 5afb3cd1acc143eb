package mcpbridge

import (
	"fmt"
	"os"
	"time"
)

// tokensLockWait bounds how long a change of a token file waits for
// another process's change to end (each takes milliseconds: a read, a
// write, a rename).
const tokensLockWait = 5 * time.Second

// lockTokens takes the lock of the token file at path, a file beside it
// (path + ".lock", mode 0600, left in place), so that processes sharing
// the token file (wield serve refreshing, wield mcp login or logout) change
// it one at a time: each reads, changes and writes it while it holds the
// lock. It waits at most tokensLockWait, and returns what releases the
// lock.
func lockTokens(path string) (unlock func(), err error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock tokens: %w", err)
	}
	for deadline := time.Now().Add(tokensLockWait); ; {
		ok, err := tryLockFile(f)
		switch {
		case err != nil:
			f.Close()
			return nil, fmt.Errorf("lock tokens %s: %w", name, err)
		case ok:
			return func() {
				unlockFile(f)
				f.Close()
			}, nil
		case time.Now().After(deadline):
			f.Close()
			return nil, fmt.Errorf("lock tokens %s: another process has held it for %v", name, tokensLockWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
