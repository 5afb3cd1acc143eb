package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/commit"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// Page sizes of [Store.Calls].
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// ErrDuplicateID is returned by Save for a record whose call ID is already
// stored: the stored record is kept as it is.
var ErrDuplicateID = errors.New("a record with this call ID is already stored")

// callColumns are the columns of calls, in the order of row.vals and
// scanRecord.
var callColumns = []string{
	"id", "tool", "tool_version", "category",
	"caller_id", "caller_type", "conversation_id", "workflow_id", "user_id",
	"idempotency_key", "digest", "ok", "error_type", "error", "attempts",
	"queued_at", "started_at", "finished_at", "duration", "queue_wait",
	"raw_arguments", "arguments", "output", "full_output", "extra",
}

var selectCalls = "SELECT " + strings.Join(callColumns, ", ") + " FROM @calls"

// row is a record as it is written: made on the saving goroutine, so the
// writer only sends it, and so a record the caller changes after an async
// Save is kept as it was.
type row struct {
	vals [25]any
	id   string
	err  error // set by the writer when the record was refused
}

// extra holds the fields of a record that are seldom set and never
// queried, as JSON in one column.
type extra struct {
	Timeout          time.Duration           `json:"timeout,omitempty"`
	Priority         int                     `json:"priority,omitempty"`
	ApprovalID       string                  `json:"approval_id,omitempty"`
	Variables        map[string]any          `json:"variables,omitempty"`
	ValidationErrors []wield.ValidationError `json:"validation_errors,omitempty"`
	Metadata         map[string]any          `json:"metadata,omitempty"`
	// The result's call ID and tool, when they differ from the call's.
	ResultCallID *string `json:"result_call_id,omitempty"`
	ResultTool   *string `json:"result_tool,omitempty"`
}

func (x *extra) empty() bool {
	return x.Timeout == 0 && x.Priority == 0 && x.ApprovalID == "" && x.Variables == nil &&
		x.ValidationErrors == nil && x.Metadata == nil && x.ResultCallID == nil && x.ResultTool == nil
}

func newRow(r *wield.Record, copyBytes bool) (*row, error) {
	if r == nil || r.Call == nil || r.Result == nil {
		return nil, errors.New("the record has no call or no result")
	}
	c, res := r.Call, r.Result
	if c.ID == "" {
		return nil, errors.New("the record's call has no ID")
	}
	x := extra{
		Timeout: c.Timeout, Priority: c.Priority, ApprovalID: c.ApprovalID, Variables: c.Caller.Variables,
		ValidationErrors: res.ValidationErrors, Metadata: res.Metadata,
	}
	if res.CallID != c.ID {
		x.ResultCallID = &res.CallID
	}
	if res.Tool != c.Tool {
		x.ResultTool = &res.Tool
	}
	var xb []byte
	if !x.empty() {
		var err error
		if xb, err = jsonenc.Marshal(&x); err != nil { // text as it is, as records are shown
			return nil, fmt.Errorf("encode metadata of call %s: %w", c.ID, err)
		}
	}
	queued, err := nanos(r.QueuedAt)
	if err != nil {
		return nil, fmt.Errorf("call %s: queued_at: %w", c.ID, err)
	}
	started, err := nanos(res.StartedAt)
	if err != nil {
		return nil, fmt.Errorf("call %s: started_at: %w", c.ID, err)
	}
	finished, err := nanos(res.FinishedAt)
	if err != nil {
		return nil, fmt.Errorf("call %s: finished_at: %w", c.ID, err)
	}
	b := func(m json.RawMessage) []byte {
		if copyBytes && m != nil {
			return append([]byte{}, m...)
		}
		return []byte(m)
	}
	w := &row{id: text(c.ID)}
	w.vals = [25]any{
		w.id, text(c.Tool), text(r.ToolVersion), text(string(r.Category)),
		text(c.Caller.ID), text(string(c.Caller.Type)), text(c.Caller.ConversationID), text(c.Caller.WorkflowID), text(c.Caller.UserID),
		text(c.IdempotencyKey), text(r.Digest), res.OK, text(string(res.ErrorType)), text(res.Error), int32(res.Attempts),
		queued, started, finished, int64(res.Duration), int64(res.QueueWait),
		b(c.Arguments), b(r.Arguments), b(res.Output), b(res.FullOutput), xb,
	}
	return w, nil
}

// text makes s storable as PostgreSQL text, which refuses NUL bytes and
// invalid UTF-8: one bad error message must not fail a whole batch. Both
// become U+FFFD.
func text(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

var (
	minTime = time.Unix(0, -1<<63)
	maxTime = time.Unix(0, 1<<63-1)
)

// nanos is a time as stored: Unix nanoseconds, or NULL for the zero time.
func nanos(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		return nil, fmt.Errorf("time %s is outside the years 1678 to 2262", t)
	}
	return t.UnixNano(), nil
}

func timeOf(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, *n).UTC()
}

// Save keeps the record. In sync mode it returns once the record is
// committed, with the write's error if the batch failed (then the record is
// not kept), or [ErrDuplicateID]; in async mode it returns at once (see the
// package documentation). After Close it returns [wield.ErrClosed].
func (s *Store) Save(ctx context.Context, r *wield.Record) error {
	w, err := newRow(r, s.async)
	if err != nil {
		return fmt.Errorf("postgres: save record: %w", err)
	}
	if s.async {
		s.added.Add(1)
	}
	err = s.commit.Add(ctx, w)
	switch {
	case errors.Is(err, commit.ErrClosed):
		if s.async {
			s.added.Add(^uint64(0))
		}
		return fmt.Errorf("postgres: save record %s: %w", w.id, wield.ErrClosed)
	case err != nil:
		return fmt.Errorf("postgres: save record %s: %w", w.id, err)
	case !s.async && w.err != nil: // set before the batch was done; async rows are not waited for
		return fmt.Errorf("postgres: save record %s: %w", w.id, w.err)
	}
	return nil
}

// write is the committer's: one COPY of the whole batch, which is one
// transaction. COPY is all or nothing, so a batch with an ID already stored
// is written again row by row, and only the duplicates are refused.
func (s *Store) write(ctx context.Context, rows []*row) error {
	_, err := s.pool.CopyFrom(ctx, pgx.Identifier{s.schema, "calls"}, callColumns, copySource(rows))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		err = s.writeEach(ctx, rows)
	}
	if err != nil {
		return fmt.Errorf("write %d records: %w", len(rows), err)
	}
	if s.async {
		s.advance(len(rows))
	}
	return nil
}

func copySource(rows []*row) pgx.CopyFromSource {
	return pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) { return rows[i].vals[:], nil })
}

var insertCall = func() string {
	ps := make([]string, len(callColumns))
	for i := range ps {
		ps[i] = "$" + strconv.Itoa(i+1)
	}
	return "INSERT INTO @calls (" + strings.Join(callColumns, ", ") + ") VALUES (" + strings.Join(ps, ", ") + ") ON CONFLICT (id) DO NOTHING"
}()

// writeEach writes rows one statement each, in one transaction, and once
// it is committed marks those whose ID was taken.
func (s *Store) writeEach(ctx context.Context, rows []*row) error {
	var dups []*row
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		dups = dups[:0]
		b := &pgx.Batch{}
		for _, w := range rows {
			b.Queue(s.sql(insertCall), w.vals[:]...)
		}
		res := tx.SendBatch(ctx, b)
		for _, w := range rows {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return fmt.Errorf("write record %s: %w", w.id, err)
			}
			if tag.RowsAffected() == 0 {
				dups = append(dups, w)
			}
		}
		return res.Close()
	})
	if err != nil {
		return err
	}
	for _, w := range dups {
		w.err = ErrDuplicateID
		if s.async {
			s.refused.Add(1)
			s.log.Error("postgres: record refused", "call_id", w.id, "err", ErrDuplicateID)
		}
	}
	return nil
}

// Calls returns a page of the records that match q, newest first. A Status
// other than "", "ok" or "error" is an error.
func (s *Store) Calls(ctx context.Context, q wield.CallQuery) (wield.CallPage, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if q.ConversationID != "" {
		add("conversation_id = ?", q.ConversationID)
	}
	if q.Tool != "" {
		add("tool = ?", q.Tool)
	}
	if q.CallerID != "" {
		add("caller_id = ?", q.CallerID)
	}
	if q.WorkflowID != "" {
		add("workflow_id = ?", q.WorkflowID)
	}
	if q.UserID != "" {
		add("user_id = ?", q.UserID)
	}
	switch q.Status {
	case "":
	case "ok":
		where = append(where, "ok")
	case "error":
		where = append(where, "NOT ok")
	default:
		return wield.CallPage{}, fmt.Errorf("postgres: calls: unknown status %q (want ok, error or nothing)", q.Status)
	}
	if !q.Since.IsZero() {
		add("queued_at >= ?", clampNanos(q.Since))
	}
	if !q.Until.IsZero() {
		add("queued_at < ?", clampNanos(q.Until))
	}
	if q.Cursor != "" {
		add("id < ?", q.Cursor)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	sql := s.sql(selectCalls)
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY id DESC LIMIT " + strconv.Itoa(limit+1)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return wield.CallPage{}, fmt.Errorf("postgres: calls: %w", err)
	}
	recs, err := scanRecords(rows, limit+1)
	if err != nil {
		return wield.CallPage{}, fmt.Errorf("postgres: calls: %w", err)
	}
	page := wield.CallPage{Records: recs}
	if len(recs) > limit {
		page.Records = recs[:limit]
		page.Next = recs[limit-1].Call.ID
	}
	return page, nil
}

// clampNanos is a bound of a time range in Unix nanoseconds, the bounds of
// what can be stored standing for times past them.
func clampNanos(t time.Time) int64 {
	switch {
	case t.Before(minTime):
		return -1 << 63
	case t.After(maxTime):
		return 1<<63 - 1
	}
	return t.UnixNano()
}

// Call returns the record of one call, or an error wrapping
// [wield.ErrNotFound].
func (s *Store) Call(ctx context.Context, id string) (*wield.Record, error) {
	rows, err := s.pool.Query(ctx, s.sql(selectCalls+" WHERE id = $1"), id)
	if err != nil {
		return nil, fmt.Errorf("postgres: call %s: %w", id, err)
	}
	recs, err := scanRecords(rows, 1)
	if err != nil {
		return nil, fmt.Errorf("postgres: call %s: %w", id, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("postgres: call %s: %w", id, wield.ErrNotFound)
	}
	return recs[0], nil
}

// Replay returns the first successful call of tool made with the
// idempotency key, or nil, nil. In async mode it sees only records already
// written.
func (s *Store) Replay(ctx context.Context, tool, key string) (*wield.Record, error) {
	if key == "" {
		return nil, nil
	}
	// The conditions of the partial index calls_replay are spelled out so
	// that even a generic plan uses it.
	rows, err := s.pool.Query(ctx, s.sql(selectCalls+` WHERE tool = $1 AND idempotency_key = $2 AND ok AND idempotency_key <> '' ORDER BY id LIMIT 1`), tool, key)
	if err != nil {
		return nil, fmt.Errorf("postgres: replay %s %q: %w", tool, key, err)
	}
	recs, err := scanRecords(rows, 1)
	if err != nil {
		return nil, fmt.Errorf("postgres: replay %s %q: %w", tool, key, err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return recs[0], nil
}

func scanRecords(rows pgx.Rows, capacity int) ([]*wield.Record, error) {
	defer rows.Close()
	recs := make([]*wield.Record, 0, min(capacity, 64))
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, rows.Err()
}

func scanRecord(rows pgx.Rows) (*wield.Record, error) {
	var (
		c                           wield.Call
		res                         wield.Result
		rec                         = wield.Record{Call: &c, Result: &res}
		category, callerType, etype string
		queued, started, finished   *int64
		duration, queueWait         int64
		attempts                    int32
		rawArgs, args, out, full, x []byte
	)
	err := rows.Scan(
		&c.ID, &c.Tool, &rec.ToolVersion, &category,
		&c.Caller.ID, &callerType, &c.Caller.ConversationID, &c.Caller.WorkflowID, &c.Caller.UserID,
		&c.IdempotencyKey, &rec.Digest, &res.OK, &etype, &res.Error, &attempts,
		&queued, &started, &finished, &duration, &queueWait,
		&rawArgs, &args, &out, &full, &x,
	)
	if err != nil {
		return nil, err
	}
	rec.Category = wield.Category(category)
	c.Caller.Type = wield.CallerType(callerType)
	c.Arguments, rec.Arguments = rawArgs, args
	res.CallID, res.Tool = c.ID, c.Tool
	res.ErrorType = wield.ErrorType(etype)
	res.Attempts = int(attempts)
	res.Output, res.FullOutput = out, full
	rec.QueuedAt, res.StartedAt, res.FinishedAt = timeOf(queued), timeOf(started), timeOf(finished)
	res.Duration, res.QueueWait = time.Duration(duration), time.Duration(queueWait)
	if x != nil {
		var e extra
		if err := json.Unmarshal(x, &e); err != nil {
			return nil, fmt.Errorf("record %s: decode column extra: %w", c.ID, err)
		}
		c.Timeout, c.Priority, c.ApprovalID, c.Caller.Variables = e.Timeout, e.Priority, e.ApprovalID, e.Variables
		res.ValidationErrors, res.Metadata = e.ValidationErrors, e.Metadata
		if e.ResultCallID != nil {
			res.CallID = *e.ResultCallID
		}
		if e.ResultTool != nil {
			res.Tool = *e.ResultTool
		}
	}
	return &rec, nil
}
