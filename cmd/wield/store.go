package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/postgres"
	"github.com/wieldhq/wield/sqlite"
)

// defaultDB is where records go without --db: $WIELD_DB, else
// $XDG_STATE_HOME/wield/wield.db, else ~/.local/state/wield/wield.db.
func defaultDB() string {
	if db := os.Getenv("WIELD_DB"); db != "" {
		return db
	}
	return "sqlite:" + filepath.Join(stateDir(), "wield.db")
}

// stateDir is where wield keeps its state by default: $XDG_STATE_HOME/wield,
// else ~/.local/state/wield (else the working directory).
func stateDir() string {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "."
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "wield")
}

// openStore opens the store a --db value names: sqlite:PATH (or a path),
// postgres://... or postgresql://...; async writes its records in batches,
// a call returning before its record is written.
func openStore(ctx context.Context, dsn string, async bool) (wield.Storage, error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		// wield_schema=NAME in the query names the schema of wield's tables
		// ("wield" by default), so that several installations share one
		// database; PostgreSQL itself must not see the parameter.
		opts := &postgres.Options{Async: async}
		if u, err := url.Parse(dsn); err == nil {
			q := u.Query()
			if schema := q.Get("wield_schema"); schema != "" {
				opts.Schema = schema
				q.Del("wield_schema")
				u.RawQuery = q.Encode()
				dsn = u.String()
			}
		}
		s, err := postgres.Open(ctx, dsn, opts)
		if err != nil {
			return nil, err
		}
		return s, nil
	case strings.HasPrefix(dsn, "sqlite:"):
		dsn = strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
	case strings.Contains(dsn, "://"):
		return nil, usagef("--db %q: use sqlite:PATH or postgres://...", dsn)
	}
	if dsn == "" {
		return nil, usagef("--db sqlite: needs a path, like sqlite:./wield.db")
	}
	s, err := sqlite.Open(ctx, dsn, &sqlite.Options{Async: async})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// withStore runs fn with the store of --db, closing it afterwards: first
// what setup started over it (the engine's approval inbox, relays,
// limiters, MCP imports), then the store, so that nothing still holds a
// connection its Close waits for.
func (a *app) withStore(ctx context.Context, fn func(wield.Storage) error) error {
	s, err := openStore(ctx, a.db, false)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	ferr := fn(s)
	a.close()
	if cerr := s.Close(context.WithoutCancel(ctx)); cerr != nil && ferr == nil {
		ferr = fmt.Errorf("close store: %w", cerr)
	}
	return ferr
}
