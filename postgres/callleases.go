package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wieldhq/wield"
)

// HoldCallLeases takes or renews the leases owner holds on reserved call
// IDs, for every server sharing the store ([wield.CallLeases]), and
// returns those it could not hold. Each ID is one conditional update: of
// a renewal and another server's look at an expired lease, the lease is
// either renewed before it expired or stays expired.
func (s *Store) HoldCallLeases(ctx context.Context, owner string, ids []string, now, until time.Time) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, s.sql(`UPDATE @call_ids SET lease_owner = $1, lease_until = $2
		WHERE id = ANY($3) AND (lease_owner IS NULL OR (lease_owner = $1 AND lease_until >= $4))
		RETURNING id`), owner, until.UnixNano(), ids, now.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("postgres: hold call leases: %w", err)
	}
	held, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: hold call leases: %w", err)
	}
	got := make(map[string]bool, len(held))
	for _, id := range held {
		got[id] = true
	}
	var lost []string
	for _, id := range ids {
		if !got[id] {
			lost = append(lost, id)
		}
	}
	return lost, nil
}

// CallLease returns the owner and expiry of a reserved call ID's lease
// ([wield.CallLeases]).
func (s *Store) CallLease(ctx context.Context, id string) (string, time.Time, error) {
	var owner *string
	var until *int64
	err := s.pool.QueryRow(ctx, s.sql(`SELECT lease_owner, lease_until FROM @call_ids WHERE id = $1`), id).Scan(&owner, &until)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", time.Time{}, fmt.Errorf("postgres: call lease %s: %w", id, wield.ErrNotFound)
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("postgres: call lease %s: %w", id, err)
	}
	if owner == nil || until == nil {
		return "", time.Time{}, nil
	}
	return *owner, time.Unix(0, *until).UTC(), nil
}
