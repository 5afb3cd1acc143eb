package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"math/bits"
	"strconv"
	"strings"
)

// shape is the set of a chunk's columns that hold a value in at least one
// of its rows: bit j for column j of row.vals. The INSERT of a shape binds
// only those columns and writes the others as NULL literals.
//
// Binding a NULL is not free in modernc.org/sqlite: each parameter costs a
// lookup of its name, a call into SQLite under the connection's mutex and
// an unbind, and an MCP echo call's record has 13 of its 30 columns NULL.
// BenchmarkWrite measured the CPU per record without and with shapes in
// three series of interleaved rounds (3, 7 and 7 rounds; medians; 2 cores
// at a load average of 7-17, so each figure moved by ±20% between
// rounds): in transactions of 512 records, as `wield serve`'s background
// writer takes them, 0.91x, 1.01x (paired rounds: 0.92x) and 0.93x, about
// 1 µs of 14; in transactions of 64, 0.84x, 0.85x and 1.13x (paired: 0.95x).
type shape uint32

// allColumns is the shape with every column a parameter.
const allColumns shape = 1<<nColumns - 1

// maxShapes bounds the shapes whose INSERTs are kept prepared: a store
// sees few (an MCP call's, a REST call's, and the union of the two in a
// chunk of both), and a shape's statements hold about 0.5 MB of compiled
// programs when all seven sizes are in use (RssAnon after preparing them).
// A chunk of another shape evicts the one used least recently. Statements
// are prepared when first used, so a store that only ever sees one shape
// holds what it held when every column was a parameter.
const maxShapes = 3

// shaped holds the INSERTs of one shape, prepared when first needed.
type shaped struct {
	shape   shape
	inserts [maxRowsLog + 1]stmt // inserts[i] inserts 1<<i records
	shared  [maxRowsLog + 1]stmt // the same, the shape's sharable columns bound once (see sharable)
}

func (sh *shaped) close() error {
	var errs []error
	for _, st := range append(sh.inserts[:], sh.shared[:]...) {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// sharable are the columns a chunk's records often hold alike: the tool,
// the outcome, the caller and the call's settings. When every one of them
// that the shape binds holds the same value in all records of a chunk,
// the chunk's INSERT binds each of them once, for the first record, and
// the others name that parameter again (?NNN): an MCP echo call's record
// binds 9 columns instead of 17. It is all of them or none, so that a
// shape has two INSERTs of each size, not one per subset.
//
// Binding costs the background writer more than the values' size says
// (see shape): BenchmarkWrite measured the writer's CPU per record without
// and with shared parameters in five interleaved runs (2026-11-27, load
// 9-17): medians 7.87 -> 6.98 µs in transactions of 64 records, 5.53 ->
// 5.04 µs in transactions of 512, lower in every pair of runs.
const sharable shape = 1<<1 | 1<<2 | 1<<5 | 1<<7 | 1<<11 | 1<<12 | 1<<13 | 1<<14 | 1<<17 | 1<<18 | 1<<19

// sharedOf is the columns of sharable and sh whose values are equal in
// every record of rows, if that is all of them; else 0.
func sharedOf(rows []*row, sh shape) shape {
	m := sh & sharable
	if len(rows) < 2 || m == 0 {
		return 0
	}
	first := &rows[0].vals
	for _, w := range rows[1:] {
		for b := m; b != 0; b &= b - 1 {
			j := bits.TrailingZeros32(uint32(b))
			if !sameValue(first[j], w.vals[j]) {
				return 0
			}
		}
	}
	return m
}

// sameValue reports whether two values of a row are the same: both NULL,
// or of the same type and equal.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false // blobs are never shared
}

// shapeOf is the columns that hold a value in some row of rows.
func shapeOf(rows []*row) shape {
	var sh shape
	for _, w := range rows {
		for j, v := range w.vals {
			if v != nil {
				sh |= 1 << j
			}
		}
		if sh == allColumns {
			break
		}
	}
	return sh
}

// insertSQL is the INSERT of n records of shape sh, the columns of shared
// bound once: the first record's parameters are numbered 1, 2, ... in the
// order of its columns, and the other records name those of the shared
// columns again (?NNN) beside new parameters of their own, numbered on.
//
// It is an INSERT OR ROLLBACK: an INSERT of several records that may stop
// half-way (SQLite's default, OR ABORT, on the unique id) makes SQLite copy
// every page the statement changes into a statement journal first, to undo
// that statement alone; OR ROLLBACK undoes the whole transaction instead,
// and needs none. A refused record is rare (call IDs are reserved before
// their calls run), so its batch is then written again record by record
// (insertEach). BenchmarkWrite, 5 interleaved runs (2026-11-27, medians):
// the writer's CPU per record 6.30 -> 5.42 µs in transactions of 512
// records (0.86x), 9.24 -> 8.38 µs in transactions of 64 (0.91x).
func insertSQL(n int, sh, shared shape) string {
	var b strings.Builder
	b.WriteString("INSERT OR ROLLBACK INTO calls (" + columns + ") VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		k := 0 // the parameter number of column j in the first record
		for j := range nColumns {
			if j > 0 {
				b.WriteString(", ")
			}
			switch {
			case sh&(1<<j) == 0:
				b.WriteString("NULL")
			case i > 0 && shared&(1<<j) != 0:
				b.WriteByte('?')
				b.WriteString(strconv.Itoa(k + 1))
			default:
				b.WriteByte('?')
			}
			if sh&(1<<j) != 0 {
				k++
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// insertAll inserts rows in the open transaction on c, with INSERTs of
// up to maxRows records each. A violated constraint (an id recorded
// already) rolls the transaction back: errRolledBack says so, and the
// caller writes the rows again with insertEach.
func (s *Store) insertAll(ctx context.Context, c driver.Conn, rows []*row) error {
	for _, w := range rows {
		w.err = nil // from an attempt rolled back (a batch that failed is retried)
	}
	for i := 0; i < len(rows); {
		// Chunks of maxRows records, then of the powers of two that make up
		// the rest: each size has its statement prepared.
		n := maxRows
		for n > len(rows)-i {
			n /= 2
		}
		if err := s.insert(ctx, c, rows[i:i+n]); err != nil {
			if isConstraint(err) {
				return errRolledBack
			}
			return err
		}
		i += n
	}
	return nil
}

// errRolledBack is insertAll's: a record of the batch was refused, and
// the transaction is rolled back.
var errRolledBack = errors.New("a record was refused; the transaction is rolled back")

// insertEach inserts rows one by one in the open transaction on c, each
// with a statement of its own that a violated constraint undoes alone: the
// record whose id is recorded already is refused (its err says so), and
// the others are kept.
func (s *Store) insertEach(ctx context.Context, c driver.Conn, rows []*row) error {
	st, err := s.singleStmt(ctx, c)
	if err != nil {
		return err
	}
	args := s.args[:nColumns]
	defer func() {
		for i := range args {
			args[i].Value = nil
		}
	}()
	for _, w := range rows {
		w.err = nil
		for j := range args {
			args[j].Value = w.vals[j]
		}
		if _, err := st.ExecContext(ctx, args); err != nil {
			if !isConstraint(err) {
				return err
			}
			w.err = errors.New("a call with this id is recorded already")
		}
	}
	return nil
}

// singleStmt is the INSERT of one record, every column bound, whose
// violated constraint undoes that statement alone (INSERT OR ABORT,
// SQLite's default), prepared on c if it is not yet.
func (s *Store) singleStmt(ctx context.Context, c driver.Conn) (stmt, error) {
	if s.single == nil {
		st, err := c.(driver.ConnPrepareContext).PrepareContext(ctx, "INSERT INTO calls ("+columns+") VALUES ("+
			strings.TrimSuffix(strings.Repeat("?, ", nColumns), ", ")+")")
		if err != nil {
			return nil, err
		}
		s.single = st.(stmt)
	}
	return s.single, nil
}

// insert writes rows, a power of two of them, with one statement. It
// binds through the driver: database/sql's conversion of every argument
// cost the single writer a sixth of its time.
func (s *Store) insert(ctx context.Context, c driver.Conn, rows []*row) error {
	sh := shapeOf(rows)
	shared := sharedOf(rows, sh)
	st, err := s.insertStmt(ctx, c, len(rows), sh, shared)
	if err != nil {
		return err
	}
	k := 0
	args := s.args
	for i, w := range rows {
		m := sh
		if i > 0 {
			m &^= shared
		}
		for ; m != 0; m &= m - 1 {
			args[k].Value = w.vals[bits.TrailingZeros32(uint32(m))]
			k++
		}
	}
	args = args[:k]
	_, err = st.ExecContext(ctx, args)
	for i := range args {
		args[i].Value = nil
	}
	return err
}

// insertStmt is the prepared INSERT of n records (a power of two) of shape
// sh with the columns of shared bound once, prepared on c if it is not yet.
func (s *Store) insertStmt(ctx context.Context, c driver.Conn, n int, sh, shared shape) (stmt, error) {
	i := bits.TrailingZeros(uint(n))
	var found *shaped
	for k, x := range s.shapes {
		if x.shape == sh {
			found = x
			copy(s.shapes[1:k+1], s.shapes[:k]) // latest used first
			s.shapes[0] = x
			break
		}
	}
	if found == nil {
		if len(s.shapes) == maxShapes {
			last := s.shapes[len(s.shapes)-1]
			s.shapes = s.shapes[:len(s.shapes)-1]
			if err := last.close(); err != nil {
				return nil, err
			}
		}
		found = &shaped{shape: sh}
		s.shapes = append(s.shapes, nil)
		copy(s.shapes[1:], s.shapes)
		s.shapes[0] = found
	}
	slot := &found.inserts[i]
	if shared != 0 {
		slot = &found.shared[i]
	}
	if *slot == nil {
		st, err := c.(driver.ConnPrepareContext).PrepareContext(ctx, insertSQL(n, sh, shared))
		if err != nil {
			return nil, err
		}
		*slot = st.(stmt)
	}
	return *slot, nil
}

// prepareInserts prepares the INSERT of one record with every column
// bound, which checks the INSERTs against the schema when the store opens;
// the others are prepared when first used.
func (s *Store) prepareInserts(ctx context.Context) error {
	return s.raw(func(c driver.Conn) error {
		if _, err := s.insertStmt(ctx, c, 1, allColumns, 0); err != nil {
			return err
		}
		if _, err := s.singleStmt(ctx, c); err != nil {
			return err
		}
		s.args = make([]driver.NamedValue, maxRows*nColumns)
		for i := range s.args {
			s.args[i].Ordinal = i + 1
		}
		return nil
	})
}
