package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wieldhq/wield"
)

// channel is the LISTEN/NOTIFY channel of the store's decisions: one per
// schema, so that two wield installations in one database do not wake
// each other.
func (s *Store) channel() string {
	ch := "wield_decisions_" + s.schema
	if len(ch) > 63 { // PostgreSQL's identifier limit: LISTEN would cut it
		sum := sha256.Sum256([]byte(s.schema))
		ch = "wield_decisions_" + hex.EncodeToString(sum[:16])
	}
	return ch
}

// NotifyDecision implements wield.DecisionNotifier with NOTIFY: every
// server listening on the same schema hears of the decision at once.
func (s *Store) NotifyDecision(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", s.channel(), id); err != nil {
		return fmt.Errorf("postgres: notify decision %s: %w", id, err)
	}
	return nil
}

// Decisions implements wield.DecisionNotifier with LISTEN on a connection
// of its own, held until ctx ends, the store is closed, or the connection
// fails (the channel is then closed; the approval inbox listens again).
// Close ends it, so a listener whose caller forgot it cannot hold Close.
func (s *Store) Decisions(ctx context.Context) (<-chan string, error) {
	if s.life.Err() != nil {
		return nil, fmt.Errorf("postgres: listen for decisions: %w", wield.ErrClosed)
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel)
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		stop()
		cancel()
		return nil, fmt.Errorf("postgres: listen for decisions: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel()}.Sanitize()); err != nil {
		conn.Release()
		stop()
		cancel()
		return nil, fmt.Errorf("postgres: listen for decisions: %w", err)
	}
	out := make(chan string, 16)
	go func() {
		defer close(out)
		defer cancel()
		defer stop()
		defer func() {
			// The connection goes back to the pool still listening:
			// drop it instead (a clean close, bounded: the server may
			// be gone).
			raw := conn.Hijack()
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = raw.Close(cctx)
		}()
		for {
			n, err := conn.Conn().WaitForNotification(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("postgres: listening for decisions stopped", "err", err)
				}
				return
			}
			select {
			case out <- n.Payload:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
