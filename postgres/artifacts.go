package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wieldhq/wield"
)

const artifactColumns = `owner, id, version, title, type, content, conversation_id, created_at`

// CreateArtifact stores version 1 of a new artifact of a.Owner. An empty ID
// is given one (wield.NewID) and a zero CreatedAt the present time;
// a.Version is set to 1. An ID the owner has already fails with an error
// wrapping [wield.ErrConflict]; another owner's is no hindrance.
func (s *Store) CreateArtifact(ctx context.Context, a *wield.Artifact) error {
	if a.ID == "" {
		a.ID = wield.NewID()
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now()
	}
	created, err := nanos(a.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create artifact %s: created_at: %w", a.ID, err)
	}
	a.Version = 1
	_, err = s.pool.Exec(ctx, s.sql(`INSERT INTO @artifacts (`+artifactColumns+`) VALUES ($1, $2, 1, $3, $4, $5, $6, $7)`),
		a.Owner, a.ID, a.Title, a.Type, a.Content, a.ConversationID, created)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("postgres: create artifact %s: the ID is taken: %w", a.ID, wield.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("postgres: create artifact %s: %w", a.ID, err)
	}
	return nil
}

// Artifact returns a version of an artifact of owner, the latest when
// version is 0, or an error wrapping [wield.ErrNotFound] (another owner's
// artifact included).
func (s *Store) Artifact(ctx context.Context, owner, id string, version int) (*wield.Artifact, error) {
	var row pgx.Row
	if version == 0 {
		row = s.pool.QueryRow(ctx, s.sql(`SELECT `+artifactColumns+` FROM @artifacts WHERE owner = $1 AND id = $2 ORDER BY version DESC LIMIT 1`), owner, id)
	} else {
		row = s.pool.QueryRow(ctx, s.sql(`SELECT `+artifactColumns+` FROM @artifacts WHERE owner = $1 AND id = $2 AND version = $3`), owner, id, version)
	}
	a, err := scanArtifact(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: artifact %s version %d: %w", id, version, wield.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: artifact %s version %d: %w", id, version, err)
	}
	return a, nil
}

// PutArtifactVersion stores content as version base+1 of an artifact of
// owner, with its title, type and conversation. It fails with an error
// wrapping [wield.ErrConflict] unless base is the latest version (of two
// writers from the same base, one wins: (owner, id, version) is the primary
// key), or [wield.ErrNotFound] for an unknown artifact (another owner's
// included).
func (s *Store) PutArtifactVersion(ctx context.Context, owner, id string, base int, content string) (*wield.Artifact, error) {
	row := s.pool.QueryRow(ctx, s.sql(`INSERT INTO @artifacts (`+artifactColumns+`)
		SELECT owner, id, version + 1, title, type, $4, conversation_id, $5 FROM @artifacts
		WHERE owner = $1 AND id = $2 AND version = $3
			AND NOT EXISTS (SELECT 1 FROM @artifacts WHERE owner = $1 AND id = $2 AND version > $3)
		RETURNING `+artifactColumns), owner, id, base, content, time.Now().UnixNano())
	a, err := scanArtifact(row)
	if err == nil {
		return a, nil
	}
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505":
		return nil, fmt.Errorf("postgres: put artifact %s version %d: another writer made it first: %w", id, base+1, wield.ErrConflict)
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("postgres: put artifact %s version %d: %w", id, base+1, err)
	}
	var latest *int32
	if err := s.pool.QueryRow(ctx, s.sql(`SELECT max(version) FROM @artifacts WHERE owner = $1 AND id = $2`), owner, id).Scan(&latest); err != nil {
		return nil, fmt.Errorf("postgres: put artifact %s version %d: %w", id, base+1, err)
	}
	if latest == nil {
		return nil, fmt.Errorf("postgres: put artifact %s: %w", id, wield.ErrNotFound)
	}
	return nil, fmt.Errorf("postgres: put artifact %s on version %d: the latest is %d: %w", id, base, *latest, wield.ErrConflict)
}

func scanArtifact(row pgx.Row) (*wield.Artifact, error) {
	var (
		a       wield.Artifact
		version int32
		created int64
	)
	if err := row.Scan(&a.Owner, &a.ID, &version, &a.Title, &a.Type, &a.Content, &a.ConversationID, &created); err != nil {
		return nil, err
	}
	a.Version = int(version)
	a.CreatedAt = time.Unix(0, created).UTC()
	return &a, nil
}
