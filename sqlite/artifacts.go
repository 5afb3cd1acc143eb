package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wieldhq/wield"
)

const artifactColumns = `owner, id, version, title, type, content, conversation_id, created_at`

// CreateArtifact stores version 1 of a new artifact of a.Owner and sets
// a.Version to 1; an empty ID is given one and a zero CreatedAt the present
// time. An ID the owner has already fails with an error wrapping
// [wield.ErrConflict]; another owner's is no hindrance.
func (s *Store) CreateArtifact(ctx context.Context, a *wield.Artifact) error {
	if a == nil {
		return errors.New("create artifact: nil artifact")
	}
	if a.ID == "" {
		a.ID = wield.NewID()
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now()
	}
	err := s.writing(func(c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `INSERT INTO artifact_versions (`+artifactColumns+`) VALUES (?, ?, 1, ?, ?, ?, ?, ?)`,
			a.Owner, a.ID, a.Title, a.Type, a.Content, a.ConversationID, a.CreatedAt.UnixMicro())
		return err
	})
	if isConstraint(err) {
		return fmt.Errorf("create artifact %s: the id is taken: %w", a.ID, wield.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("create artifact %s: %w", a.ID, describe(err))
	}
	a.Version = 1
	return nil
}

// Artifact returns a version of an artifact of owner, the latest when
// version is 0, or an error wrapping [wield.ErrNotFound] (another owner's
// artifact included).
func (s *Store) Artifact(ctx context.Context, owner, id string, version int) (*wield.Artifact, error) {
	if err := s.open(); err != nil {
		return nil, fmt.Errorf("read artifact %s: %w", id, err)
	}
	var row *sql.Row
	if version == 0 {
		row = s.r.QueryRowContext(ctx, `SELECT `+artifactColumns+` FROM artifact_versions
			WHERE owner = ? AND id = ? ORDER BY version DESC LIMIT 1`, owner, id)
	} else {
		row = s.r.QueryRowContext(ctx, `SELECT `+artifactColumns+` FROM artifact_versions
			WHERE owner = ? AND id = ? AND version = ?`, owner, id, version)
	}
	a, err := scanArtifact(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read artifact %s version %d: %w", id, version, wield.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read artifact %s version %d: %w", id, version, describe(err))
	}
	return a, nil
}

// PutArtifactVersion stores content as version base+1 of an artifact of
// owner, with the title, type and conversation of version base. It fails
// with an error wrapping [wield.ErrConflict] unless base is the latest
// version (of two writers from the same base exactly one wins), or
// [wield.ErrNotFound] for an unknown artifact (another owner's included).
func (s *Store) PutArtifactVersion(ctx context.Context, owner, id string, base int, content string) (*wield.Artifact, error) {
	var a *wield.Artifact
	var latest sql.NullInt64
	err := s.writing(func(c *sql.Conn) error {
		// One statement, by the one writer: the check and the write cannot
		// be separated.
		var err error
		a, err = scanArtifact(c.QueryRowContext(ctx, `INSERT INTO artifact_versions (`+artifactColumns+`)
			SELECT owner, id, version + 1, title, type, ?, conversation_id, ? FROM artifact_versions
			WHERE owner = ? AND id = ? AND version = ?
				AND NOT EXISTS (SELECT 1 FROM artifact_versions WHERE owner = ? AND id = ? AND version > ?)
			RETURNING `+artifactColumns, content, time.Now().UnixMicro(), owner, id, base, owner, id, base))
		if errors.Is(err, sql.ErrNoRows) {
			return c.QueryRowContext(ctx, `SELECT max(version) FROM artifact_versions WHERE owner = ? AND id = ?`, owner, id).Scan(&latest)
		}
		return err
	})
	switch {
	case isConstraint(err):
		return nil, fmt.Errorf("put artifact %s version %d: another writer made it first: %w", id, base+1, wield.ErrConflict)
	case err != nil:
		return nil, fmt.Errorf("put artifact %s version %d: %w", id, base+1, describe(err))
	case a != nil:
		return a, nil
	case !latest.Valid:
		return nil, fmt.Errorf("put artifact %s: %w", id, wield.ErrNotFound)
	}
	return nil, fmt.Errorf("put artifact %s on version %d: the latest is %d: %w", id, base, latest.Int64, wield.ErrConflict)
}

func scanArtifact(row *sql.Row) (*wield.Artifact, error) {
	var a wield.Artifact
	var created int64
	if err := row.Scan(&a.Owner, &a.ID, &a.Version, &a.Title, &a.Type, &a.Content, &a.ConversationID, &created); err != nil {
		return nil, err
	}
	a.CreatedAt = time.UnixMicro(created)
	return &a, nil
}
