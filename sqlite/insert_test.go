package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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
// prepared, alone and mixed, and a duplicate id alone and amid a batch, and
// checks that every column holds what the record's row binds, of the same
// type: a NULL literal stores what a bound NULL did.
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
	// The duplicate amid a batch: its INSERT rolls the transaction back,
	// and the batch is written again record by record, all but it kept.
	var mixed []*row
	for j := range 80 {
		if j == 41 {
			mixed = append(mixed, dup)
		}
		mixed = append(mixed, nil)
		mixed = add(mixed[:len(mixed)-1], j%32)
	}
	batches = append(batches, mixed)
	for _, b := range batches {
		if err := s.write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if dup.err == nil {
		t.Error("a record whose id is taken was not refused")
	}
	for _, w := range mixed {
		if w != dup && w.err != nil {
			t.Errorf("record %s refused beside the duplicate: %v", w.id, w.err)
		}
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

// TestInsertSQLShared checks the parameters of an INSERT that binds the
// shared columns once: the first record's numbered in column order, the
// others naming them again beside their own.
func TestInsertSQLShared(t *testing.T) {
	sh := shape(1<<0 | 1<<1 | 1<<2 | 1<<24) // id, tool, ok, raw_arguments
	shared := shape(1<<1 | 1<<2)            // tool, ok
	got := insertSQL(3, sh, shared)
	row := func(a, b, c, d string) string {
		cols := []string{a, b, c}
		for range 21 {
			cols = append(cols, "NULL")
		}
		cols = append(cols, d)
		for range 5 {
			cols = append(cols, "NULL")
		}
		return "(" + strings.Join(cols, ", ") + ")"
	}
	want := "INSERT OR ROLLBACK INTO calls (" + columns + ") VALUES " + row("?", "?", "?", "?") + ", " + row("?", "?2", "?3", "?") + ", " + row("?", "?2", "?3", "?")
	if got != want {
		t.Fatalf("insertSQL:\n got %s\nwant %s", got, want)
	}
	if got, want := insertSQL(2, sh, 0), "INSERT OR ROLLBACK INTO calls ("+columns+") VALUES "+row("?", "?", "?", "?")+", "+row("?", "?", "?", "?"); got != want {
		t.Fatalf("insertSQL without shared columns:\n got %s\nwant %s", got, want)
	}
}

// TestSharedOf: the sharable columns a shape binds, when every one holds
// the same value in all the records; else none.
func TestSharedOf(t *testing.T) {
	rows := func(ks ...int) []*row {
		var out []*row
		for i, k := range ks {
			w, err := newRow(shapedRecord(i, k), true)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, w)
		}
		return out
	}
	same := rows(0, 0, 0)
	if got, want := sharedOf(same, shapeOf(same)), shapeOf(same)&sharable; got != want || got == 0 {
		t.Errorf("three records alike: shared %b, want %b", got, want)
	}
	if got := sharedOf(same[:1], shapeOf(same[:1])); got != 0 {
		t.Errorf("one record: shared %b, want none", got)
	}
	mixed := rows(0, 4) // an error beside a success: ok and error_type differ
	if got := sharedOf(mixed, shapeOf(mixed)); got != 0 {
		t.Errorf("a success and a failure: shared %b, want none", got)
	}
	other := rows(0, 0)
	other[1].vals[1] = "other_tool"
	if got := sharedOf(other, shapeOf(other)); got != 0 {
		t.Errorf("two tools: shared %b, want none", got)
	}
}
