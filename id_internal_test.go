package wield

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
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
