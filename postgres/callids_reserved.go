package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wieldhq/wield"
)

// CallIDReservedAt returns when a call ID was reserved, by any server
// sharing the store ([wield.CallIDReservations]), or an error wrapping
// [wield.ErrNotFound].
func (s *Store) CallIDReservedAt(ctx context.Context, id string) (time.Time, error) {
	var ns int64
	err := s.pool.QueryRow(ctx, s.sql(`SELECT reserved_at FROM @call_ids WHERE id = $1`), id).Scan(&ns)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, fmt.Errorf("postgres: call id %s: %w", id, wield.ErrNotFound)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: call id %s: %w", id, err)
	}
	return time.Unix(0, ns).UTC(), nil
}
