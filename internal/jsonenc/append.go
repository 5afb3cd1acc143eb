package jsonenc

import (
	"encoding/json"
	"math"
)

// AppendString appends s as encoding/json writes a string: quoted, with
// HTML characters, U+2028, U+2029 and invalid UTF-8 escaped.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// AppendFloat64 appends f as encoding/json writes a float64, or reports
// false for NaN and the infinities, which it refuses.
func AppendFloat64(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	return appendFloat(dst, f, 64), true
}

// AppendRaw appends raw JSON as encoding/json writes a json.RawMessage,
// when that is raw itself: valid JSON with no space outside strings and
// nothing encoding/json escapes (<, >, &, U+2028, U+2029). It reports false,
// appending nothing, for anything else, which json.Marshal must then
// compact and escape (or refuse).
func AppendRaw(dst, raw []byte) ([]byte, bool) {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in:
			i++ // the escaped byte cannot end the string
		case c == '<' || c == '>' || c == '&':
			return dst, false
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return dst, false
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
			return dst, false
		}
	}
	if in || !json.Valid(raw) {
		return dst, false
	}
	return append(dst, raw...), true
}
