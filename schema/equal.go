package schema

import (
	"bytes"
	"encoding/json"
	"math"
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
