package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wieldhq/wield"
)

const approvalColumns = `id, call_id, tool, caller, arguments, digest, created_at, expires_at, status,
	approved, decided_by, reason, decided_at, claimed_at, timeout, requested_by, note`

// CreateApproval keeps a pending approval. A request without an ID gets
// one, and one without a creation time gets the present. It fails when the
// ID is taken.
func (s *Store) CreateApproval(ctx context.Context, req *wield.ApprovalRequest) error {
	if req == nil {
		return errors.New("create approval: nil request")
	}
	if req.ID == "" {
		req.ID = wield.NewID()
	}
	if req.CreatedAt.IsZero() {
		req.CreatedAt = time.Now()
	}
	caller, err := json.Marshal(req.Caller)
	if err != nil {
		return fmt.Errorf("create approval %s: encode caller: %w", req.ID, err)
	}
	err = s.writing(func(c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `INSERT INTO approvals (id, call_id, tool, caller, arguments, digest,
			created_at, expires_at, status, timeout, requested_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
			req.ID, req.CallID, req.Tool, string(caller), blob(req.Arguments), req.Digest,
			req.CreatedAt.UnixMicro(), micros(req.ExpiresAt), timeoutNanos(req.Timeout), text(req.RequestedBy))
		return err
	})
	if isConstraint(err) {
		return fmt.Errorf("create approval %s: an approval with this id exists", req.ID)
	}
	if err != nil {
		return fmt.Errorf("create approval %s: %w", req.ID, describe(err))
	}
	return nil
}

// DecideApproval records d on a pending approval as one conditional UPDATE:
// of decisions at once, exactly one wins. It fails with
// [wield.ErrAlreadyDecided] when the approval was decided or has expired
// (it is then marked expired), with [wield.ErrDigestMismatch] when digest
// is not empty and not the approval's, and with [wield.ErrNotFound].
func (s *Store) DecideApproval(ctx context.Context, id, digest string, d wield.Decision) (*wield.Approval, error) {
	var a *wield.Approval
	var won bool
	err := s.writing(func(c *sql.Conn) error {
		now := time.Now()
		status := wield.ApprovalDenied
		if d.Approved {
			status = wield.ApprovalApproved
		}
		res, err := c.ExecContext(ctx, `UPDATE approvals
			SET status = ?, approved = ?, decided_by = ?, reason = ?, decided_at = ?, note = NULLIF(?, '')
			WHERE id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?) AND (? = '' OR digest = ?)`,
			string(status), boolInt(d.Approved), d.By, d.Reason, now.UnixMicro(), d.Note, id, now.UnixMicro(), digest, digest)
		if err != nil {
			return describe(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return describe(err)
		}
		if won = n == 1; !won {
			// Lost: an expired one is marked so, for good, and then read
			// to say why.
			if _, err := c.ExecContext(ctx, `UPDATE approvals SET status = 'expired'
				WHERE id = ? AND status = 'pending' AND expires_at <= ?`, id, now.UnixMicro()); err != nil {
				return describe(err)
			}
		}
		a, err = s.approval(ctx, c, id)
		return err
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("decide approval %s: %w", id, err)
	case won:
		return a, nil
	case a.Status != wield.ApprovalPending:
		return nil, fmt.Errorf("decide approval %s: it is %s: %w", id, a.Status, wield.ErrAlreadyDecided)
	}
	return nil, fmt.Errorf("decide approval %s: %w", id, wield.ErrDigestMismatch)
}

// ClaimApproval marks a decided or expired approval as acted on, once: of
// two claims at once exactly one wins (an expired one is then marked
// expired for good). The others, and a claim of a pending approval, fail
// with [wield.ErrAlreadyDecided]; an unknown ID fails with
// [wield.ErrNotFound].
func (s *Store) ClaimApproval(ctx context.Context, id string) error {
	var a *wield.Approval
	err := s.writing(func(c *sql.Conn) error {
		now := time.Now().UnixMicro()
		res, err := c.ExecContext(ctx, `UPDATE approvals
			SET claimed_at = ?, status = CASE WHEN status = 'pending' THEN 'expired' ELSE status END
			WHERE id = ? AND claimed_at IS NULL
			AND (status IN ('approved', 'denied', 'expired') OR (status = 'pending' AND expires_at <= ?))`, now, id, now)
		if err != nil {
			return describe(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return describe(err)
		}
		a, err = s.approval(ctx, c, id)
		return err
	})
	switch {
	case err != nil:
		return fmt.Errorf("claim approval %s: %w", id, err)
	case a == nil:
		return nil
	case !a.ClaimedAt.IsZero():
		return fmt.Errorf("claim approval %s: claimed already: %w", id, wield.ErrAlreadyDecided)
	}
	return fmt.Errorf("claim approval %s: it is %s, not decided yet: %w", id, a.Status, wield.ErrAlreadyDecided)
}

// UnclaimedApprovals lists the approvals no run has acted on, oldest first:
// the pending ones and those decided or expired but not claimed (an index
// holds only these).
func (s *Store) UnclaimedApprovals(ctx context.Context) ([]*wield.Approval, error) {
	if err := s.open(); err != nil {
		return nil, fmt.Errorf("list unclaimed approvals: %w", err)
	}
	now := time.Now()
	rows, err := s.r.QueryContext(ctx, `SELECT `+approvalColumns+` FROM approvals INDEXED BY approvals_unclaimed
		WHERE claimed_at IS NULL ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list unclaimed approvals: %w", describe(err))
	}
	as, err := scanApprovals(rows, now)
	if err != nil {
		return nil, fmt.Errorf("list unclaimed approvals: %w", err)
	}
	return as, nil
}

// Approval returns one approval; a pending one past its expiry reads as
// expired. It fails with [wield.ErrNotFound].
func (s *Store) Approval(ctx context.Context, id string) (*wield.Approval, error) {
	if err := s.open(); err != nil {
		return nil, fmt.Errorf("read approval %s: %w", id, err)
	}
	a, err := s.approval(ctx, s.r, id)
	if err != nil {
		return nil, fmt.Errorf("read approval %s: %w", id, err)
	}
	return a, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *Store) approval(ctx context.Context, db querier, id string) (*wield.Approval, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id)
	if err != nil {
		return nil, describe(err)
	}
	as, err := scanApprovals(rows, time.Now())
	if err != nil {
		return nil, err
	}
	if len(as) == 0 {
		return nil, wield.ErrNotFound
	}
	return as[0], nil
}

// Approvals lists the approvals with the status (all of them when status is
// empty), oldest first.
func (s *Store) Approvals(ctx context.Context, status wield.ApprovalStatus) ([]*wield.Approval, error) {
	if err := s.open(); err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	now := time.Now().UnixMicro()
	query := `SELECT ` + approvalColumns + ` FROM approvals`
	var args []any
	switch status {
	case "":
	case wield.ApprovalPending:
		query += ` WHERE status = 'pending' AND (expires_at IS NULL OR expires_at > ?)`
		args = append(args, now)
	case wield.ApprovalExpired:
		query += ` WHERE status = 'expired' OR (status = 'pending' AND expires_at <= ?)`
		args = append(args, now)
	case wield.ApprovalApproved, wield.ApprovalDenied:
		query += ` WHERE status = ?`
		args = append(args, string(status))
	default:
		return nil, fmt.Errorf("list approvals: unknown status %q", status)
	}
	rows, err := s.r.QueryContext(ctx, query+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", describe(err))
	}
	as, err := scanApprovals(rows, time.UnixMicro(now))
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return as, nil
}

func scanApprovals(rows *sql.Rows, now time.Time) ([]*wield.Approval, error) {
	defer rows.Close()
	out := []*wield.Approval{}
	for rows.Next() {
		a := new(wield.Approval)
		var caller string
		var created int64
		var expires, decided, claimed, timeout sql.NullInt64
		var approved sql.NullBool
		var by, reason, requester, note sql.NullString
		var status string
		if err := rows.Scan(&a.ID, &a.CallID, &a.Tool, &caller, (*[]byte)(&a.Arguments), &a.Digest,
			&created, &expires, &status, &approved, &by, &reason, &decided, &claimed, &timeout, &requester, &note); err != nil {
			return nil, describe(err)
		}
		if err := json.Unmarshal([]byte(caller), &a.Caller); err != nil {
			return nil, fmt.Errorf("approval %s: caller: %w", a.ID, err)
		}
		a.CreatedAt = time.UnixMicro(created)
		a.ExpiresAt = fromMicros(expires)
		a.Status = wield.ApprovalStatus(status)
		if a.Status == wield.ApprovalPending && !a.ExpiresAt.IsZero() && !now.Before(a.ExpiresAt) {
			a.Status = wield.ApprovalExpired
		}
		if approved.Valid {
			a.Decision = &wield.Decision{Approved: approved.Bool, By: by.String, Reason: reason.String, Note: note.String}
			a.DecidedAt = fromMicros(decided)
		}
		a.ClaimedAt = fromMicros(claimed)
		a.Timeout = time.Duration(timeout.Int64)
		a.RequestedBy = requester.String
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, describe(err)
	}
	return out, nil
}

// timeoutNanos is a call's own timeout as stored: nanoseconds, or NULL for
// the tool's.
func timeoutNanos(d time.Duration) any {
	if d <= 0 {
		return nil
	}
	return int64(d)
}
