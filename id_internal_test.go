package wield

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wieldhq/wield/internal/racedetect"
)

// TestIDEncoding checks the encoder against math/big: 135 bits as 27 base32
// digits, most significant first.
func TestIDEncoding(t *testing.T) {
	for range 10000 {
		h, m, l := rand.Uint64()&127, rand.Uint64(), rand.Uint64()
		v := new(big.Int).Lsh(new(big.Int).SetUint64(h), 128)
		v.Or(v, new(big.Int).Lsh(new(big.Int).SetUint64(m), 64))
		v.Or(v, new(big.Int).SetUint64(l))
		var want [IDLen]byte
		d := new(big.Int)
		for i := IDLen - 1; i >= 0; i-- {
			v.DivMod(v, big.NewInt(32), d)
			want[i] = crockford[d.Int64()]
		}
		if got := encodeID(h, m, l); got != string(want[:]) {
			t.Fatalf("%x:%x:%x: got %s, want %s", h, m, l, got, want)
		}
	}
}

// decodeID is encodeID's inverse, for tests: the microseconds and the 83
// random bits (the top 19 in r1, the low 64 in r0).
func decodeID(t testing.TB, id string) (us, r1, r0 uint64) {
	t.Helper()
	if len(id) != IDLen {
		t.Fatalf("id %q: %d characters, want %d", id, len(id), IDLen)
	}
	var h, m, l uint64
	for _, c := range []byte(id) {
		d := strings.IndexByte(crockford, c)
		if d < 0 {
			t.Fatalf("id %q: %q is not lowercase Crockford base32", id, c)
		}
		h = h<<5 | m>>59
		m = m<<5 | l>>59
		l = l<<5 | uint64(d)
	}
	return h<<45 | m>>19, m & (1<<19 - 1), l
}

// TestIDLayout checks the time in the first 52 bits, and the order of IDs
// of different microseconds.
func TestIDLayout(t *testing.T) {
	t0 := time.UnixMicro(3764115200123456) // well after any ID made so far in this process
	prev := ""
	for i := range 100 {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		id := NewIDAt(at)
		us, _, _ := decodeID(t, id)
		if int64(us) != at.UnixMicro() {
			t.Fatalf("id %s holds %d µs, want %d", id, us, at.UnixMicro())
		}
		if id <= prev {
			t.Fatalf("id %s of a later time sorts before %s", id, prev)
		}
		prev = id
	}
}

// TestIDOrder: the IDs one process makes sort in the order it made them,
// even many in one microsecond and from several goroutines at once.
func TestIDOrder(t *testing.T) {
	at := time.Now()
	prev := ""
	for range 10000 {
		id := NewIDAt(at) // the same time: each takes the next microsecond
		if id <= prev {
			t.Fatalf("id %s sorts before the one made before it, %s", id, prev)
		}
		prev = id
	}
	var wg sync.WaitGroup
	seen := sync.Map{}
	for range 4 {
		wg.Go(func() {
			last := ""
			for range 5000 {
				id := NewID()
				if id <= last {
					t.Errorf("id %s sorts before %s, made before it on the same goroutine", id, last)
					return
				}
				if _, dup := seen.LoadOrStore(id, true); dup {
					t.Errorf("id %s made twice", id)
					return
				}
				last = id
			}
		})
	}
	wg.Wait()
}

// TestIDUnguessable is the guess of a client that holds two IDs made one
// after the other and looks for a third made between or after them: with
// the earlier layout (a per-process prefix and a counter) seven guesses
// found it. Every one of the 83 random bits must vary between consecutive
// IDs, each about half the time, and no ID may be a small step from the one
// before.
func TestIDUnguessable(t *testing.T) {
	const n = 4000
	at := time.UnixMicro(3764115200123456)
	var flips [83]int
	seen := make(map[string]bool, n)
	_, prev1, prev0 := decodeID(t, NewIDAt(at))
	for range n {
		id := NewIDAt(at)
		if seen[id] {
			t.Fatalf("id %s made twice", id)
		}
		seen[id] = true
		_, r1, r0 := decodeID(t, id)
		d1, d0 := r1^prev1, r0^prev0
		for b := range 64 {
			flips[b] += int(d0 >> b & 1)
		}
		for b := range 19 {
			flips[64+b] += int(d1 >> b & 1)
		}
		// A guesser steps from an ID it holds: ±2^20 around it finds nothing.
		if d := r0 - prev0; d1 == 0 && (d < 1<<20 || -d < 1<<20) {
			t.Fatalf("id %s is %d steps from the one before", id, int64(d))
		}
		prev1, prev0 = r1, r0
	}
	varying := 0
	for b, f := range flips {
		// Each bit flips in about half the pairs; 4000 pairs put a fair
		// bit within 40% to 60% with overwhelming probability.
		if f < n*2/5 || f > n*3/5 {
			t.Errorf("random bit %d changed in %d of %d consecutive pairs, want about half", b, f, n)
			continue
		}
		varying++
	}
	if varying < 83 {
		t.Errorf("%d of the 83 random bits vary between consecutive IDs, want 83", varying)
	}
}

// BenchmarkNewID measures an ID; BenchmarkNewIDCryptoRand (crypto/rand
// for every ID) and BenchmarkNewIDCounter (the earlier guessable layout),
// the alternatives, in the same run, for the comparison in NewID's doc.
func BenchmarkNewID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = NewID()
	}
}

func BenchmarkNewIDCryptoRand(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var raw [16]byte
		_, _ = crand.Read(raw[5:16])
		us := uint64(time.Now().UnixMicro())
		_ = encodeID(us>>45, us<<19|binary.BigEndian.Uint64(raw[0:8])&(1<<19-1), binary.BigEndian.Uint64(raw[8:16]))
	}
}

func BenchmarkNewIDCounter(b *testing.B) {
	var prefix [4]byte
	var counter atomic.Uint64
	b.ReportAllocs()
	for b.Loop() {
		n := counter.Add(1)
		us := uint64(time.Now().UnixMicro())
		_ = encodeID(us>>45, us<<19|uint64(prefix[0])<<8|uint64(prefix[1]), uint64(prefix[2])<<56|uint64(prefix[3])<<48|n&(1<<48-1))
	}
}

// TestIDChunks checks that IDs sharing a chunk of text stay as they were
// made while later IDs are written after them, in one generator and
// across goroutines, and that an ID costs a fraction of an allocation.
func TestIDChunks(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]string, 0, 10*idChunk)
			copies := make([]string, 0, 10*idChunk)
			for range 10 * idChunk {
				id := NewID()
				ids = append(ids, id)
				copies = append(copies, strings.Clone(id))
			}
			for i := range ids {
				if ids[i] != copies[i] {
					t.Errorf("ID %d changed after later IDs: %q, made as %q", i, ids[i], copies[i])
					return
				}
				if i > 0 && ids[i] <= ids[i-1] {
					t.Errorf("ID %d (%s) does not sort after the one before (%s)", i, ids[i], ids[i-1])
					return
				}
			}
		}()
	}
	wg.Wait()
	if racedetect.Enabled {
		return // the race detector's pool drops chunks: counts measure it, not NewID
	}
	if n := testing.AllocsPerRun(10*idChunk, func() { _ = NewID() }); n > 0.5 {
		t.Errorf("NewID: %.2f allocations an ID, want at most one a chunk of %d", n, idChunk)
	}
	bus := NewBus(8)
	if n := testing.AllocsPerRun(10*idChunk, func() { bus.Publish(Event{Type: EventToolAdded}) }); n > 0.5 {
		t.Errorf("Publish: %.2f allocations an event, want at most one a chunk of %d", n, idChunk)
	}
}
