package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wieldhq/wield"
)

// ReserveCallID takes a call ID a caller chose, before its call runs
// ([wield.CallIDReserver]): it fails with an error wrapping
// [wield.ErrCallIDTaken] when a record or an earlier reservation has the
// ID. Records saved through the journal, or buffered in async mode, are
// written first, so a call acknowledged a moment ago counts.
func (s *Store) ReserveCallID(ctx context.Context, id string) error {
	if err := s.readable(ctx); err != nil {
		return fmt.Errorf("reserve call id %s: %w", id, err)
	}
	if s.async {
		if err := s.Flush(ctx); err != nil {
			return fmt.Errorf("reserve call id %s: %w", id, err)
		}
	}
	var n int64
	err := s.writing(func(c *sql.Conn) error {
		// One statement, by the one writer: of two reservations of an ID,
		// one inserts and the other finds it.
		r, err := c.ExecContext(ctx, `INSERT OR IGNORE INTO call_ids (id, reserved_at)
			SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM calls WHERE id = ?)`, id, time.Now().UnixMicro(), id)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("reserve call id %s: %w", id, describe(err))
	}
	if n == 0 {
		return fmt.Errorf("reserve call id %s: %w", id, wield.ErrCallIDTaken)
	}
	return nil
}
