package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// checkpointEvery is how often the WAL is copied into the database when
// anything was written.
const checkpointEvery = 100 * time.Millisecond

// checkpoints copies the write-ahead log into the database in the
// background (PASSIVE: it never blocks the writer or the readers), so that
// the writer does not stall on a checkpoint and its fsyncs. SQLite's own
// automatic checkpoint stays on the writer as a backstop, at 10,000 pages,
// for a log that grows faster than this keeps up.
func (s *Store) checkpoints(db *sql.DB) {
	defer close(s.ckptDone)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-s.ckptStop:
			return
		case <-t.C:
		}
		if s.orphans() && tick%10 == 0 {
			s.adoptJournal(context.Background())
		}
		if !s.dirty.Swap(false) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		cancel()
		if err != nil {
			s.dirty.Store(true) // try again at the next tick
			var se *sqlite.Error
			if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY { // busy: another checkpoint runs
				s.log.Warn("sqlite store: checkpoint failed; the write-ahead log grows until one succeeds", "path", s.path, "err", err)
			}
		}
	}
}
