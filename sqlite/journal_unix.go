//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"
)

// journalFlags open a journal file for appends: with O_APPEND every write
// goes to the end of the file in one write(2), and Truncate still works.
const journalFlags = os.O_RDWR | os.O_CREATE | os.O_APPEND

// lockJournal takes the journal for this process with a non-blocking
// exclusive flock on f, released when f is closed. It reports false, and
// no error, when another process (or another open file in this one) holds
// it.
func lockJournal(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// unlockJournal has nothing to do: closing the file releases the flock.
func unlockJournal(*os.File) {}

// appendJournal writes b at the end of f, which O_APPEND ensures.
func appendJournal(f *os.File, b []byte) (int, error) { return f.Write(b) }
