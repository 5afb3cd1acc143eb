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

// TestRowReleaseBounded checks that a pooled row keeps no large buffer,
// nothing of the caller's, and of the record it held only the values fill
// may keep: small ones that repeat, and blobs in the buffer it keeps.
func TestRowReleaseBounded(t *testing.T) {
	kept := map[int]bool{}
	for _, j := range keptColumns {
		kept[j] = true
	}
	check := func(name string, w *row, blobs bool) {
		t.Helper()
		if w.id != "" || w.err != nil || w.seq != 0 {
			t.Errorf("%s: released row keeps id %q, err %v, seq %d", name, w.id, w.err, w.seq)
		}
		for j, v := range w.vals {
			if v != nil && !kept[j] && !(blobs && j >= 24 && j < 28) {
				t.Errorf("%s: released row keeps column %d: %v", name, j, v)
			}
		}
	}
	r := shapedRecord(1, 15)
	r.Result.Output = make([]byte, 2*maxPooledBuf)
	w, err := newRow(r, true)
	if err != nil {
		t.Fatal(err)
	}
	release([]*row{w})
	if w.buf != nil {
		t.Fatalf("released row keeps %d bytes of room", cap(w.buf))
	}
	check("large", w, false)
	small, err := newRow(shapedRecord(2, 15), true)
	if err != nil {
		t.Fatal(err)
	}
	release([]*row{small})
	if small.buf == nil || len(small.buf) != 0 {
		t.Fatalf("released small row: buffer %v, want its room kept and empty", small.buf)
	}
	check("small", small, true)
	caller, err := newRow(shapedRecord(3, 15), false)
	if err != nil {
		t.Fatal(err)
	}
	caller.buf = make([]byte, 0, 64) // room from an earlier use
	release([]*row{caller})
	check("caller's bytes", caller, false)
}
