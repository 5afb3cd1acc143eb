package sqlite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRowFillReused fills a row that held a record of every other shape
// and checks that it holds exactly what a new row of the record holds:
// nothing of the record before it is left in a column, and the copies of
// its bytes are its own.
func TestRowFillReused(t *testing.T) {
	for _, copyBytes := range []bool{true, false} {
		for before := range 32 {
			for k := range 32 {
				want, err := newRow(shapedRecord(1000+k, k), copyBytes)
				if err != nil {
					t.Fatal(err)
				}
				w, err := newRow(shapedRecord(before, before), copyBytes)
				if err != nil {
					t.Fatal(err)
				}
				release([]*row{w})
				r := shapedRecord(1000+k, k)
				if err := w.fill(r, r.Call.ID, r.Call.Tool, copyBytes); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.vals[:], w.vals[:]); diff != "" || w.id != want.id || w.err != nil || w.seq != 0 || w.seg != 0 {
					t.Fatalf("copy %v, shape %d filled after shape %d (-want +got):\n%s", copyBytes, k, before, diff)
				}
				if copyBytes && len(w.buf) != len(want.buf) {
					t.Fatalf("copy %v, shape %d filled after shape %d: %d bytes of copies, want %d", copyBytes, k, before, len(w.buf), len(want.buf))
				}
			}
		}
	}
}

// TestRowReleaseBounded checks that a pooled row keeps no large buffer and
// no value of the record it held.
func TestRowReleaseBounded(t *testing.T) {
	r := shapedRecord(1, 0)
	r.Result.Output = make([]byte, 2*maxPooledBuf)
	w, err := newRow(r, true)
	if err != nil {
		t.Fatal(err)
	}
	release([]*row{w})
	if w.buf != nil || w.id != "" || w.vals != ([nColumns]any{}) {
		t.Fatalf("released row keeps %d bytes of room, id %q, values %v", cap(w.buf), w.id, w.vals)
	}
	small, err := newRow(shapedRecord(2, 0), true)
	if err != nil {
		t.Fatal(err)
	}
	release([]*row{small})
	if small.buf == nil || len(small.buf) != 0 {
		t.Fatalf("released small row: buffer %v, want its room kept and empty", small.buf)
	}
}
