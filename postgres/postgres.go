// Package postgres keeps wield's durable memory in PostgreSQL: call records
// with their queries and statistics, idempotent replays, approvals and
// artifacts. It is the store for several wield servers sharing one database
// (an approval queued by one can be decided through another); a single
// process is usually better served by package sqlite.
//
// # Opening
//
//	s, err := postgres.Open(ctx, "postgres://wield@db.internal:5432/wield", nil)
//	if err != nil {
//		return err // names host and port, never the password
//	}
//	defer s.Close(ctx)
//	e := engine.New(reg, &engine.Options{Store: s})
//
// Open creates the schema (Options.Schema, "wield" by default) if it is
// missing and applies the embedded migrations (migrations/NNNN_name.sql) in
// order, in one transaction holding an advisory lock, so servers starting
// together do not race and a failed migration changes nothing; the versions
// applied are in the table schema_version. A schema newer than this build
// is refused ([ErrSchemaTooNew]). Statements name tables with their schema,
// so the store needs no search_path and works behind poolers such as
// PgBouncer (in transaction mode, add default_query_exec_mode=exec to the
// DSN unless the pooler keeps prepared statements).
//
// # Durability
//
// In sync mode (the default) Save returns once the record is committed.
// Concurrent saves share commits: while one batch is written, the records
// arriving meanwhile gather into the next, written with one COPY (one
// transaction), so the number of commits grows with time, not with callers.
// A batch that fails fails the Save of each of its records; a record whose
// call ID is already stored is refused alone ([ErrDuplicateID]).
//
// In async mode Save returns at once, and records are written in batches of
// up to 512 every Options.FlushInterval (50 ms), or as soon as 512 wait.
// The loss window: if the process dies (a crash, SIGKILL, power loss), the
// records saved in about the last FlushInterval are lost, and so are those
// a failing database kept from being written meanwhile; a failed write is
// retried with backoff, never dropped, and past 65,536 buffered records
// Save waits for room. [Store.Flush] waits for what is buffered, and
// [Store.Close] writes it all. Reads see a record once it is written.
//
// # Layout
//
// Times are stored as Unix nanoseconds, so they read back exactly; the
// arguments and outputs are stored byte for byte (bytea). Records are read
// newest first by call ID, which wield.NewID makes time-ordered (to the
// millisecond), and the cursor of a page is the last ID it returned.
// Artifacts are kept per owner: (owner, id, version) is their key, and every
// query names the owner. Indexes serve one
// conversation, tool or caller newest first, failures, time ranges, and
// idempotent replays.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/commit"
)

// Options configure a [Store]; nil or zero fields mean the defaults.
type Options struct {
	// Schema holds the store's tables ("wield"). It is created if missing.
	Schema string
	// Async makes Save return before the record is written; see the
	// package documentation for the loss window.
	Async bool
	// FlushInterval is how long an async record may wait to be written (50 ms).
	FlushInterval time.Duration
	// Logger receives failed async writes ("record writes failing, retrying")
	// and records refused in async mode; nil means slog.Default().
	Logger *slog.Logger
	// MaxConns bounds the connection pool: max(4, 2×GOMAXPROCS) by default.
	// Records are written over one connection at a time; the others serve
	// reads, approvals and artifacts.
	MaxConns int32
}

// DefaultSchema is the schema of the store's tables when Options.Schema is empty.
const DefaultSchema = "wield"

// Store is a [wield.Storage] in PostgreSQL. It is safe for concurrent use,
// by one process or by many sharing the database.
type Store struct {
	pool   *pgxpool.Pool
	schema string
	async  bool
	log    *slog.Logger
	commit *commit.Committer[*row]

	// Async progress, for Flush: records handed to the committer, and
	// records it has processed (written, or refused one by one).
	added    atomic.Uint64
	progress struct {
		sync.Mutex
		done    uint64
		changed chan struct{}
	}

	// Statements name tables with their schema (not search_path, which
	// poolers such as PgBouncer do not keep): names turns @calls into
	// "schema".calls, and stmts keeps what it made.
	names *strings.Replacer
	stmts sync.Map // template → statement

	refused atomic.Int64 // async records refused by the database (duplicate IDs)

	// life ends when Close begins: the listeners of Decisions end with it,
	// so that a caller that forgot to stop one cannot keep Close waiting.
	life    context.Context
	endLife context.CancelFunc

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// closeWait bounds how long Close waits for connections still in use when
// its context has no deadline.
const closeWait = 10 * time.Second

var (
	_ wield.Storage    = (*Store)(nil)
	_ wield.CallLeases = (*Store)(nil)
)

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value string, as libpq takes), creates the schema if it is missing and
// brings it to this build's version. Errors name the server's host and port,
// never the DSN's secrets; a schema newer than this build is refused with an
// error naming both versions.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxConns <= 0 {
		o.MaxConns = int32(max(4, 2*runtime.GOMAXPROCS(0)))
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", parseError(err))
	}
	cfg.MaxConns = o.MaxConns
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "wield"
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, connectError(cfg.ConnConfig, err)
	}
	err = migrate(ctx, conn.Conn(), o.Schema, migrations)
	conn.Release()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	s := &Store{pool: pool, schema: o.Schema, async: o.Async, log: o.Logger, closed: make(chan struct{})}
	s.life, s.endLife = context.WithCancel(context.Background())
	q := pgx.Identifier{o.Schema}.Sanitize() + "."
	s.names = strings.NewReplacer("@call_ids", q+"call_ids", "@calls", q+"calls", "@approvals", q+"approvals", "@artifacts", q+"artifacts")
	s.progress.changed = make(chan struct{})
	s.commit = commit.New(s.write, commit.Options{
		Async:    o.Async,
		Interval: o.FlushInterval,
		OnError: func(err error) {
			if o.Async {
				s.log.Error("postgres: record writes failing, retrying", "err", err)
			}
		},
	})
	return s, nil
}

// Close writes the records still buffered, ends the listeners of
// [Store.Decisions] and closes the connections. It gives up when ctx ends
// (after 10 s when ctx has no deadline), and then says how many records
// were not written, or that connections were still in use (a query that
// did not return; they are closed when it does). It also reports async
// records the database refused (logged as they were). Calls after the
// first return the first's result.
func (s *Store) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, closeWait)
			defer cancel()
		}
		var errs []error
		if err := s.commit.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%d records not written: %w", s.commit.Pending(), err))
		}
		if n := s.refused.Load(); n > 0 {
			errs = append(errs, fmt.Errorf("%d buffered records were refused: %w (see the log)", n, ErrDuplicateID))
		}
		close(s.closed)
		s.endLife()
		// pgxpool.Close waits for every connection in use to come back;
		// a query that never returns must not hold Close for ever.
		pooled := make(chan struct{})
		go func() {
			defer close(pooled)
			s.pool.Close()
		}()
		select {
		case <-pooled:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("connections still in use: %w", ctx.Err()))
		}
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("postgres: close: %w", err)
		}
	})
	return s.closeErr
}

// Flush waits until every record saved before it is written, or ctx ends.
// In sync mode there is nothing to wait for. It does not hurry the writer:
// a record may wait up to Options.FlushInterval.
func (s *Store) Flush(ctx context.Context) error {
	if !s.async {
		return nil
	}
	target := s.added.Load()
	for {
		s.progress.Lock()
		done, ch := s.progress.done, s.progress.changed
		s.progress.Unlock()
		if done >= target {
			return nil
		}
		select {
		case <-ch:
		case <-s.closed:
			return fmt.Errorf("postgres: flush: %w", wield.ErrClosed)
		case <-ctx.Done():
			return fmt.Errorf("postgres: flush: %w", errors.Join(ctx.Err(), s.commit.Err()))
		}
	}
}

// advance counts n records as processed and wakes Flush.
func (s *Store) advance(n int) {
	s.progress.Lock()
	s.progress.done += uint64(n)
	close(s.progress.changed)
	s.progress.changed = make(chan struct{})
	s.progress.Unlock()
}

// sql returns the statement of a template that names tables @calls,
// @approvals and @artifacts.
func (s *Store) sql(template string) string {
	if q, ok := s.stmts.Load(template); ok {
		return q.(string)
	}
	q := s.names.Replace(template)
	s.stmts.Store(template, q)
	return q
}

// Schema returns the name of the schema that holds the store's tables.
func (s *Store) Schema() string { return s.schema }

// connectError says which server could not be reached and why, without
// the DSN: the error of pgconn names the user and database, and its causes
// may carry more.
func connectError(cfg *pgx.ConnConfig, err error) error {
	addr := cfg.Host
	if !strings.HasPrefix(addr, "/") {
		addr = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	} else {
		addr = fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	var (
		pgErr *pgconn.PgError
		opErr *net.OpError
		why   string
	)
	switch {
	case errors.As(err, &pgErr):
		why = fmt.Sprintf("the server refused: %s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	case errors.As(err, &opErr):
		why = opErr.Err.Error()
		if errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(why, "connection refused") {
			why += " (is PostgreSQL running there?)"
		}
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		why = "timed out"
	case errors.Is(err, context.Canceled):
		why = "canceled"
	default:
		// Below pgconn's ConnectError, which names the user and database,
		// each address tried says what went wrong there.
		why = "connection failed"
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) && errors.Unwrap(ce) != nil {
			why = strings.ReplaceAll(errors.Unwrap(ce).Error(), "\n", "; ")
		}
	}
	return &openError{addr: addr, why: why, err: err}
}

// openError keeps the cause for errors.Is and errors.As, but shows only the
// address and the reason: the cause's text names the DSN's user and database.
type openError struct {
	addr, why string
	err       error
}

func (e *openError) Error() string {
	return fmt.Sprintf("postgres: open: cannot connect to %s: %s", e.addr, e.why)
}

func (e *openError) Unwrap() error { return e.err }

// parseError describes a DSN that does not parse, without quoting it:
// pgconn's message quotes the DSN with the password masked, but cannot
// always tell where the password is, and a URL's parse error quotes it whole.
func parseError(err error) error {
	var pce *pgconn.ParseConfigError
	if !errors.As(err, &pce) {
		return errors.New("invalid DSN")
	}
	// The message is "cannot parse `DSN`: why" or "... why (cause)".
	msg := pce.Error()
	cause := errors.Unwrap(pce)
	if cause != nil {
		msg = strings.TrimSuffix(msg, " ("+cause.Error()+")")
	}
	if i := strings.LastIndex(msg, "`: "); i >= 0 {
		msg = msg[i+len("`: "):]
	} else {
		msg = "want postgres://user@host:port/database or key=value pairs"
	}
	var ue *url.Error
	if errors.As(cause, &ue) {
		cause = ue.Err
	}
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return fmt.Errorf("invalid DSN: %s", msg)
}
