package wield

import (
	"context"
	"errors"
	"time"
)

// Artifact is a versioned document that agents create and edit (seed 000):
// every change is a new version, and old versions stay readable.
type Artifact struct {
	ID             string    `json:"id"`
	Title          string    `json:"title,omitempty"`
	Type           string    `json:"type,omitempty"` // e.g. "markdown", "code"
	Content        string    `json:"content"`
	Version        int       `json:"version"`
	ConversationID string    `json:"conversation_id,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
}

// ErrConflict is returned when an artifact changed since the version a
// change was based on.
var ErrConflict = errors.New("wield: artifact changed since the version read")

// ArtifactStore keeps artifacts and all their versions. Artifact with
// version 0 returns the latest. PutArtifactVersion writes version base+1 and
// fails with ErrConflict unless base is the latest version.
type ArtifactStore interface {
	CreateArtifact(ctx context.Context, a *Artifact) error
	Artifact(ctx context.Context, id string, version int) (*Artifact, error)
	PutArtifactVersion(ctx context.Context, id string, base int, content string) (*Artifact, error)
}
