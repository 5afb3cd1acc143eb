package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// shapedRecord is record i with the optional fields of the bits of k
// filled, so that records of different k are of different shapes.
func shapedRecord(i, k int) *wield.Record {
	r := benchRecord(i)
	if k&1 != 0 {
		r.Result.Metadata = map[string]any{"k": k}
	}
	if k&2 != 0 {
		r.Call.Caller.WorkflowID = "wf"
	}
	if k&4 != 0 {
		r.Result.OK, r.Result.Error, r.Result.ErrorType = false, "boom", wield.ErrorType("execution")
	}
	if k&8 != 0 {
		r.Call.IdempotencyKey, r.Digest = fmt.Sprintf("key-%d", i), "digest"
		r.Result.FullOutput = []byte(`{"message":"hello, world, in full"}`)
	}
	if k&16 != 0 {
		r.Call.Caller.ConversationID = ""
		r.QueuedAt = r.QueuedAt.AddDate(-100, 0, 0)
	}
	return r
}

// TestInsertShapes writes chunks of many shapes, more than the store keeps
// prepared, alone and mixed, and a duplicate id among them, and checks that
// every column holds what the record's row binds, of the same type: a NULL
// literal stores what a bound NULL did.
func TestInsertShapes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "wield.db"), &Options{Async: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	var want [][]any
	var batches [][]*row
	i := 0
	add := func(batch []*row, k int) []*row {
		w, err := newRow(shapedRecord(i, k), true)
		if err != nil {
			t.Fatal(err)
		}
		i++
		want = append(want, w.vals[:])
		return append(batch, w)
	}
	for k := range 32 { // each shape alone, in chunks of 2 and 1
		var batch []*row
		for range 3 {
			batch = add(batch, k)
		}
		batches = append(batches, batch)
	}
	for round := range 2 { // shapes mixed in chunks of 64, 32, ...
		var batch []*row
		for j := range 127 {
			batch = add(batch, (j*7+round)%32)
		}
		batches = append(batches, batch)
	}
	dup, err := newRow(shapedRecord(5, 3), true)
	if err != nil {
		t.Fatal(err)
	}
	batches = append(batches, []*row{dup})
	for _, b := range batches {
		if err := s.write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if dup.err == nil {
		t.Error("a record whose id is taken was not refused")
	}
	if len(s.shapes) > maxShapes {
		t.Errorf("%d shapes kept prepared, want at most %d", len(s.shapes), maxShapes)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+columns+` FROM calls ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got [][]any
	for rows.Next() {
		vals := make([]any, nColumns)
		ptrs := make([]any, nColumns)
		for j := range vals {
			ptrs[j] = &vals[j]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		got = append(got, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored columns (-want +got):\n%s", diff)
	}
}
