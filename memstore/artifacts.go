package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wieldhq/wield"
)

// Artifacts keeps artifacts and all their versions in memory; it implements
// wield.ArtifactStore, each owner's artifacts apart.
type Artifacts struct {
	mu       sync.Mutex
	versions map[artifactKey][]wield.Artifact
}

// artifactKey names an artifact: an ID within its owner.
type artifactKey struct{ owner, id string }

// NewArtifacts returns an empty artifact store.
func NewArtifacts() *Artifacts { return &Artifacts{versions: map[artifactKey][]wield.Artifact{}} }

// CreateArtifact stores a as version 1; its ID must be new to its owner.
// An empty ID is given one.
func (s *Artifacts) CreateArtifact(_ context.Context, a *wield.Artifact) error {
	if a.ID == "" {
		a.ID = wield.NewID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := artifactKey{a.Owner, a.ID}
	if _, ok := s.versions[k]; ok {
		return fmt.Errorf("create artifact %s: %w", a.ID, wield.ErrConflict)
	}
	cp := *a
	cp.Version = 1
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = time.Now()
	}
	s.versions[k] = []wield.Artifact{cp}
	*a = cp
	return nil
}

// Artifact returns a version (0: the latest) of an artifact of owner.
func (s *Artifacts) Artifact(_ context.Context, owner, id string, version int) (*wield.Artifact, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vs := s.versions[artifactKey{owner, id}]
	if len(vs) == 0 {
		return nil, fmt.Errorf("artifact %s: %w", id, wield.ErrNotFound)
	}
	if version == 0 {
		version = len(vs)
	}
	if version < 1 || version > len(vs) {
		return nil, fmt.Errorf("artifact %s version %d (latest %d): %w", id, version, len(vs), wield.ErrNotFound)
	}
	a := vs[version-1]
	return &a, nil
}

// PutArtifactVersion writes version base+1 of an artifact of owner if base
// is the latest.
func (s *Artifacts) PutArtifactVersion(_ context.Context, owner, id string, base int, content string) (*wield.Artifact, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := artifactKey{owner, id}
	vs := s.versions[k]
	if len(vs) == 0 {
		return nil, fmt.Errorf("artifact %s: %w", id, wield.ErrNotFound)
	}
	if base != len(vs) {
		return nil, fmt.Errorf("artifact %s: based on version %d, latest is %d: %w", id, base, len(vs), wield.ErrConflict)
	}
	a := vs[len(vs)-1]
	a.Version, a.Content, a.CreatedAt = base+1, content, time.Now()
	s.versions[k] = append(vs, a)
	return &a, nil
}
