package wield

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestIDEncoding checks the unrolled encoder against the plain one: 128 bits
// as 26 base32 digits, most significant first.
func TestIDEncoding(t *testing.T) {
	for range 10000 {
		hi, lo := rand.Uint64(), rand.Uint64()
		var raw [16]byte
		binary.BigEndian.PutUint64(raw[0:8], hi)
		binary.BigEndian.PutUint64(raw[8:16], lo)
		var want [26]byte
		h, l := hi, lo
		for i := 25; i >= 0; i-- {
			want[i] = crockford[l&31]
			l = l>>5 | h<<59
			h >>= 5
		}
		if got := encodeID(&raw); got != string(want[:]) {
			t.Fatalf("%x%x: got %s, want %s", hi, lo, got, want)
		}
	}
}

// decodeID is encodeID's inverse, for tests.
func decodeID(t testing.TB, id string) (hi, lo uint64) {
	t.Helper()
	if len(id) != 26 {
		t.Fatalf("id %q: %d characters, want 26", id, len(id))
	}
	for _, c := range []byte(id) {
		d := strings.IndexByte(crockford, c)
		if d < 0 {
			t.Fatalf("id %q: %q is not lowercase Crockford base32", id, c)
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(d)
	}
	return hi, lo
}

// TestIDLayout checks the time in the first 48 bits, and the order of IDs
// of different milliseconds.
func TestIDLayout(t *testing.T) {
	t0 := time.UnixMilli(1764115200123)
	prev := ""
	for i := range 100 {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		id := NewIDAt(at)
		hi, _ := decodeID(t, id)
		if ms := int64(hi >> 16); ms != at.UnixMilli() {
			t.Fatalf("id %s holds %d ms, want %d", id, ms, at.UnixMilli())
		}
		if id <= prev {
			t.Fatalf("id %s of a later millisecond sorts before %s", id, prev)
		}
		prev = id
	}
}

// TestIDUnguessable is the guess of a client that holds two IDs made one
// after the other and looks for a third made between or after them: with
// the earlier layout (a per-process prefix and a counter) seven guesses
// found it. Every one of the 80 bits after the time must vary between
// consecutive IDs made in the same millisecond, each about half the time,
// and no ID may be a small step from the one before.
func TestIDUnguessable(t *testing.T) {
	const n = 4000
	at := time.UnixMilli(1764115200123)
	var flips [80]int
	seen := make(map[string]bool, n)
	prevHi, prevLo := decodeID(t, NewIDAt(at))
	for range n {
		id := NewIDAt(at)
		if seen[id] {
			t.Fatalf("id %s made twice", id)
		}
		seen[id] = true
		hi, lo := decodeID(t, id)
		if hi>>16 != prevHi>>16 {
			t.Fatalf("id %s: the time changed", id)
		}
		// The 80 random bits: the low 16 of hi, all of lo.
		dh, dl := (hi^prevHi)&0xffff, lo^prevLo
		for b := range 64 {
			flips[b] += int(dl >> b & 1)
		}
		for b := range 16 {
			flips[64+b] += int(dh >> b & 1)
		}
		// A guesser steps from an ID it holds: ±2^20 around it finds nothing.
		if d := lo - prevLo; dh == 0 && (d < 1<<20 || -d < 1<<20) {
			t.Fatalf("id %s is %d steps from the one before", id, int64(d))
		}
		prevHi, prevLo = hi, lo
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
	if varying < 80 {
		t.Errorf("%d of the 80 random bits vary between consecutive IDs, want 80", varying)
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
		binary.BigEndian.PutUint64(raw[0:8], uint64(time.Now().UnixMilli())<<16)
		_, _ = crand.Read(raw[6:16])
		_ = encodeID(&raw)
	}
}

func BenchmarkNewIDCounter(b *testing.B) {
	var prefix [4]byte
	var counter atomic.Uint64
	b.ReportAllocs()
	for b.Loop() {
		var raw [16]byte
		binary.BigEndian.PutUint64(raw[0:8], uint64(time.Now().UnixMilli())<<16)
		copy(raw[6:10], prefix[:])
		n := counter.Add(1)
		raw[10] = byte(n >> 40)
		raw[11] = byte(n >> 32)
		binary.BigEndian.PutUint32(raw[12:16], uint32(n))
		_ = encodeID(&raw)
	}
}
