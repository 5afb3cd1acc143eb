package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/commit"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// columns are the columns of calls that a record fills, in the order of
// row.vals.
const columns = `id, tool, ok, queued_at, duration_ns, category, conversation_id, caller_id, workflow_id,
	user_id, idempotency_key, caller_type, tool_version, error_type, attempts, started_at, finished_at,
	queue_wait_ns, timeout_ns, priority, error, validation_errors, metadata, variables, raw_arguments,
	arguments, output, full_output, digest, approval_id`

const nColumns = 30

// row is a record encoded for an INSERT, and what became of it.
type row struct {
	id   string
	vals [nColumns]any
	buf  []byte // async mode: the copies of the record's byte slices
	own  bool   // the blobs of vals are copies in buf
	err  error  // the record alone was refused (its id is taken)
	seg  int8   // the journal file it is in
	seq  uint64 // the journal append it was in
}

// newRow encodes r. In async mode the byte slices are copied, since the
// caller may reuse them once Save returns.
func newRow(r *wield.Record, copyBytes bool) (*row, error) {
	if r == nil || r.Call == nil || r.Result == nil {
		return nil, errors.New("a record needs a call and a result")
	}
	c, res := r.Call, r.Result
	id, tool := c.ID, c.Tool
	if id == "" {
		id = res.CallID
	}
	if tool == "" {
		tool = res.Tool
	}
	if id == "" || tool == "" {
		return nil, errors.New("a record needs a call id and a tool")
	}
	w := rowPool.Get().(*row)
	if err := w.fill(r, id, tool, copyBytes); err != nil {
		release([]*row{w})
		return nil, err
	}
	return w, nil
}

// fill makes w the row of r, whatever w held: every field is set again
// but the buffer, whose room is kept.
//
// A value equal to the one the pooled row held in the same column keeps
// that one's interface value: putting a string, a []byte or a large int64
// in an interface allocates, and the tool, the caller and the call's
// settings repeat from call to call, as does where a copied blob lands in
// w.buf (a new copy overwrites the old one's bytes, which nothing reads
// once the row is back in the pool). An MCP echo call's Save allocated 13
// times, and 8 with this (BenchmarkSave).
func (w *row) fill(r *wield.Record, id, tool string, copyBytes bool) error {
	c, res := r.Call, r.Result
	old := w.vals
	*w = row{id: id, buf: w.buf[:0], own: copyBytes}
	var err error
	v := &w.vals
	v[0] = id
	v[1] = keepText(old[1], tool)
	v[2] = boolInt(res.OK)
	v[3] = micros(r.QueuedAt)
	v[4] = keepInt(old[4], int64(res.Duration))
	v[5] = keepText(old[5], string(r.Category))
	v[6] = keepText(old[6], c.Caller.ConversationID)
	v[7] = keepText(old[7], c.Caller.ID)
	v[8] = keepText(old[8], c.Caller.WorkflowID)
	v[9] = keepText(old[9], c.Caller.UserID)
	v[10] = text(c.IdempotencyKey)
	v[11] = keepText(old[11], string(c.Caller.Type))
	v[12] = keepText(old[12], r.ToolVersion)
	v[13] = keepText(old[13], string(res.ErrorType))
	v[14] = keepInt(old[14], int64(res.Attempts))
	v[15] = micros(res.StartedAt)
	v[16] = micros(res.FinishedAt)
	v[17] = keepInt(old[17], int64(res.QueueWait))
	v[18] = keepInt(old[18], int64(c.Timeout))
	v[19] = keepInt(old[19], int64(c.Priority))
	v[20] = text(res.Error)
	if len(res.ValidationErrors) > 0 {
		if v[21], err = jsonText(res.ValidationErrors); err != nil {
			return fmt.Errorf("encode validation errors: %w", err)
		}
	}
	if len(res.Metadata) > 0 {
		if v[22], err = jsonText(res.Metadata); err != nil {
			return fmt.Errorf("encode metadata: %w", err)
		}
	}
	if len(c.Caller.Variables) > 0 {
		if v[23], err = jsonText(c.Caller.Variables); err != nil {
			return fmt.Errorf("encode caller variables: %w", err)
		}
	}
	if n := len(c.Arguments) + len(r.Arguments) + len(res.Output) + len(res.FullOutput); copyBytes && cap(w.buf) < n {
		w.buf = make([]byte, 0, n)
	}
	v[24] = w.blob(old[24], c.Arguments, copyBytes)
	v[25] = w.blob(old[25], r.Arguments, copyBytes)
	v[26] = w.blob(old[26], res.Output, copyBytes)
	v[27] = w.blob(old[27], res.FullOutput, copyBytes)
	v[28] = text(r.Digest)
	v[29] = text(c.ApprovalID)
	return nil
}

// rowPool keeps the rows the background writer is done with (see
// Store.writeAdded), for newRow to fill again: a row and the copies of its
// bytes were the largest allocation of a call served by wield serve (700
// of its 7,600 bytes, MCP echo at 8 callers, 2026-11-27).
var rowPool = sync.Pool{New: func() any { return new(row) }}

// maxPooledBuf bounds the copies a pooled row keeps room for: a row that
// held a large output goes back without its buffer.
const maxPooledBuf = 16 << 10

// release gives rows back to rowPool, once nothing reads them (see
// Store.writeAdded).
func release(rows []*row) {
	for _, w := range rows {
		buf := w.buf[:0]
		kept := row{buf: buf}
		if cap(buf) > maxPooledBuf {
			kept.buf = nil
		}
		// The values fill may keep (small and repeating), and the blobs
		// with the buffer they are in.
		for _, j := range keptColumns {
			kept.vals[j] = w.vals[j]
		}
		if w.own && kept.buf != nil {
			copy(kept.vals[24:28], w.vals[24:28])
		}
		*w = kept
		rowPool.Put(w)
	}
}

// keptColumns are the columns of a released row whose values fill may
// keep: the tool, the outcome's duration and type, the caller, the call's
// settings.
var keptColumns = [...]int{1, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 17, 18, 19}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// text stores the empty string as NULL, which the partial indexes skip.
func text(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func blob(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// blob is b, or a copy of it in w.buf: old, the value the column held
// before, if that was the same place of w.buf (see fill).
func (w *row) blob(old any, b []byte, copyBytes bool) any {
	if len(b) == 0 || !copyBytes {
		return blob(b)
	}
	start := len(w.buf)
	w.buf = append(w.buf, b...)
	cp := w.buf[start:len(w.buf):len(w.buf)]
	if o, ok := old.([]byte); ok && len(o) == len(cp) && cap(o) == cap(cp) && &o[0] == &cp[0] {
		return old
	}
	return cp
}

// keepText is text(s), or old if it holds s already (see fill).
func keepText(old any, s string) any {
	if o, ok := old.(string); ok && o == s {
		return old
	}
	return text(s)
}

// keepInt is x, or old if it holds x already (see fill).
func keepInt(old any, x int64) any {
	if o, ok := old.(int64); ok && o == x {
		return old
	}
	return x
}

// jsonText is v's JSON for a text column, written through internal/jsonenc
// as every record is shown: <, > and & as they are.
func jsonText(v any) (any, error) {
	b, err := jsonenc.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// Save keeps the record: in sync mode it returns once the record is in the
// journal (or, without one, committed), in async mode once it is buffered.
// It fails, and keeps nothing, when the record has no call id, after Close
// ([wield.ErrClosed]), and, in sync mode without a journal, when the id is
// recorded already (otherwise the refusal is logged and Close reports it).
func (s *Store) Save(ctx context.Context, r *wield.Record) error {
	w, err := newRow(r, s.background())
	if err != nil {
		return fmt.Errorf("save call: %w", err)
	}
	c := s.commit
	if s.jr != nil {
		c = s.jcommit
	}
	id := w.id // once added, a background row may be written and reused
	if err := c.Add(ctx, w); err != nil {
		if errors.Is(err, commit.ErrClosed) {
			err = wield.ErrClosed
		}
		return fmt.Errorf("save call %s: %w", id, err)
	}
	if !s.background() && w.err != nil { // a background row is the writer's once added
		return fmt.Errorf("save call %s: %w", w.id, w.err)
	}
	return nil
}

// background reports whether records are inserted after Save returns:
// in async mode, and in sync mode through the journal.
func (s *Store) background() bool { return s.async || s.jr != nil }

// writeAdded is the committer's write in the background modes: write,
// then the rows go back to rowPool, since nothing reads a row Save added
// once it is written (a batch that failed is kept for a retry).
func (s *Store) writeAdded(ctx context.Context, rows []*row) error {
	if err := s.write(ctx, rows); err != nil {
		return err
	}
	release(rows)
	return nil
}

// journalWrite is the journal committer's: it appends a group of records
// to the journal, then hands them to the writer.
func (s *Store) journalWrite(ctx context.Context, rows []*row) error {
	if err := s.jr.append(rows); err != nil {
		return err
	}
	for _, w := range rows {
		if err := s.commit.Add(ctx, w); err != nil {
			return err // closed: Close closes the journal's committer first, so never
		}
	}
	return nil
}

// caughtUp waits, in sync mode with a journal, until the records whose
// Save returned are in the database, so that a query sees them.
func (s *Store) caughtUp(ctx context.Context) error {
	if s.jr == nil {
		return nil
	}
	return s.Flush(ctx)
}

// write is the committer's: it writes one batch in one transaction, with
// INSERTs of up to maxRows records each. A record whose id is taken is
// refused alone; the rest of the batch is kept.
func (s *Store) write(ctx context.Context, rows []*row) error {
	err := s.raw(func(c driver.Conn) error {
		tx, err := c.(driver.ConnBeginTx).BeginTx(ctx, driver.TxOptions{}) // BEGIN IMMEDIATE
		if err != nil {
			return err
		}
		err = s.insertAll(ctx, c, rows)
		if errors.Is(err, errRolledBack) {
			// SQLite rolled the transaction back (INSERT OR ROLLBACK):
			// end it here too, and write the batch again record by record.
			tx.Rollback()
			if tx, err = c.(driver.ConnBeginTx).BeginTx(ctx, driver.TxOptions{}); err != nil {
				return err
			}
			err = s.insertEach(ctx, c, rows)
		}
		if err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return describe(err)
	}
	s.dirty.Store(true)
	if s.jr != nil {
		if err := s.jr.applied(rows); err != nil {
			s.log.Warn("sqlite store: emptying the journal failed; it is replayed at the next Open", "path", s.path, "err", err)
		}
	}
	if s.background() {
		for _, w := range rows {
			if w.err != nil {
				s.lost.Add(1)
				s.log.Error("sqlite store: call record refused", "path", s.path, "call_id", w.id, "err", w.err)
			}
		}
	}
	return nil
}

// Call returns the record of one call, or an error wrapping
// [wield.ErrNotFound].
func (s *Store) Call(ctx context.Context, id string) (*wield.Record, error) {
	if err := s.readable(ctx); err != nil {
		return nil, fmt.Errorf("read call %s: %w", id, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+columns+` FROM calls WHERE id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("read call %s: %w", id, describe(err))
	}
	recs, err := scanRecords(rows, 1)
	if err != nil {
		return nil, fmt.Errorf("read call %s: %w", id, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("read call %s: %w", id, wield.ErrNotFound)
	}
	return recs[0], nil
}

// Calls returns one page of the records that match q, newest first.
func (s *Store) Calls(ctx context.Context, q wield.CallQuery) (wield.CallPage, error) {
	query, args, limit, err := callsQuery(q)
	if err == nil {
		err = s.readable(ctx)
	}
	if err != nil {
		return wield.CallPage{}, fmt.Errorf("list calls: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return wield.CallPage{}, fmt.Errorf("list calls: %w", describe(err))
	}
	recs, err := scanRecords(rows, limit+1)
	if err != nil {
		return wield.CallPage{}, fmt.Errorf("list calls: %w", err)
	}
	page := wield.CallPage{Records: recs}
	if len(recs) > limit {
		page.Records = recs[:limit]
		page.Next = recs[limit-1].Call.ID
	}
	return page, nil
}

// callsQuery is the SELECT of q's page, with one record more than the
// page holds, to tell whether there is a next page.
func callsQuery(q wield.CallQuery) (query string, args []any, limit int, err error) {
	var where []string
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
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
		where = append(where, "ok = 1")
	case "error":
		where = append(where, "ok = 0")
	default:
		return "", nil, 0, fmt.Errorf("status %q is neither ok nor error", q.Status)
	}
	if !q.Since.IsZero() {
		add("queued_at >= ?", q.Since.UnixMicro())
	}
	if !q.Until.IsZero() {
		add("queued_at < ?", q.Until.UnixMicro())
	}
	if q.Cursor != "" {
		add("id < ?", q.Cursor)
	}
	limit = q.Limit
	switch {
	case limit <= 0:
		limit = 100
	case limit > 1000:
		limit = 1000
	}
	query = `SELECT ` + columns + ` FROM calls`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY id DESC LIMIT " + strconv.Itoa(limit+1)
	return query, args, limit, nil
}

// Replay returns the first successful call of tool with the idempotency
// key, or nil, nil when there is none. In async mode it sees only the
// records written so far.
func (s *Store) Replay(ctx context.Context, tool, key string) (*wield.Record, error) {
	if key == "" {
		return nil, nil
	}
	if err := s.readable(ctx); err != nil {
		return nil, fmt.Errorf("replay %s with key %q: %w", tool, key, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+columns+` FROM calls
		WHERE tool = ? AND idempotency_key = ? AND ok = 1 ORDER BY id LIMIT 1`, tool, key)
	if err != nil {
		return nil, fmt.Errorf("replay %s with key %q: %w", tool, key, describe(err))
	}
	recs, err := scanRecords(rows, 1)
	if err != nil {
		return nil, fmt.Errorf("replay %s with key %q: %w", tool, key, err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return recs[0], nil
}

// scanRecords reads the records of rows (which select columns) and closes
// rows.
func scanRecords(rows *sql.Rows, hint int) ([]*wield.Record, error) {
	defer rows.Close()
	out := make([]*wield.Record, 0, min(hint, 128))
	for rows.Next() {
		var (
			c                                          = new(wield.Call)
			res                                        = new(wield.Result)
			rec                                        = &wield.Record{Call: c, Result: res}
			ok                                         int64
			queued, started, finished                  sql.NullInt64
			category, conv, caller, workflow, user     sql.NullString
			key, callerType, version, errType, errText sql.NullString
			verrs, meta, vars, digest, approvalID      sql.NullString
			duration, queueWait, timeout               int64
			attempts, priority                         int64
		)
		if err := rows.Scan(&c.ID, &c.Tool, &ok, &queued, &duration, &category, &conv, &caller, &workflow,
			&user, &key, &callerType, &version, &errType, &attempts, &started, &finished,
			&queueWait, &timeout, &priority, &errText, &verrs, &meta, &vars, (*[]byte)(&c.Arguments),
			(*[]byte)(&rec.Arguments), (*[]byte)(&res.Output), (*[]byte)(&res.FullOutput), &digest, &approvalID); err != nil {
			return nil, describe(err)
		}
		res.CallID, res.Tool = c.ID, c.Tool
		res.OK = ok != 0
		rec.QueuedAt = fromMicros(queued)
		res.Duration = time.Duration(duration)
		rec.Category = wield.Category(category.String)
		c.Caller = wield.Caller{ID: caller.String, Type: wield.CallerType(callerType.String),
			ConversationID: conv.String, WorkflowID: workflow.String, UserID: user.String}
		c.IdempotencyKey = key.String
		rec.Digest = digest.String
		c.ApprovalID = approvalID.String
		rec.ToolVersion = version.String
		res.ErrorType = wield.ErrorType(errType.String)
		res.Attempts = int(attempts)
		res.StartedAt = fromMicros(started)
		res.FinishedAt = fromMicros(finished)
		res.QueueWait = time.Duration(queueWait)
		c.Timeout = time.Duration(timeout)
		c.Priority = int(priority)
		res.Error = errText.String
		if err := unmarshalText(verrs, &res.ValidationErrors); err != nil {
			return nil, fmt.Errorf("call %s: validation errors: %w", c.ID, err)
		}
		if err := unmarshalText(meta, &res.Metadata); err != nil {
			return nil, fmt.Errorf("call %s: metadata: %w", c.ID, err)
		}
		if err := unmarshalText(vars, &c.Caller.Variables); err != nil {
			return nil, fmt.Errorf("call %s: caller variables: %w", c.ID, err)
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, describe(err)
	}
	return out, nil
}

func fromMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64)
}

func unmarshalText(s sql.NullString, v any) error {
	if !s.Valid {
		return nil
	}
	return json.Unmarshal([]byte(s.String), v)
}
