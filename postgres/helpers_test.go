package postgres

// Test helpers shared by the package's internal and external tests (the
// exported names exist only in the test binary).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultTestDSN is the server scripts/postgres-up provides.
const DefaultTestDSN = "postgres://postgres@127.0.0.1:5432/wield_test?sslmode=disable"

// ServerDSN is the database the tests use: $WIELD_TEST_POSTGRES, or the
// machine's own server.
func ServerDSN() string {
	if dsn := os.Getenv("WIELD_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return DefaultTestDSN
}

var (
	reachOnce sync.Once
	reachErr  error
)

// NeedServer skips the test when the server cannot be reached, or fails it
// when $CI is set: in CI PostgreSQL is never skipped. A missing test
// database is created.
func NeedServer(t testing.TB) {
	t.Helper()
	reachOnce.Do(func() { reachErr = reach(ServerDSN()) })
	if reachErr == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("PostgreSQL is needed in CI (run scripts/postgres-up): %v", reachErr)
	}
	t.Skipf("PostgreSQL unreachable, skipping (run scripts/postgres-up, or set WIELD_TEST_POSTGRES): %v", reachErr)
}

func reach(dsn string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return parseError(err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name
		db := cfg.Database
		cfg.Database = "postgres"
		admin, aerr := pgx.ConnectConfig(ctx, cfg)
		if aerr != nil {
			return connectError(cfg, aerr)
		}
		_, aerr = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize())
		admin.Close(ctx)
		if aerr != nil && !(errors.As(aerr, &pgErr) && pgErr.Code == "42P04") { // duplicate_database
			return aerr
		}
		cfg.Database = db
		conn, err = pgx.ConnectConfig(ctx, cfg)
	}
	if err != nil {
		return connectError(cfg, err)
	}
	return conn.Close(ctx)
}

// NewSchemaName returns a schema name no other test uses.
func NewSchemaName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t_" + hex.EncodeToString(b[:])
}

// FreshSchema returns a fresh schema name, dropped with everything in it
// when the test ends (after the stores the test closes at cleanup).
func FreshSchema(t testing.TB) string {
	t.Helper()
	NeedServer(t)
	name := NewSchemaName()
	t.Cleanup(func() { DropSchema(t, name) })
	return name
}

// DropSchema drops a test's schema.
func DropSchema(t testing.TB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, ServerDSN())
	if err != nil {
		t.Errorf("drop schema %s: %v", name, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("drop schema %s: %v", name, err)
	}
}

// OpenTest opens a store in a fresh schema (opts.Schema is replaced),
// closed and dropped when the test ends.
func OpenTest(t testing.TB, opts *Options) *Store {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Schema = FreshSchema(t)
	return OpenSchema(t, &o)
}

// OpenSchema opens a store on opts.Schema, closed when the test ends.
func OpenSchema(t testing.TB, opts *Options) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, ServerDSN(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// Exec runs sql on the store's database with the store's schema first on
// the search path, for tests that look under the store.
func (s *Store) Exec(ctx context.Context, sql string, args ...any) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, sql, args...)
		return err
	})
}

// QueryInt runs a query of one integer, as Exec does.
func (s *Store) QueryInt(ctx context.Context, sql string, args ...any) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
			return err
		}
		return tx.QueryRow(ctx, sql, args...).Scan(&n)
	})
	return n, err
}
