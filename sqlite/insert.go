package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"math/bits"
	"strings"
)

// shape is the set of a chunk's columns that hold a value in at least one
// of its rows: bit j for column j of row.vals. The INSERT of a shape binds
// only those columns and writes the others as NULL literals.
//
// Binding a NULL is not free in modernc.org/sqlite: each parameter costs a
// lookup of its name, a call into SQLite under the connection's mutex and
// an unbind, and an MCP echo call's record has 13 of its 30 columns NULL.
// BenchmarkWrite (512 records a transaction, as `wield serve`'s background
// writer takes them) measured the CPU per record with and without shapes;
// the figures are in the commit that brought them.
type shape uint32

// allColumns is the shape of the INSERTs prepared at Open: every column a
// parameter, for any chunk.
const allColumns shape = 1<<nColumns - 1

// maxShapes bounds the shapes whose INSERTs are kept prepared: a store
// sees few (an MCP call's, a REST call's, a failure's), and each shape's
// statements hold their compiled programs in memory. A chunk of another
// shape evicts the one used least recently.
const maxShapes = 4

// shaped holds the INSERTs of one shape, prepared when first needed.
type shaped struct {
	shape   shape
	inserts [maxRowsLog + 1]stmt // inserts[i] inserts 1<<i records
}

func (sh *shaped) close() error {
	var errs []error
	for _, st := range sh.inserts {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
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

// insertSQL is the INSERT of n records of shape sh.
func insertSQL(n int, sh shape) string {
	var b strings.Builder
	b.WriteString("INSERT INTO calls (" + columns + ") VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range nColumns {
			if j > 0 {
				b.WriteString(", ")
			}
			if sh&(1<<j) != 0 {
				b.WriteByte('?')
			} else {
				b.WriteString("NULL")
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// insertAll inserts rows in the open transaction on c.
func (s *Store) insertAll(ctx context.Context, c driver.Conn, rows []*row) error {
	for i := 0; i < len(rows); {
		// Chunks of maxRows records, then of the powers of two that make up
		// the rest: each size has its statement prepared.
		n := maxRows
		for n > len(rows)-i {
			n /= 2
		}
		chunk := rows[i : i+n]
		i += n
		err := s.insert(ctx, c, chunk)
		if err == nil {
			continue
		}
		if !isConstraint(err) {
			return err
		}
		// A failed statement is undone alone; the transaction goes on.
		for _, w := range chunk {
			w.err = nil
			if err := s.insert(ctx, c, []*row{w}); err != nil {
				if !isConstraint(err) {
					return err
				}
				w.err = errors.New("a call with this id is recorded already")
			}
		}
	}
	return nil
}

// insert writes rows, a power of two of them, with one statement. It
// binds through the driver: database/sql's conversion of every argument
// cost the single writer a sixth of its time.
func (s *Store) insert(ctx context.Context, c driver.Conn, rows []*row) error {
	sh := shapeOf(rows)
	st, err := s.insertStmt(ctx, c, len(rows), sh)
	if err != nil {
		return err
	}
	k := 0
	args := s.args
	for _, w := range rows {
		for m := sh; m != 0; m &= m - 1 {
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
// sh, prepared on c if it is not yet.
func (s *Store) insertStmt(ctx context.Context, c driver.Conn, n int, sh shape) (stmt, error) {
	i := bits.TrailingZeros(uint(n))
	if sh == allColumns {
		return s.inserts[i], nil
	}
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
	if found.inserts[i] == nil {
		st, err := c.(driver.ConnPrepareContext).PrepareContext(ctx, insertSQL(n, sh))
		if err != nil {
			return nil, err
		}
		found.inserts[i] = st.(stmt)
	}
	return found.inserts[i], nil
}

// prepareInserts prepares the INSERTs of 1, 2, 4, ... maxRows records
// that bind every column.
func (s *Store) prepareInserts(ctx context.Context) error {
	return s.raw(func(c driver.Conn) error {
		for i := range s.inserts {
			st, err := c.(driver.ConnPrepareContext).PrepareContext(ctx, insertSQL(1<<i, allColumns))
			if err != nil {
				return err
			}
			s.inserts[i] = st.(stmt)
		}
		s.args = make([]driver.NamedValue, maxRows*nColumns)
		for i := range s.args {
			s.args[i].Ordinal = i + 1
		}
		return nil
	})
}
