package sqlite

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/windows"
)

// journalFlags open a journal file without O_APPEND: on Windows, Go opens
// an O_APPEND file without the right to write data in place (only
// FILE_APPEND_DATA), and SetFileInformationByHandle(FileEndOfFileInfo),
// which Truncate calls, needs it, so the journal could never be emptied.
// appendJournal seeks to the end instead; only the process holding the
// lock writes, under the journal's mutex, so nothing comes in between.
const journalFlags = os.O_RDWR | os.O_CREATE

// lockRange is the byte locked to take the journal: one far past any
// journal's end, since Windows locks are mandatory and a lock over the
// records would stop other processes from reading them.
var lockRange = windows.Overlapped{Offset: 0xFFFFFFFE, OffsetHigh: 0x7FFFFFFF}

// lockJournal takes the journal for this process with a non-blocking
// exclusive LockFileEx on f (the counterpart of flock's LOCK_EX|LOCK_NB),
// released by unlockJournal or when f is closed. It reports false, and no
// error, when another process (or another handle in this one) holds it.
func lockJournal(f *os.File) (bool, error) {
	ol := lockRange
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

// unlockJournal releases the lock before f is closed: Windows releases the
// locks of a closed handle too, but only "depending on available system
// resources", and another store waiting to adopt the journal should not
// wait for that.
func unlockJournal(f *os.File) {
	ol := lockRange
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol) // ERROR_NOT_LOCKED when it was not taken
}

// appendJournal writes b at the end of f.
func appendJournal(f *os.File, b []byte) (int, error) {
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return 0, err
	}
	return f.Write(b)
}
