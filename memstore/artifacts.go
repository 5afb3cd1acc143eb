package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wieldhq/wield"
)

// Artifacts keeps artifacts and all their versions in memory; it implements
// wield.ArtifactStore.
type Artifacts struct {
	mu       sync.Mutex
	versions map[string][]wield.Artifact
}

// NewArtifacts returns an empty artifact store.
func NewArtifacts() *Artifacts { return &Artifacts{versions: map[string][]wield.Artifact{}} }

// CreateArtifact stores a as version 1; its ID must be new.
func (s *Artifacts) CreateArtifact(_ context.Context, a *wield.Artifact) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.versions[a.ID]; ok {
		return fmt.Errorf("create artifact %s: %w", a.ID, wield.ErrConflict)
	}
	cp := *a
	cp.Version = 1
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = time.Now()
	}
	s.versions[a.ID] = []wield.Artifact{cp}
	*a = cp
	return nil
}

// Artifact returns a version (0: the latest).
func (s *Artifacts) Artifact(_ context.Context, id string, version int) (*wield.Artifact, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vs := s.versions[id]
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

// PutArtifactVersion writes version base+1 if base is the latest.
func (s *Artifacts) PutArtifactVersion(_ context.Context, id string, base int, content string) (*wield.Artifact, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vs := s.versions[id]
	if len(vs) == 0 {
		return nil, fmt.Errorf("artifact %s: %w", id, wield.ErrNotFound)
	}
	if base != len(vs) {
		return nil, fmt.Errorf("artifact %s: based on version %d, latest is %d: %w", id, base, len(vs), wield.ErrConflict)
	}
	a := vs[len(vs)-1]
	a.Version, a.Content, a.CreatedAt = base+1, content, time.Now()
	s.versions[id] = append(vs, a)
	return &a, nil
}
