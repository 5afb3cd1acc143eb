package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wieldhq/wield"
)

// nowNanos is the database's clock in Unix nanoseconds: expiry is judged by
// one clock however many servers share the store.
const nowNanos = `(extract(epoch FROM now()) * 1000000000)::bigint`

// approvalStatus is the status as reported: a pending approval past its
// expiry is expired, whether or not a decision has marked it yet.
const approvalStatus = `CASE WHEN status = 'pending' AND expires_at <= ` + nowNanos + ` THEN 'expired' ELSE status END`

const approvalColumns = `id, call_id, tool, caller, arguments, digest, created_at, expires_at, ` +
	approvalStatus + `, approved, decided_by, reason, decided_at, claimed_at, timeout, requested_by, COALESCE(note, '')`

// CreateApproval records req as pending. An empty ID is given one
// (wield.NewID), a zero CreatedAt the present time; a zero ExpiresAt never
// expires. An ID already used is an error.
func (s *Store) CreateApproval(ctx context.Context, req *wield.ApprovalRequest) error {
	if req.ID == "" {
		req.ID = wield.NewID()
	}
	if req.CreatedAt.IsZero() {
		req.CreatedAt = time.Now()
	}
	caller, err := json.Marshal(req.Caller)
	if err != nil {
		return fmt.Errorf("postgres: create approval %s: encode caller: %w", req.ID, err)
	}
	created, err := nanos(req.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create approval %s: created_at: %w", req.ID, err)
	}
	expires, err := nanos(req.ExpiresAt)
	if err != nil {
		return fmt.Errorf("postgres: create approval %s: expires_at: %w", req.ID, err)
	}
	var timeout *int64
	if req.Timeout > 0 {
		ns := int64(req.Timeout)
		timeout = &ns
	}
	var requester *string
	if req.RequestedBy != "" {
		r := text(req.RequestedBy)
		requester = &r
	}
	_, err = s.pool.Exec(ctx, s.sql(`INSERT INTO @approvals (id, call_id, tool, caller, arguments, digest, created_at, expires_at, timeout, requested_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`),
		text(req.ID), text(req.CallID), text(req.Tool), caller, []byte(req.Arguments), text(req.Digest), created, expires, timeout, requester)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("postgres: create approval %s: an approval with this ID exists", req.ID)
	}
	if err != nil {
		return fmt.Errorf("postgres: create approval %s: %w", req.ID, err)
	}
	return nil
}

// DecideApproval claims the pending approval id for decision d: one
// UPDATE that only a pending, unexpired approval with the same digest (when
// digest is not empty) passes, so of two decisions at once exactly one wins.
// A refused claim returns an error wrapping [wield.ErrNotFound],
// [wield.ErrAlreadyDecided] (decided, or expired: it is then marked
// expired) or [wield.ErrDigestMismatch].
func (s *Store) DecideApproval(ctx context.Context, id, digest string, d wield.Decision) (*wield.Approval, error) {
	status := wield.ApprovalDenied
	if d.Approved {
		status = wield.ApprovalApproved
	}
	for range 3 {
		rows, err := s.pool.Query(ctx, s.sql(`UPDATE @approvals
			SET status = $2, approved = $3, decided_by = $4, reason = $5, note = $7, decided_at = `+nowNanos+`
			WHERE id = $1 AND status = 'pending' AND (expires_at IS NULL OR expires_at > `+nowNanos+`)
			AND ($6 = '' OR digest = $6)
			RETURNING `+approvalColumns),
			id, string(status), d.Approved, text(d.By), text(d.Reason), digest, text(d.Note))
		if err != nil {
			return nil, fmt.Errorf("postgres: decide approval %s: %w", id, err)
		}
		as, err := scanApprovals(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: decide approval %s: %w", id, err)
		}
		if len(as) == 1 {
			return as[0], nil
		}
		// Refused: say why.
		var (
			stored, state string
			expired       bool
		)
		err = s.pool.QueryRow(ctx, s.sql(`SELECT digest, status, coalesce(expires_at <= `+nowNanos+`, false)
			FROM @approvals WHERE id = $1`), id).Scan(&stored, &state, &expired)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil, fmt.Errorf("postgres: decide approval %s: %w", id, wield.ErrNotFound)
		case err != nil:
			return nil, fmt.Errorf("postgres: decide approval %s: %w", id, err)
		case state != string(wield.ApprovalPending):
			return nil, fmt.Errorf("postgres: decide approval %s: it is %s: %w", id, state, wield.ErrAlreadyDecided)
		case expired:
			if _, err := s.pool.Exec(ctx, s.sql(`UPDATE @approvals SET status = 'expired' WHERE id = $1 AND status = 'pending'`), id); err != nil {
				return nil, fmt.Errorf("postgres: decide approval %s: mark expired: %w", id, err)
			}
			return nil, fmt.Errorf("postgres: decide approval %s: it expired: %w", id, wield.ErrAlreadyDecided)
		case digest != "" && digest != stored:
			return nil, fmt.Errorf("postgres: decide approval %s: %w", id, wield.ErrDigestMismatch)
		}
		// Pending, unexpired and the same digest, yet not claimed: it
		// changed between the two statements. Look again.
	}
	return nil, fmt.Errorf("postgres: decide approval %s: it keeps changing under the claim", id)
}

// Approval returns one approval, or an error wrapping [wield.ErrNotFound].
func (s *Store) Approval(ctx context.Context, id string) (*wield.Approval, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+approvalColumns+` FROM @approvals WHERE id = $1`), id)
	if err != nil {
		return nil, fmt.Errorf("postgres: approval %s: %w", id, err)
	}
	as, err := scanApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: approval %s: %w", id, err)
	}
	if len(as) == 0 {
		return nil, fmt.Errorf("postgres: approval %s: %w", id, wield.ErrNotFound)
	}
	return as[0], nil
}

// Approvals lists the approvals with the status (all when it is empty),
// oldest first. Pending approvals past their expiry are listed as expired.
func (s *Store) Approvals(ctx context.Context, status wield.ApprovalStatus) ([]*wield.Approval, error) {
	var (
		rows pgx.Rows
		err  error
	)
	switch status {
	case "":
		rows, err = s.pool.Query(ctx, s.sql(`SELECT `+approvalColumns+` FROM @approvals ORDER BY created_at, id`))
	case wield.ApprovalPending:
		// The index on status finds the few pending among many decided.
		rows, err = s.pool.Query(ctx, s.sql(`SELECT `+approvalColumns+` FROM @approvals
			WHERE status = 'pending' AND (expires_at IS NULL OR expires_at > `+nowNanos+`) ORDER BY created_at, id`))
	case wield.ApprovalApproved, wield.ApprovalDenied, wield.ApprovalExpired:
		rows, err = s.pool.Query(ctx, s.sql(`SELECT `+approvalColumns+` FROM @approvals
			WHERE status IN ($1, 'pending') AND `+approvalStatus+` = $1 ORDER BY created_at, id`), string(status))
	default:
		return nil, fmt.Errorf("postgres: approvals: unknown status %q", status)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: approvals %s: %w", status, err)
	}
	as, err := scanApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: approvals %s: %w", status, err)
	}
	return as, nil
}

func scanApprovals(rows pgx.Rows) ([]*wield.Approval, error) {
	defer rows.Close()
	out := []*wield.Approval{}
	for rows.Next() {
		var (
			a                           wield.Approval
			caller                      []byte
			created, expires, decidedAt *int64
			claimedAt, timeout          *int64
			status                      string
			approved                    *bool
			by, reason, note            string
			requester                   *string
		)
		err := rows.Scan(&a.ID, &a.CallID, &a.Tool, &caller, (*[]byte)(&a.Arguments), &a.Digest, &created, &expires,
			&status, &approved, &by, &reason, &decidedAt, &claimedAt, &timeout, &requester, &note)
		if err != nil {
			return nil, err
		}
		if caller != nil {
			if err := json.Unmarshal(caller, &a.Caller); err != nil {
				return nil, fmt.Errorf("approval %s: decode caller: %w", a.ID, err)
			}
		}
		a.CreatedAt, a.ExpiresAt, a.DecidedAt, a.ClaimedAt = timeOf(created), timeOf(expires), timeOf(decidedAt), timeOf(claimedAt)
		a.Status = wield.ApprovalStatus(status)
		if timeout != nil {
			a.Timeout = time.Duration(*timeout)
		}
		if requester != nil {
			a.RequestedBy = *requester
		}
		if approved != nil && (a.Status == wield.ApprovalApproved || a.Status == wield.ApprovalDenied) {
			a.Decision = &wield.Decision{Approved: *approved, By: by, Reason: reason, Note: note}
		}
		out = append(out, &a)
	}
	return out, rows.Err()
}

// ClaimApproval marks a decided or expired approval as acted on, once: of
// two claims at once exactly one wins (an expired one is then marked expired
// for good). The others, and a claim of a pending approval, fail with an
// error wrapping [wield.ErrAlreadyDecided], or [wield.ErrNotFound] for an
// unknown ID.
func (s *Store) ClaimApproval(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, s.sql(`UPDATE @approvals
		SET claimed_at = `+nowNanos+`, status = `+approvalStatus+`
		WHERE id = $1 AND claimed_at IS NULL AND `+approvalStatus+` <> 'pending'`), id)
	if err != nil {
		return fmt.Errorf("postgres: claim approval %s: %w", id, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	a, err := s.Approval(ctx, id)
	if err != nil {
		return fmt.Errorf("postgres: claim approval %s: %w", id, err)
	}
	if a.ClaimedAt.IsZero() {
		return fmt.Errorf("postgres: claim approval %s: it is %s, not decided yet: %w", id, a.Status, wield.ErrAlreadyDecided)
	}
	return fmt.Errorf("postgres: claim approval %s: claimed already: %w", id, wield.ErrAlreadyDecided)
}

// UnclaimedApprovals lists the approvals no run has acted on, oldest first:
// the pending ones and those decided or expired but not claimed (an index
// holds only these).
func (s *Store) UnclaimedApprovals(ctx context.Context) ([]*wield.Approval, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+approvalColumns+` FROM @approvals
		WHERE claimed_at IS NULL ORDER BY created_at, id`))
	if err != nil {
		return nil, fmt.Errorf("postgres: unclaimed approvals: %w", err)
	}
	as, err := scanApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: unclaimed approvals: %w", err)
	}
	return as, nil
}
