package schema

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"math"
	"math/bits"
	"reflect"
	"strconv"
)

// equalNodes compares two values as JSON Schema does: numbers by value,
// objects regardless of member order.
func (st *state) equalNodes(a, b int32) bool {
	x, y := &st.d.nodes[a], &st.d.nodes[b]
	if x.kind != y.kind {
		return false
	}
	switch x.kind {
	case kNumber:
		return numEqual(x.raw, y.raw)
	case kString:
		return sameString(x, y)
	case kArray:
		if x.n != y.n {
			return false
		}
		for i := int32(0); i < x.n; i++ {
			if !st.equalNodes(st.d.kids[x.kid+i], st.d.kids[y.kid+i]) {
				return false
			}
		}
		return true
	case kObject:
		if x.n != y.n {
			return false
		}
	outer:
		for i := int32(0); i < x.n; i++ {
			kx := &st.d.nodes[st.d.kids[x.kid+2*i]]
			for j := int32(0); j < y.n; j++ {
				if sameString(kx, &st.d.nodes[st.d.kids[y.kid+2*j]]) {
					if !st.equalNodes(st.d.kids[x.kid+2*i+1], st.d.kids[y.kid+2*j+1]) {
						return false
					}
					continue outer
				}
			}
			return false
		}
		return true
	}
	return true // null, true, false: same kind
}

func numEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	x, err1 := strconv.ParseFloat(string(a), 64)
	y, err2 := strconv.ParseFloat(string(b), 64)
	return err1 == nil && err2 == nil && x == y
}

func (st *state) inEnum(ni int32, enum []any) bool {
	for _, v := range enum {
		if st.equalValue(ni, v) {
			return true
		}
	}
	return false
}

// equalValue compares a node with a Go value decoded from a schema.
func (st *state) equalValue(ni int32, v any) bool {
	n := &st.d.nodes[ni]
	switch v := v.(type) {
	case nil:
		return n.kind == kNull
	case bool:
		return (v && n.kind == kTrue) || (!v && n.kind == kFalse)
	case string:
		return n.kind == kString && string(text(n)) == v
	case json.Number:
		return n.kind == kNumber && numEqual(n.raw, []byte(v))
	case []any:
		if n.kind != kArray || int(n.n) != len(v) {
			return false
		}
		for i, x := range v {
			if !st.equalValue(st.d.kids[n.kid+int32(i)], x) {
				return false
			}
		}
		return true
	case map[string]any:
		if n.kind != kObject || int(n.n) != len(v) {
			return false
		}
		for i := int32(0); i < n.n; i++ {
			x, ok := v[string(text(&st.d.nodes[st.d.kids[n.kid+2*i]]))]
			if !ok || !st.equalValue(st.d.kids[n.kid+2*i+1], x) {
				return false
			}
		}
		return true
	}
	if f, ok := toFloat(v); ok {
		if n.kind != kNumber {
			return false
		}
		g, err := strconv.ParseFloat(string(n.raw), 64)
		return err == nil && g == f
	}
	// Any other Go value: compare JSON forms.
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var x any
	if json.Unmarshal(b, &x) != nil {
		return false
	}
	if reflect.TypeOf(x) == reflect.TypeOf(v) {
		return false // would recurse forever
	}
	return st.equalValue(ni, x)
}

func toFloat(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		return f, !math.IsNaN(f)
	}
	return 0, false
}

// duplicate finds two equal items of array n: the first pair by the index
// of its second item. A short array compares every pair; a long one hashes
// each item (numbers by value, objects regardless of member order, as
// equalNodes compares them) and compares only items of the same hash, so
// that uniqueItems over 20,000 items is 20,000 hashes rather than 200
// million comparisons. Each comparison and each hashed value is a step of
// the walk, so the check ends at its limits.
func (st *state) duplicate(n node) (i, j int32, dup bool) {
	if n.n <= 16 {
		for j := int32(1); j < n.n; j++ {
			for i := int32(0); i < j; i++ {
				if !st.tick(1) {
					return 0, 0, false
				}
				if st.equalNodes(st.d.kids[n.kid+i], st.d.kids[n.kid+j]) {
					return i, j, true
				}
			}
		}
		return 0, 0, false
	}
	seen := make(map[uint64][]int32, n.n)
	for j := int32(0); j < n.n; j++ {
		h, ok := st.hashNode(st.d.kids[n.kid+j])
		if !ok {
			return 0, 0, false
		}
		for _, i := range seen[h] {
			if !st.tick(1) {
				return 0, 0, false
			}
			if st.equalNodes(st.d.kids[n.kid+i], st.d.kids[n.kid+j]) {
				return i, j, true
			}
		}
		seen[h] = append(seen[h], j)
	}
	return 0, 0, false
}

// hashSeed keys the hashes of duplicate for the life of the process.
var hashSeed = maphash.MakeSeed()

// hashNode hashes a value so that values equalNodes finds equal hash the
// same; false when the walk's limits ended it.
func (st *state) hashNode(ni int32) (uint64, bool) {
	if !st.tick(1) {
		return 0, false
	}
	x := &st.d.nodes[ni]
	h := uint64(x.kind) + 1
	switch x.kind {
	case kNumber:
		if f, err := strconv.ParseFloat(string(x.raw), 64); err == nil {
			if f == 0 {
				f = 0 // -0 equals 0
			}
			return mix64(h ^ math.Float64bits(f)), true
		}
		return mix64(h ^ maphash.Bytes(hashSeed, x.raw)), true
	case kString:
		return mix64(h ^ maphash.Bytes(hashSeed, text(x))), true
	case kArray:
		for i := int32(0); i < x.n; i++ {
			k, ok := st.hashNode(st.d.kids[x.kid+i])
			if !ok {
				return 0, false
			}
			h = mix64(h*31 ^ k)
		}
		return h, true
	case kObject:
		var sum uint64
		for i := int32(0); i < x.n; i++ {
			k, ok := st.hashNode(st.d.kids[x.kid+2*i])
			if !ok {
				return 0, false
			}
			v, ok := st.hashNode(st.d.kids[x.kid+2*i+1])
			if !ok {
				return 0, false
			}
			sum += mix64(k ^ bits.RotateLeft64(v, 29)) // members in any order
		}
		return mix64(h ^ sum), true
	}
	return mix64(h), true
}

// mix64 is SplitMix64's finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
