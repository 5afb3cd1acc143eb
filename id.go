package wield

import (
	"crypto/rand"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// IDLen is the length of the IDs [NewID] makes.
const IDLen = 27

// NewID returns a unique, time-sortable identifier that nobody can guess:
// 52 bits of microseconds since 1970 and 83 random bits, in 27 characters
// of lowercase Crockford base32. Call, approval, artifact and event IDs are
// NewIDs, and whoever sees some of them learns nothing of the others: an ID
// is found by guessing only with its 83 random bits right, one chance in
// 10^25 a guess. The random bits also keep apart the IDs of different
// processes, servers and restarts.
//
// IDs sort by their time, and the IDs one process makes sort in the order
// it made them: the microseconds are made strictly increasing within the
// process (an ID in the same microsecond as the one before takes the next
// microsecond, so the clock runs ahead only while more than a million IDs a
// second are made). So records listed by ID are in the order their calls
// arrived, which a millisecond and random bits could not keep (random order
// within a millisecond). 52 bits of microseconds last until 2112.
//
// The random bits come from ChaCha8 generators (math/rand/v2's, a
// cryptographically strong generator), one per goroutine that needs one at
// a time, each seeded from crypto/rand. Measured in the same run
// (BenchmarkNewID*, go1.26, linux/amd64, 2 vCPUs shared with a busy build):
// 258 ns an ID, where crypto/rand for every ID took 409 ns (a system call,
// no vDSO here) and the earlier guessable layout (a fixed per-process
// prefix and a counter) 308 ns; on a quiet machine the first is ~110 ns.
func NewID() string { return NewIDAt(time.Now()) }

// NewIDAt is [NewID] for a time the caller has already read.
func NewIDAt(t time.Time) string {
	g := idGens.Get().(*idGen)
	id := g.at(g.random(), t)
	idGens.Put(g)
	return id
}

// idRandom is the random part of an ID drawn ahead of its time, so that
// whoever must make IDs in order under a lock (the event bus) draws it
// before taking the lock.
type idRandom struct{ a, b uint64 }

// idChunk is how many IDs an idGen writes into one allocation of text.
// An ID kept alive keeps its chunk (448 bytes) alive with it; the event
// ring, which keeps IDs by the thousand, keeps most of each chunk's IDs
// anyway.
const idChunk = 16

// idGen makes IDs: its generator draws their random bits, and their text
// goes into text, idChunk IDs to an allocation (an ID's own string was an
// allocation of every ID, three of every call: its ID and two events').
// The IDs already written are never written again: a strings.Builder only
// appends, and a string it returned stays as it was.
type idGen struct {
	rng  *mrand.ChaCha8
	text strings.Builder
}

// idGens holds the generators of NewID and of the event bus. A generator
// dropped by the pool takes its state with it; a new one gets a fresh
// seed.
var idGens = sync.Pool{New: func() any {
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // never fails: crypto/rand crashes the program rather than return less
	return &idGen{rng: mrand.NewChaCha8(seed)}
}}

func (g *idGen) random() idRandom { return idRandom{g.rng.Uint64(), g.rng.Uint64()} }

// at makes the ID of time t (moved after the process's last ID's, as
// NewIDAt does) with r's random bits.
func (g *idGen) at(r idRandom, t time.Time) string {
	us := lastMicro.next(uint64(t.UnixMicro()))
	// 135 bits = us<<83 | 83 random bits, in three words: h (the top 7),
	// m (the next 64) and l (the low 64).
	var out [IDLen]byte
	encodeIDTo(&out, us>>45, us<<19|r.a&(1<<19-1), r.b)
	if g.text.Cap()-g.text.Len() < IDLen {
		g.text.Reset()
		g.text.Grow(idChunk * IDLen)
	}
	g.text.Write(out[:])
	s := g.text.String()
	return s[len(s)-IDLen:]
}

// micros hands out strictly increasing microseconds.
type micros struct{ last atomic.Uint64 }

var lastMicro micros

// next is us, or the microsecond after the last one handed out when us is
// not after it.
func (m *micros) next(us uint64) uint64 {
	for {
		last := m.last.Load()
		if us <= last {
			us = last + 1
		}
		if m.last.CompareAndSwap(last, us) {
			return us
		}
	}
}

// encodeID writes the 135 bits h:m:l (h holds 7) as 27 base32 digits, most
// significant first.
func encodeID(h, m, l uint64) string {
	var out [IDLen]byte
	encodeIDTo(&out, h, m, l)
	return string(out[:])
}

// encodeIDTo is encodeID into out.
func encodeIDTo(out *[IDLen]byte, h, m, l uint64) {
	for i := IDLen - 1; i >= 0; i-- {
		out[i] = crockford[l&31]
		l = l>>5 | m<<59
		m = m>>5 | h<<59
		h >>= 5
	}
}
