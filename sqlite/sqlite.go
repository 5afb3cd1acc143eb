// Package sqlite keeps wield's durable memory in one SQLite file: the record
// of every call, with its queries and statistics, idempotent replays,
// approvals and artifacts. It is the embedded default store; it needs no cgo
// (modernc.org/sqlite) and no server. Package postgres serves several wield
// servers that share one store.
//
// # Opening
//
//	s, err := sqlite.Open(ctx, "/var/lib/wield/wield.db", nil)
//	if err != nil {
//		return err
//	}
//	defer s.Close(ctx)
//	e := engine.New(reg, &engine.Options{Store: s})
//
// [Open] creates the file (readable by its owner only) and its directory,
// puts the database in WAL mode, and applies the migrations it lacks
// (migrations/*.sql, embedded) in one transaction, recording each in the
// schema_version table. It refuses, with an error naming the file, a file
// that is not a database, a database locked by another process beyond the
// busy timeout, and a database whose schema is newer than this code.
//
// # Durability
//
// In sync mode (the default) [Store.Save] returns once the record is in
// the store's journal, two files beside the database (<db>-records-0 and
// -1): the records that arrive while one append is being written are
// appended together with the next one, in one write(2) (group commit). The
// journal's records are then inserted into the database in the background,
// in transactions of up to 2,048 records, at least every FlushInterval;
// [Open] first inserts whatever a crash left in the journal, in the order
// of the appends (records already in the database are left out). Queries
// through the store wait until every record saved before them is in the
// database, so a caller always reads what it saved (while the database
// cannot be written they wait, until their context ends); another process
// reading the same file sees a record within FlushInterval. A record whose
// ID is recorded already is refused by the background writer, logged and
// counted (Close reports the count), not returned to Save. One process
// journals a database at a time (an flock): a store that finds the journal
// taken commits every group in a transaction before Save returns (and
// refuses a taken ID to Save), and replays the journal about a second after
// the process that held it is gone.
//
// The journal replaced a transaction per group because that transaction was
// most of a recorded call's cost: an INSERT of a few records touches five
// B-trees and writes as many pages to the write-ahead log, about 100 us of
// the writer's time for one record on the project's 2-core machine, so that
// at 8 concurrent clients `wield serve` answered at 0.4x a plain net/http
// handler; through the journal, at 0.75-0.85x (bench/serve.sh).
//
// A record whose Save returned survives the crash of the process (a panic,
// SIGKILL, the OOM killer: the operating system has the data, and TestCrash
// kills a child mid-load to check it). Neither the journal nor the database
// is fsync()ed per record: the database runs with synchronous=NORMAL, so a
// power failure or a crash of the kernel may lose the last records (about
// the last 100 ms), and never corrupts the file. Checkpoints, which do
// fsync, run in the background every 100 ms (PASSIVE), so the writer never
// waits for one. synchronous=FULL, which survives power loss too, cost an
// fsync per group commit: on the project's 2-core machine it took one
// caller from about 8,200 to 2,400 recorded calls a second.
//
// In async mode ([Options.Async]) Save returns as soon as the record is
// encoded and buffered; buffered records are written every
// [Options.FlushInterval] (50 ms), in batches of up to 2,048, and by Close.
// The loss window: if the process dies, the records saved in the last
// FlushInterval, plus those waiting behind a write that was in progress (at
// most 65,536 buffered; past that Save waits for room), are lost. A write
// that fails is retried with backoff and reported to the logger; nothing is
// dropped silently. [Store.Flush] waits until everything saved before it is
// written.
//
// # Queries
//
// Records are indexed by ID (pages are newest first and the cursor of a page
// is its last ID), by conversation, by tool and by queue time; workflows,
// users, failed calls and idempotency keys have partial indexes, which
// records without them do not pay for. A filter on the caller alone has no
// index of its own: it reads newest first until the page is full. Times
// are kept to the microsecond, durations to the nanosecond. Statistics read
// the duration of every selected call and take nearest-rank percentiles.
//
// # Connections
//
// Every write goes through one connection (SQLite has one writer at a time),
// so decisions on approvals and new artifact versions are atomic claims;
// queries use a pool of read-only connections, which WAL lets read while
// the writer writes. Each connection keeps a page cache of 2 MiB (SQLite's
// default; see cacheKiB for why not more), and a reader idle for a minute
// is closed. The database is read through read(2), not mmap: mapped pages
// would count in the memory of the process.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/commit"

	"modernc.org/sqlite" // the database/sql driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Options configure a [Store]; nil or zero fields take the defaults.
type Options struct {
	// Async makes Save return before the record is written; see the package
	// documentation for what may be lost.
	Async bool
	// FlushInterval is how long an async record may wait to be written
	// (50 ms).
	FlushInterval time.Duration
	// BusyTimeout is how long a statement waits for a lock that another
	// process holds (5 s).
	BusyTimeout time.Duration
	// Logger receives failed async writes; nil means slog.Default().
	Logger *slog.Logger
}

// Store is a [wield.Storage] in one SQLite file. It is safe for concurrent
// use.
type Store struct {
	path  string
	w     *sql.DB   // one connection, held by wc
	wc    *sql.Conn // every write, under wmu
	wmu   sync.Mutex
	r     *sql.DB // read-only connections
	log   *slog.Logger
	async bool

	commit  *commit.Committer[*row] // inserts records into the database
	jr      *journal                // sync mode: what Save is acknowledged from
	jcommit *commit.Committer[*row] // appends to jr
	shapes  []*shaped               // the prepared INSERTs of each shape, latest used first
	single  stmt                    // the INSERT of one record that refuses it alone (insertEach)
	args    []driver.NamedValue     // the writer's, reused

	lost atomic.Int64 // async records refused by the database

	ckpt     *sql.DB // the background checkpoint's connection
	dirty    atomic.Bool
	ckptStop chan struct{}
	ckptDone chan struct{}

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// cacheKiB is the page cache of each connection, in KiB (a negative
// cache_size): SQLite's own default, 2 MiB. The store's connections were
// given 32 MiB (the writer) and 16 MiB (each of up to four readers), and
// the caches filled: after 50,000 MCP and 50,000 REST calls to `wield serve`
// its anonymous memory was 82 MiB, of which the Go heap was about 10 MB.
// With 2 MiB caches it is 21 MiB after the same calls (2 runs each, the
// same build). Records are appended: the pages an insert touches are the
// right edges of the table and its indexes, few and hot, so the larger
// cache bought nothing; the writer's CPU for 800,000 recorded calls
// (internal/storebench, sync and async, 1 and 64 callers; 3 interleaved
// rounds, medians) was 21.0 s with the large caches and 19.2 s with these.
// Reads that miss the cache are served by the operating system's page
// cache, which the memory of the process does not count.
const cacheKiB = "-2000"

// readerIdle is how long a read-only connection may stay idle before it
// is closed (and its cache freed); the next query opens another.
const readerIdle = time.Minute

// maxBatch is the most records one background transaction writes.
const maxBatch = 2048

// maxRows is the most records one INSERT statement writes.
const (
	maxRowsLog = 6
	maxRows    = 1 << maxRowsLog
)

// Open opens the store in the SQLite file at path, creating the file and
// its directory if needed and migrating its schema. Errors name the file.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 50 * time.Millisecond
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open sqlite store %q: want the path of a file", path)
	}
	if err := create(path); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	s := &Store{path: path, log: o.Logger, async: o.Async, closed: make(chan struct{})}
	busy := fmt.Sprintf("&_pragma=busy_timeout(%d)", o.BusyTimeout.Milliseconds())
	base := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)

	w, err := sql.Open("sqlite", base+"?_txlock=immediate"+busy+
		"&_journal_mode=wal&_pragma=synchronous(normal)&_pragma=foreign_keys(off)"+
		"&_pragma=cache_size("+cacheKiB+")&_pragma=temp_store(memory)&_pragma=wal_autocheckpoint(10000)"+
		"&_pragma=journal_size_limit(67108864)")
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s.w = w
	if err := s.migrateWaiting(ctx, o.BusyTimeout); err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, describe(err))
	}
	if s.wc, err = w.Conn(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, describe(err))
	}

	r, err := sql.Open("sqlite", base+"?_pragma=query_only(1)"+busy+"&_pragma=cache_size("+cacheKiB+")")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	// A reader left idle closes, and its page cache goes with it: a burst
	// of queries does not hold n caches for the life of the process.
	r.SetConnMaxIdleTime(readerIdle)
	s.r = r
	if err := r.PingContext(ctx); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, describe(err))
	}
	if err := s.prepareInserts(ctx); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, describe(err))
	}
	ckpt, err := sql.Open("sqlite", base+"?_pragma=busy_timeout(0)")
	if err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	ckpt.SetMaxOpenConns(1)
	s.ckpt = ckpt

	if !o.Async {
		if err := s.openJournal(ctx); err != nil {
			s.Close(ctx)
			return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
		}
	}
	co := commit.Options{Async: s.background(), Interval: o.FlushInterval, MaxBatch: maxBatch}
	if co.Async {
		co.OnError = func(err error) {
			s.log.Error("sqlite store: write of buffered call records failed; retrying", "path", path, "err", err)
		}
	}
	write := s.write
	if co.Async {
		write = s.writeAdded
	}
	s.commit = commit.New(write, co)
	if s.jr != nil {
		s.jcommit = commit.New(s.journalWrite, commit.Options{})
	}
	s.ckptStop, s.ckptDone = make(chan struct{}), make(chan struct{})
	go s.checkpoints(ckpt)
	return s, nil
}

// migrateWaiting migrates the schema, trying again for up to wait while
// the database is busy: a fresh database that another process opens at
// the same moment is turned to WAL by one of them, and SQLite answers the
// others' first statement SQLITE_BUSY at once, without its busy handler
// (`wield call` and `wield approvals list` from another terminal, on their
// first use, failed so).
func (s *Store) migrateWaiting(ctx context.Context, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := s.migrate(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// orphans reports whether the store may find a journal whose process is
// gone: a sync store that found it taken.
func (s *Store) orphans() bool { return !s.async && s.jr == nil }

// openJournal opens the journal, unless another process has it, and first
// inserts the records a crash left in it.
func (s *Store) openJournal(ctx context.Context) error {
	j, err := openJournal(s.path)
	if err != nil || j == nil {
		return err
	}
	if err := s.replay(ctx, j); err != nil {
		j.close()
		return err
	}
	s.jr = j
	return nil
}

// replay inserts the journal's records into the database and empties it.
// Records already in the database (written before the crash, or their ID
// taken) are left out.
func (s *Store) replay(ctx context.Context, j *journal) error {
	rows, torn, err := j.read()
	if err != nil {
		return fmt.Errorf("read journal: %w", err)
	}
	for chunk := range slices.Chunk(rows, maxBatch) {
		if err := s.write(ctx, chunk); err != nil {
			return fmt.Errorf("replay journal: %w", err)
		}
	}
	if len(rows) > 0 || torn > 0 {
		inserted := 0
		for _, w := range rows {
			if w.err == nil {
				inserted++
			}
		}
		s.log.Info("sqlite store: replayed the journal", "path", s.path, "records", len(rows),
			"inserted", inserted, "in_database_already", len(rows)-inserted, "files_cut_off", torn)
	}
	if err := j.reset(); err != nil {
		return fmt.Errorf("empty journal: %w", err)
	}
	return nil
}

// adoptJournal replays the journal of a process that has gone, for a sync
// store that found it taken: its acknowledged records would otherwise wait
// for the next Open. The checkpoint loop calls it about once a second.
func (s *Store) adoptJournal(ctx context.Context) {
	j, err := openJournal(s.path)
	if err != nil || j == nil {
		return
	}
	defer j.close()
	if err := s.replay(ctx, j); err != nil {
		s.log.Warn("sqlite store: replaying the journal of a process that has gone failed; trying again", "path", s.path, "err", err)
	}
}

// create makes the file's directory and the file itself, readable by its
// owner only (SQLite gives the WAL the same mode), unless it exists.
func create(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// describe makes SQLite's terse errors say what they mean for a store.
func describe(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("not a SQLite database: %w", err)
	case sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("the database is corrupt: %w", err)
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("locked by another connection beyond the busy timeout: %w", err)
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("the disk is full: %w", err)
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
		return fmt.Errorf("cannot write the file: %w", err)
	}
	return err
}

// isConstraint reports whether err is a violated constraint: a record
// whose id is taken.
func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

// stmt is a statement prepared on the write connection.
type stmt interface {
	driver.Stmt
	driver.StmtExecContext
}

// raw runs f on the write connection's driver connection, alone.
func (s *Store) raw(f func(driver.Conn) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.isClosed() {
		return wield.ErrClosed
	}
	return s.wc.Raw(func(c any) error { return f(c.(driver.Conn)) })
}

// writing runs f with the write connection, alone: what f does between
// its statements, no other writer of this store does.
func (s *Store) writing(f func(c *sql.Conn) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.isClosed() {
		return wield.ErrClosed
	}
	return f(s.wc)
}

// open fails with [wield.ErrClosed] once Close has closed the database.
func (s *Store) open() error {
	if s.isClosed() {
		return wield.ErrClosed
	}
	return nil
}

// readable is open, and caught up with the journal: what a query of call
// records checks first.
func (s *Store) readable(ctx context.Context) error {
	if err := s.open(); err != nil {
		return err
	}
	return s.caughtUp(ctx)
}

// Path returns the file the store is kept in.
func (s *Store) Path() string { return s.path }

// Close writes every buffered record and closes the database. Records that
// could not be written before ctx ended are reported in the error. Calling
// Close again returns the first call's result.
func (s *Store) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		var err error
		if s.jcommit != nil {
			// The journal's writer may wait for room behind a database
			// that cannot be written; what it holds is in the journal, so
			// it may hand it over without room, and Close can go on.
			s.commit.Unbound()
			err = s.jcommit.Close(ctx)
		}
		if s.commit != nil {
			err = errors.Join(err, s.commit.Close(ctx))
		}
		if s.jr != nil {
			err = errors.Join(err, s.jr.close())
		}
		if n := s.lost.Load(); n > 0 {
			err = errors.Join(err, fmt.Errorf("%d call records were refused by the database: their call IDs were recorded already (see the log)", n))
		}
		close(s.closed)
		if s.ckptStop != nil {
			close(s.ckptStop)
			<-s.ckptDone
		}
		err = errors.Join(err, s.closeDBs())
		if err != nil {
			err = fmt.Errorf("close sqlite store %s: %w", s.path, err)
		}
		s.closeErr = err
	})
	return s.closeErr
}

func (s *Store) closeDBs() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var errs []error
	if s.wc != nil {
		errs = append(errs, s.wc.Raw(func(any) error {
			var errs []error
			for _, sh := range s.shapes {
				errs = append(errs, sh.close())
			}
			if s.single != nil {
				errs = append(errs, s.single.Close())
			}
			return errors.Join(errs...)
		}))
		errs = append(errs, s.wc.Close())
	}
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.Close())
	}
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	// Closing the last connection checkpoints the WAL into the database.
	errs = append(errs, s.w.Close())
	return errors.Join(errs...)
}

// Flush waits until every record saved before it is in the database, or
// ctx ends: in async mode, and in sync mode through the journal (without
// one, a returned Save is there already).
func (s *Store) Flush(ctx context.Context) error {
	if err := s.commit.Flush(ctx); err != nil {
		if errors.Is(err, commit.ErrClosed) {
			err = wield.ErrClosed
		}
		return fmt.Errorf("flush sqlite store %s: %w", s.path, err)
	}
	return nil
}

// isClosed reports whether Close has written what was buffered and is
// closing the database.
func (s *Store) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

var (
	_ wield.Storage    = (*Store)(nil)
	_ wield.CallLeases = (*Store)(nil)
)
