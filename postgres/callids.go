package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/wieldhq/wield"
)

// ReserveCallID takes a call ID a caller chose, before its call runs, for
// every server that shares the store ([wield.CallIDReserver]): it fails
// with an error wrapping [wield.ErrCallIDTaken] when a record or an
// earlier reservation has the ID. Of two servers reserving one ID at once,
// one inserts and the other waits for it and finds the ID taken. In async
// mode the records buffered are written first, so that they count.
func (s *Store) ReserveCallID(ctx context.Context, id string) error {
	if s.async {
		if err := s.Flush(ctx); err != nil {
			return fmt.Errorf("postgres: reserve call id %s: %w", id, err)
		}
	}
	tag, err := s.pool.Exec(ctx, s.sql(`INSERT INTO @call_ids (id, reserved_at)
		SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM @calls WHERE id = $1)
		ON CONFLICT (id) DO NOTHING`), id, time.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("postgres: reserve call id %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: reserve call id %s: %w", id, wield.ErrCallIDTaken)
	}
	return nil
}
