package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/go-json-experiment/json/jsontext"
)

// AppendString appends s as encoding/json writes a string without HTML
// escapes: quoted, with control characters, U+2028, U+2029 and invalid
// UTF-8 escaped, and <, > and & as they are.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// AppendFloat64 appends f as encoding/json writes a float64, or reports
// false for NaN and the infinities, which it refuses.
func AppendFloat64(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	return appendFloat(dst, f, 64), true
}

// AppendRaw appends raw JSON as Marshal writes a json.RawMessage, when that
// is raw itself: valid JSON with no space outside strings and none of the
// escapes \u003c, \u003e and \u0026. It reports false, appending nothing,
// for anything else, which [Compact] must then write (or refuse).
func AppendRaw(dst, raw []byte) ([]byte, bool) {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in:
			if isHTMLEscape(raw[i:]) {
				return dst, false
			}
			i++ // the escaped byte cannot end the string
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return dst, false
		}
	}
	if in || !jsontext.Value(raw).IsValid(validOpts...) {
		return dst, false
	}
	return append(dst, raw...), true
}

// validOpts make jsontext's check of a value json.Valid's, which is
// slower: duplicate names and invalid UTF-8 pass, as encoding/json passes
// them through a json.RawMessage.
var validOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// Compact appends raw JSON as Marshal writes a json.RawMessage: without
// space outside strings, and with <, > and & as they are where raw had
// them escaped. Its error is json.Compact's, for raw that is not JSON.
func Compact(dst, raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return dst, err
	}
	return append(dst, Unescape(buf.Bytes())...), nil
}

// MarshalIndent is [Marshal] indented for a person: each element on its
// own line, prefixed by indent once per level of nesting.
func MarshalIndent(v any, indent string) ([]byte, error) {
	return appendStd(nil, v, indent)
}

// Unescape turns the escapes \u003c, \u003e and \u0026 in JSON text back
// into <, > and &, leaving every other byte as it is, so the JSON value is
// the same and a model reads the text as it was. It returns b itself when
// there is nothing to turn back. Escapes stand only inside strings, and
// each is read whole from its backslash, so an escaped backslash followed
// by "u003c" stays text.
func Unescape(b []byte) []byte {
	i := bytes.IndexByte(b, '\\')
	if i < 0 || !bytes.Contains(b[i:], []byte(`\u00`)) {
		return b
	}
	var out []byte
	start := 0
	for ; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if !isHTMLEscape(b[i:]) {
			i++ // the escaped byte, which may be a backslash
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, b[start:i]...)
		out = append(out, unhex(b[i+4])<<4|unhex(b[i+5]))
		i += 5
		start = i + 1
	}
	if out == nil {
		return b
	}
	return append(out, b[start:]...)
}

// isHTMLEscape reports whether b starts with \u003c, \u003e or \u0026, in
// either case of hex digits.
func isHTMLEscape(b []byte) bool {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' || b[2] != '0' || b[3] != '0' {
		return false
	}
	switch unhex(b[4])<<4 | unhex(b[5]) { // an invalid digit makes it ≥ 0xf0
	case '<', '>', '&':
		return true
	}
	return false
}

// unhex is a hex digit's value, or 0xff for any other byte.
func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0xff
}
