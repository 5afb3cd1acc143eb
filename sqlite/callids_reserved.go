package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wieldhq/wield"
)

// CallIDReservedAt returns when a call ID was reserved
// ([wield.CallIDReservations]), or an error wrapping [wield.ErrNotFound].
func (s *Store) CallIDReservedAt(ctx context.Context, id string) (time.Time, error) {
	if err := s.readable(ctx); err != nil {
		return time.Time{}, fmt.Errorf("read call id %s: %w", id, err)
	}
	var us int64
	err := s.r.QueryRowContext(ctx, `SELECT reserved_at FROM call_ids WHERE id = ?`, id).Scan(&us)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("read call id %s: %w", id, wield.ErrNotFound)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read call id %s: %w", id, describe(err))
	}
	return time.UnixMicro(us).UTC(), nil
}
