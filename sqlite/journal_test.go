package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

func journalRecord(i int, output string) *wield.Record {
	at := time.Date(2026, 11, 21, 12, 0, i, 0, time.UTC)
	id := fmt.Sprintf("call-%04d", i)
	c := &wield.Call{ID: id, Tool: "echo", Arguments: json.RawMessage(`{"message":"hi"}`),
		Caller: wield.Caller{ID: "agent", ConversationID: "conv", Variables: map[string]any{"n": i}}}
	res := &wield.Result{CallID: id, Tool: "echo", OK: true, Output: json.RawMessage(output), Attempts: 1,
		StartedAt: at, FinishedAt: at.Add(time.Millisecond), Duration: time.Millisecond}
	return &wield.Record{Call: c, Arguments: c.Arguments, Result: res, QueuedAt: at}
}

func TestJournalFrames(t *testing.T) {
	var rows []*row
	var b []byte
	for i := range 3 {
		w, err := newRow(journalRecord(i, `"x"`), true)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, w)
		b = appendRow(b, w)
	}
	var got []*row
	for p := b; len(p) > 0; {
		w, n, ok := decodeRow(p)
		if !ok {
			t.Fatalf("frame %d does not decode", len(got))
		}
		got = append(got, w)
		p = p[n:]
	}
	if diff := cmp.Diff(rows, got, cmp.Comparer(func(a, b *row) bool { return cmp.Equal(a.vals, b.vals) && a.id == b.id })); diff != "" {
		t.Errorf("decoded rows differ (-want +got):\n%s", diff)
	}
	// A frame cut anywhere, or with any byte changed, does not decode.
	last := len(b) - len(appendRow(nil, rows[2]))
	for cut := last; cut < len(b); cut += 7 {
		if _, _, ok := decodeRow(b[last:cut]); ok {
			t.Errorf("a frame cut at %d of %d decodes", cut-last, len(b)-last)
		}
	}
	for i := last; i < len(b); i += 5 {
		c := append([]byte(nil), b[last:]...)
		c[i-last] ^= 0x40
		if _, _, ok := decodeRow(c); ok {
			t.Errorf("a frame with byte %d changed decodes", i-last)
		}
	}
}

// TestJournalReplay opens a store over a journal that a crash left behind,
// its last frame cut off: the whole records are in the database, once, and
// the journal is empty.
func TestJournalReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	s, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.jr == nil {
		t.Fatal("a sync store has no journal")
	}
	// One record goes the normal way: in the database and, until it is
	// applied, in the journal; the crash then leaves it in the journal too.
	if err := s.Save(t.Context(), journalRecord(0, `"saved"`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	var b []byte
	for i := range 5 {
		w, err := newRow(journalRecord(i, fmt.Sprintf(`"replayed %d"`, i)), true)
		if err != nil {
			t.Fatal(err)
		}
		b = appendRow(b, w)
	}
	cut, err := newRow(journalRecord(99, `"cut"`), true)
	if err != nil {
		t.Fatal(err)
	}
	whole := appendRow(nil, cut)
	b = append(b, whole[:len(whole)-3]...)
	if err := os.WriteFile(path+"-records-1", b, 0o600); err != nil {
		t.Fatal(err)
	}

	s, err = Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	page, err := s.Calls(t.Context(), wield.CallQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range page.Records {
		got = append(got, r.Call.ID+"="+string(r.Result.Output))
	}
	want := []string{`call-0004="replayed 4"`, `call-0003="replayed 3"`, `call-0002="replayed 2"`, `call-0001="replayed 1"`, `call-0000="saved"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records after replay (-want +got):\n%s", diff)
	}
	for i := range 2 {
		if fi, err := os.Stat(fmt.Sprintf("%s-records-%d", path, i)); err != nil || fi.Size() != 0 {
			t.Errorf("journal file %d after replay: %v, %v; want empty", i, fi.Size(), err)
		}
	}
}

// TestJournalSegments fills one journal file past its size, so that appends
// move to the other, and checks that each is emptied once its records are
// applied.
func TestJournalSegments(t *testing.T) {
	j, err := openJournal(filepath.Join(t.TempDir(), "w.db"))
	if err != nil || j == nil {
		t.Fatal(j, err)
	}
	defer j.close()
	big := `"` + strings.Repeat("x", 1<<20) + `"`
	var first, second []*row
	for i := 0; j.cur == 0; i++ {
		if i > 10 {
			t.Fatal("appends never moved to the second file")
		}
		w, err := newRow(journalRecord(i, big), true)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.append([]*row{w}); err != nil {
			t.Fatal(err)
		}
		if w.seg == 0 {
			first = append(first, w)
		} else {
			second = append(second, w)
		}
	}
	if len(first) != 4 || len(second) != 1 {
		t.Fatalf("%d records in the first file, %d in the second; want 4 and 1", len(first), len(second))
	}
	rows, torn, err := j.read()
	if err != nil || torn != 0 || len(rows) != 5 || rows[0].id != first[0].id || rows[4].id != second[0].id {
		t.Fatalf("read = %d rows (torn %d, %v); want the 5 in order", len(rows), torn, err)
	}
	size := func(i int) int64 {
		fi, err := j.files[i].Stat()
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if err := j.applied(first[:3]); err != nil {
		t.Fatal(err)
	}
	if size(0) == 0 {
		t.Error("the first file was emptied with a record still waiting")
	}
	if err := j.applied(first[3:]); err != nil {
		t.Fatal(err)
	}
	if size(0) != 0 || size(1) == 0 {
		t.Errorf("sizes %d and %d; want the first file empty, the second not", size(0), size(1))
	}
	if err := j.applied(second); err != nil {
		t.Fatal(err)
	}
	if size(1) != 0 {
		t.Errorf("second file holds %d bytes with nothing waiting", size(1))
	}
}

// TestJournalTaken opens a second store on the same file: the journal is
// the first one's, so the second writes every group in a transaction, and
// each sees the other's records.
func TestJournalTaken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	a, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	b, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	if a.jr == nil || b.jr != nil {
		t.Fatalf("journals: first %v, second %v; want only the first", a.jr != nil, b.jr != nil)
	}
	if err := a.Save(t.Context(), journalRecord(1, `"a"`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(t.Context(), journalRecord(2, `"b"`)); err != nil {
		t.Fatal(err)
	}
	// Without a journal, a taken id is refused at once.
	if err := b.Save(t.Context(), journalRecord(2, `"again"`)); err == nil {
		t.Error("the second store saved a taken id")
	}
	// The first store's records reach the database in the background;
	// another store sees them once they are there.
	if err := a.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{a, b} {
		for _, id := range []string{"call-0001", "call-0002"} {
			if _, err := s.Call(t.Context(), id); err != nil {
				t.Errorf("store %p: %v", s, err)
			}
		}
	}
}

// TestJournalReplayOrder replays two files whose appends interleave: the
// records go in in the order of their appends, so that of two records
// under one ID the first appended stands, whichever file holds it.
func TestJournalReplayOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	frame := func(seq uint64, i int, out string) []byte {
		w, err := newRow(journalRecord(i, out), true)
		if err != nil {
			t.Fatal(err)
		}
		w.seq = seq
		return appendRow(nil, w)
	}
	zero := append(frame(2, 7, `"second"`), frame(4, 8, `"fourth"`)...)
	one := append(frame(1, 7, `"first"`), frame(3, 9, `"third"`)...)
	if err := os.WriteFile(path+"-records-0", zero, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-records-1", one, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	r, err := s.Call(t.Context(), "call-0007")
	if err != nil || string(r.Result.Output) != `"first"` {
		t.Fatalf("call-0007 = %v, %v; want the first append's record", r, err)
	}
	for _, id := range []string{"call-0008", "call-0009"} {
		if _, err := s.Call(t.Context(), id); err != nil {
			t.Error(err)
		}
	}
	if s.jr.seq != 4 {
		t.Errorf("the journal goes on from append %d, want 4", s.jr.seq)
	}
}

// TestJournalAdopted: a sync store that found the journal taken replays it
// once the process that had it is gone, without waiting for an Open.
func TestJournalAdopted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	other, err := openJournal(path) // another process's journal
	if err != nil || other == nil {
		t.Fatal(other, err)
	}
	s, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if s.jr != nil || !s.orphans() {
		t.Fatal("the store took a journal another process holds")
	}
	w, err := newRow(journalRecord(5, `"orphan"`), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.append([]*row{w}); err != nil {
		t.Fatal(err)
	}
	if err := other.close(); err != nil { // the process dies
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := s.Call(t.Context(), "call-0005")
		if err == nil {
			if string(r.Result.Output) != `"orphan"` {
				t.Errorf("output %s", r.Result.Output)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the orphaned record was not replayed within 10 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The replay inserts the records, then empties the journal: the record
	// can be read a moment before the journal is cut.
	for {
		fi, err := os.Stat(path + "-records-0")
		if err == nil && fi.Size() == 0 {
			break
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("%d bytes", fi.Size())
			}
			t.Fatalf("journal after adoption: %v; want it empty within 10 s", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
