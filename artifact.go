package wield

import (
	"context"
	"errors"
	"time"
)

// Artifact is a versioned document that agents create and edit: every
// change is a new version, and old versions stay readable.
//
// An artifact belongs to its Owner, and to its conversation when it has
// one: stores find it only for its owner, so another owner's artifact is
// "not found" whatever its ID, and the artifact tools called in a
// conversation reach only the artifacts of that conversation and those of
// none (see [ArtifactVisible]).
type Artifact struct {
	ID string `json:"id"`
	// Owner is who created the artifact as the server authenticated them:
	// "key:" and the ID of the API key ([RequesterFrom]), or "" for calls
	// without one (a server without keys, the CLI, a program), which all
	// share one owner.
	Owner          string    `json:"owner,omitempty"`
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

// ArtifactStore keeps artifacts and all their versions, each owner's apart:
// an ID names an artifact within its owner, and every read and write names
// the owner, so that one owner can neither see nor change, nor learn of,
// another's. CreateArtifact stores version 1 for a.Owner and fails with
// ErrConflict when that owner has the ID already. Artifact with version 0
// returns the latest, or ErrNotFound (also for another owner's ID).
// PutArtifactVersion writes version base+1 and fails with ErrConflict
// unless base is the latest version, or ErrNotFound.
type ArtifactStore interface {
	CreateArtifact(ctx context.Context, a *Artifact) error
	Artifact(ctx context.Context, owner, id string, version int) (*Artifact, error)
	PutArtifactVersion(ctx context.Context, owner, id string, base int, content string) (*Artifact, error)
}

// ArtifactVisible reports whether a tool call made in conversation may
// reach artifact a of its own owner: a call without a conversation reaches
// them all, one in a conversation those of that conversation and those made
// outside any. A model steered by text it read in one conversation thus
// cannot reach what another conversation of the same key wrote.
func ArtifactVisible(a *Artifact, conversation string) bool {
	return conversation == "" || a.ConversationID == "" || a.ConversationID == conversation
}
