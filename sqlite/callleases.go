package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wieldhq/wield"
)

// HoldCallLeases takes or renews the leases owner holds on reserved call
// IDs ([wield.CallLeases]) and returns those it could not hold.
func (s *Store) HoldCallLeases(ctx context.Context, owner string, ids []string, now, until time.Time) ([]string, error) {
	if err := s.readable(ctx); err != nil {
		return nil, fmt.Errorf("hold call leases: %w", err)
	}
	var lost []string
	err := s.writing(func(c *sql.Conn) error {
		for _, id := range ids {
			r, err := c.ExecContext(ctx, `UPDATE call_ids SET lease_owner = ?, lease_until = ?
				WHERE id = ? AND (lease_owner IS NULL OR (lease_owner = ? AND lease_until >= ?))`,
				owner, until.UnixMicro(), id, owner, now.UnixMicro())
			if err != nil {
				return err
			}
			if n, err := r.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				lost = append(lost, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hold call leases: %w", describe(err))
	}
	return lost, nil
}

// CallLease returns the owner and expiry of a reserved call ID's lease
// ([wield.CallLeases]).
func (s *Store) CallLease(ctx context.Context, id string) (string, time.Time, error) {
	if err := s.readable(ctx); err != nil {
		return "", time.Time{}, fmt.Errorf("read call lease %s: %w", id, err)
	}
	var owner sql.NullString
	var until sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT lease_owner, lease_until FROM call_ids WHERE id = ?`, id).Scan(&owner, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, fmt.Errorf("read call lease %s: %w", id, wield.ErrNotFound)
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("read call lease %s: %w", id, describe(err))
	}
	if !owner.Valid || !until.Valid {
		return "", time.Time{}, nil
	}
	return owner.String, time.UnixMicro(until.Int64).UTC(), nil
}
