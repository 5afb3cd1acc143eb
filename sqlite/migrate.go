package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file of migrations/: NNNN_name.sql brings the schema to
// version NNNN.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations are the embedded migrations in order. Their versions run 1, 2,
// 3, ... without a gap; anything else is a mistake in this package.
var migrations = loadMigrations(migrationFiles)

func loadMigrations(fsys fs.FS) []migration {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	var out []migration
	for i, name := range names { // fs.Glob sorts
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			panic(fmt.Sprintf("sqlite: migration %s: want the name %04d_<what>.sql", name, i+1))
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			panic(err)
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(b)})
	}
	return out
}

// SchemaVersion is the schema version this package writes: the number of
// its migrations.
func SchemaVersion() int { return len(migrations) }

// migrate applies the migrations the database lacks, all in one
// transaction, and refuses a database from a newer wield.
func (s *Store) migrate(ctx context.Context) error {
	return migrateTo(ctx, s, len(migrations))
}

// migrateTo brings the schema to version target (tests build old
// databases with a smaller target).
func migrateTo(ctx context.Context, s *Store, target int) error {
	tx, err := s.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: one migrator at a time
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return err
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&current); err != nil {
		return err
	}
	if current > len(migrations) {
		return fmt.Errorf("the database has schema version %d, newer than version %d that this build of wield knows: use a newer wield", current, len(migrations))
	}
	for _, m := range migrations[min(current, target):target] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate schema from version %d to %d (%s): %w", m.version-1, m.version, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UnixMicro()); err != nil {
			return err
		}
	}
	return tx.Commit()
}
