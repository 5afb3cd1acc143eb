package sqlite

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"sync"
)

// The journal is what a sync Save is acknowledged from: the encoded record
// is appended to a file beside the database with write(2), one write for
// every record that arrived meanwhile (group commit), and Save returns; the
// records are then inserted into the database in the background in large
// transactions, as in async mode, and Open inserts whatever a crash left in
// the journal. A sync Save therefore keeps the promise it always made (the
// record survives the crash of the process: the operating system has it;
// like the database, which runs with synchronous=NORMAL, it may not survive
// a power failure), at a fraction of the cost of a transaction per group:
// an INSERT of a few records touches five B-trees and writes as many pages
// to the write-ahead log, where the journal writes a few hundred bytes.
//
// The journal is two files, <db>-records-0 and -1: appends go to one until
// it holds journalSegment bytes and the other is empty, then to the other;
// a file whose records are all in the database is truncated. Each record
// is framed as a length, a CRC-32C of the payload, and the payload (the
// sequence number of its append, and the row's values); replay reads each
// file up to the first frame that is cut off or does not match its
// checksum, the end of what the last write got to write, and inserts the
// records in the order of their appends.
//
// One process journals a database at a time (a non-blocking exclusive lock
// on the first file: flock, or LockFileEx on Windows, journal_*.go);
// a store that finds it taken writes every group in a transaction, as
// without a journal.
type journal struct {
	mu      sync.Mutex
	files   [2]*os.File
	cur     int      // the file appends go to
	size    [2]int64 // bytes in each file
	pending [2]int   // records in each file not yet in the database
	damaged [2]bool  // holds a partial write that could not be cut off
	seq     uint64   // of the last append
	buf     []byte
}

// journalSegment is the size past which appends move to the other file,
// once that one is empty.
const journalSegment = 4 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// openJournal opens the journal of the database at path, or returns nil
// and no error when another process has it.
func openJournal(path string) (*journal, error) {
	j := &journal{}
	for i := range j.files {
		f, err := os.OpenFile(fmt.Sprintf("%s-records-%d", path, i), journalFlags, 0o600)
		if err != nil {
			j.close()
			return nil, err
		}
		j.files[i] = f
		if i == 0 {
			ok, err := lockJournal(f)
			if !ok {
				j.close()
				if err != nil {
					return nil, fmt.Errorf("lock journal: %w", err)
				}
				return nil, nil
			}
		}
	}
	return j, nil
}

// read returns the records of both files in the order they were appended
// (by the sequence number of their append), and how many files ended in a
// frame that was cut off or damaged; later appends are numbered after them.
func (j *journal) read() (rows []*row, torn int, err error) {
	for _, f := range j.files {
		b, err := io.ReadAll(io.NewSectionReader(f, 0, math.MaxInt64))
		if err != nil {
			return nil, 0, err
		}
		for len(b) > 0 {
			w, n, ok := decodeRow(b)
			if !ok {
				torn++
				break
			}
			rows = append(rows, w)
			b = b[n:]
		}
	}
	slices.SortStableFunc(rows, func(a, b *row) int { return cmp.Compare(a.seq, b.seq) })
	if len(rows) > 0 {
		j.seq = rows[len(rows)-1].seq
	}
	return rows, torn, nil
}

// reset empties both files, once their records are in the database.
func (j *journal) reset() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var errs []error
	for i, f := range j.files {
		errs = append(errs, f.Truncate(0))
		j.size[i], j.pending[i] = 0, 0
	}
	j.cur = 0
	j.damaged = [2]bool{}
	return errors.Join(errs...)
}

// append writes rows with one write(2) and notes in each row the file it
// went to.
func (j *journal) append(rows []*row) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	other := 1 - j.cur
	if (j.size[j.cur] >= journalSegment || j.damaged[j.cur]) && j.size[other] == 0 && !j.damaged[other] {
		j.cur = other
	}
	if j.damaged[j.cur] {
		// Records appended after a partial frame would not be replayed.
		return errors.New("write journal: both files hold a partial write that could not be cut off")
	}
	j.seq++
	b := j.buf[:0]
	for _, w := range rows {
		w.seq = j.seq
		b = appendRow(b, w)
		w.seg = int8(j.cur)
	}
	j.buf = b
	f := j.files[j.cur]
	if _, err := appendJournal(f, b); err != nil {
		// The records of this write are refused to their callers; what it
		// wrote of them goes, or a cut frame would end the replay of the
		// records appended after it. If it cannot go, appends move to the
		// other file once that is empty.
		if terr := f.Truncate(j.size[j.cur]); terr != nil {
			j.damaged[j.cur] = true
			return fmt.Errorf("write journal: %w (and cutting the partial write: %w)", err, terr)
		}
		return fmt.Errorf("write journal: %w", err)
	}
	j.size[j.cur] += int64(len(b))
	j.pending[j.cur] += len(rows)
	return nil
}

// applied notes that rows are in the database, and truncates a file none of
// whose records still wait.
func (j *journal) applied(rows []*row) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, w := range rows {
		j.pending[w.seg]--
	}
	var errs []error
	for i, f := range j.files {
		if j.pending[i] == 0 && (j.size[i] > 0 || j.damaged[i]) {
			if err := f.Truncate(0); err != nil {
				errs = append(errs, err)
				continue
			}
			j.size[i], j.damaged[i] = 0, false
		}
	}
	return errors.Join(errs...)
}

func (j *journal) close() error {
	var errs []error
	if j.files[0] != nil {
		unlockJournal(j.files[0])
	}
	for _, f := range j.files {
		if f != nil {
			errs = append(errs, f.Close()) // closing releases the lock
		}
	}
	return errors.Join(errs...)
}

// The values of a row, as the journal frames them.
const (
	valNull = iota
	valInt
	valText
	valBlob
)

// appendRow appends w's frame: length, CRC-32C, then the payload: the
// append's sequence number as a varint, and each value as a kind byte and,
// for integers, a varint, for text and blobs, a length and bytes.
func appendRow(b []byte, w *row) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	b = binary.AppendUvarint(b, w.seq)
	for _, v := range w.vals {
		switch x := v.(type) {
		case nil:
			b = append(b, valNull)
		case int64:
			b = binary.AppendVarint(append(b, valInt), x)
		case string:
			b = append(binary.AppendUvarint(append(b, valText), uint64(len(x))), x...)
		case []byte:
			b = append(binary.AppendUvarint(append(b, valBlob), uint64(len(x))), x...)
		default:
			panic(fmt.Sprintf("sqlite journal: value of type %T", v)) // newRow makes none
		}
	}
	payload := b[start+8:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b
}

// decodeRow reads one frame from the start of b: the row, the frame's
// length, and whether it was whole and intact.
func decodeRow(b []byte) (*row, int, bool) {
	if len(b) < 8 {
		return nil, 0, false
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n > len(b)-8 || crc32.Checksum(b[8:8+n], castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, 0, false
	}
	p := b[8 : 8+n]
	w := &row{}
	seq, k := binary.Uvarint(p)
	if k <= 0 {
		return nil, 0, false
	}
	w.seq, p = seq, p[k:]
	for i := range w.vals {
		if len(p) == 0 {
			return nil, 0, false
		}
		kind := p[0]
		p = p[1:]
		switch kind {
		case valNull:
		case valInt:
			x, k := binary.Varint(p)
			if k <= 0 {
				return nil, 0, false
			}
			w.vals[i], p = x, p[k:]
		case valText, valBlob:
			l, k := binary.Uvarint(p)
			if k <= 0 || l > uint64(len(p)-k) {
				return nil, 0, false
			}
			v := p[k : k+int(l)]
			if kind == valText {
				w.vals[i] = string(v)
			} else {
				w.vals[i] = append([]byte(nil), v...)
			}
			p = p[k+int(l):]
		default:
			return nil, 0, false
		}
	}
	if len(p) != 0 {
		return nil, 0, false
	}
	w.id, _ = w.vals[0].(string)
	return w, 8 + n, w.id != ""
}
