package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// ErrSchemaTooNew is returned by [Open] when the database's schema was
// migrated by a newer build of wield than this one: this build could
// misread it, so it does not touch it.
var ErrSchemaTooNew = errors.New("schema is newer than this build of wield")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file of migrations/: NNNN_name.sql, applied once, in
// order of NNNN.
type migration struct {
	version int
	name    string
	sql     string
}

var migrations = mustLoadMigrations(migrationFiles, "migrations")

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads the migrations of dir, which must be numbered 1, 2,
// 3, ... without gaps.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration %s: name is not NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: m[2], sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %04d_%s: expected version %d (versions start at 1, without gaps or repeats)", m.version, m.name, i+1)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no migrations in %s", dir)
	}
	return out, nil
}

func mustLoadMigrations(fsys fs.FS, dir string) []migration {
	m, err := loadMigrations(fsys, dir)
	if err != nil {
		panic("postgres: embedded migrations: " + err.Error())
	}
	return m
}

// lockClass is the first key of the advisory lock that serialises
// migrations ("wild"); the second is a hash of the schema's name.
const lockClass = 0x77696c64

// migrate creates the schema if it is missing and applies the migrations it
// has not seen, all in one transaction holding an advisory lock: servers
// opening the store at once wait for each other, and a failed migration
// leaves the schema as it was.
func migrate(ctx context.Context, conn *pgx.Conn, schema string, migs []migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate schema %s: %w", schema, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if err := migrateTx(ctx, tx, schema, migs); err != nil {
		return fmt.Errorf("migrate schema %s: %w", schema, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate schema %s: commit: %w", schema, err)
	}
	return nil
}

func migrateTx(ctx context.Context, tx pgx.Tx, schema string, migs []migration) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", lockClass, schema); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	quoted := pgx.Identifier{schema}.Sanitize()
	// CREATE SCHEMA IF NOT EXISTS would need the right to create schemas
	// even when the schema is there.
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA "+quoted); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+quoted); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("create schema_version: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_version").Scan(&current); err != nil {
		return fmt.Errorf("read schema_version: %w", err)
	}
	latest := migs[len(migs)-1].version
	if current > latest {
		return fmt.Errorf("the database is at version %d and this build of wield knows versions up to %d: upgrade wield (or use another schema): %w", current, latest, ErrSchemaTooNew)
	}
	for _, m := range migs[current:] {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("apply %04d_%s.sql (from version %d): %w", m.version, m.name, current, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_version (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
			return fmt.Errorf("record version %d: %w", m.version, err)
		}
	}
	return nil
}
