// Package memstore keeps call records and approvals in memory: for tests,
// for examples, and for programs that need no durable memory. Everything is
// lost when the process ends; use package sqlite or postgres for records
// that must survive.
package memstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/wieldhq/wield"
)

// Store keeps records in memory, in the order they were saved, up to a
// maximum (the oldest are dropped past it, and counted).
type Store struct {
	mu      sync.RWMutex
	recs    []*wield.Record
	max     int
	dropped int64
}

// New returns a store that keeps at most max records; max <= 0 means 100,000.
func New(max int) *Store {
	if max <= 0 {
		max = 100_000
	}
	return &Store{max: max}
}

// Save keeps a copy of the record, so a caller that changes its result
// afterwards does not change the record.
func (s *Store) Save(_ context.Context, r *wield.Record) error {
	cp := *r
	if r.Result != nil {
		res := *r.Result
		cp.Result = &res
	}
	r = &cp
	s.mu.Lock()
	if len(s.recs) >= s.max {
		n := len(s.recs) - s.max + 1
		s.recs = slices.Delete(s.recs, 0, n)
		s.dropped += int64(n)
	}
	s.recs = append(s.recs, r)
	s.mu.Unlock()
	return nil
}

// Filter selects records; empty fields do not filter.
type Filter struct {
	ConversationID string
	Tool           string
	OK             *bool
	Since          time.Time
	Limit          int // newest first when set
}

// Records returns the records that match f, oldest first (or the newest
// Limit of them).
func (s *Store) Records(f Filter) []*wield.Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*wield.Record
	for _, r := range s.recs {
		if f.ConversationID != "" && r.Call.Caller.ConversationID != f.ConversationID {
			continue
		}
		if f.Tool != "" && r.Call.Tool != f.Tool {
			continue
		}
		if f.OK != nil && r.Result.OK != *f.OK {
			continue
		}
		if !f.Since.IsZero() && r.QueuedAt.Before(f.Since) {
			continue
		}
		out = append(out, r)
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out
}

// Len returns the number of records kept, and how many were dropped.
func (s *Store) Len() (kept int, dropped int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.recs), s.dropped
}

// Replay returns the first successful record of tool with the idempotency
// key, or nil.
func (s *Store) Replay(_ context.Context, tool, key string) (*wield.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.recs {
		if r.Call.Tool == tool && r.Call.IdempotencyKey == key && r.Result.OK {
			return r, nil
		}
	}
	return nil, nil
}
