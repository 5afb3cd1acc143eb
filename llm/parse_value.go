package llm

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// convertArgs turns the text values of an XML-like call into a JSON object,
// each value converted by the tool's schema when there is one, else by the
// XML prompt format's rule.
func (p *parseState) convertArgs(tool string, a *parseArgs) json.RawMessage {
	var root *jsonschema.Schema
	if p.schema != nil {
		root = p.schema(tool)
	}
	b := make([]byte, 0, 64)
	b = append(b, '{')
	for i, k := range a.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = parseAppendString(b, k)
		b = append(b, ':')
		b = parseAppendValue(b, a.vals[i], parsePropTypes(root, k))
	}
	b = append(b, '}')
	return b
}

// parsePropTypes returns the JSON types the schema allows for property key,
// or nil when there is no schema or it does not say.
func parsePropTypes(root *jsonschema.Schema, key string) []string {
	if root == nil {
		return nil
	}
	prop := root.Properties[key]
	if prop == nil {
		prop = root.AdditionalProperties
	}
	return parseSchemaTypes(root, prop, 0)
}

func parseSchemaTypes(root, s *jsonschema.Schema, depth int) []string {
	if s == nil || depth > 4 {
		return nil
	}
	if s.Ref != "" {
		name := s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]
		switch {
		case strings.HasPrefix(s.Ref, "#/$defs/"):
			return parseSchemaTypes(root, root.Defs[name], depth+1)
		case strings.HasPrefix(s.Ref, "#/definitions/"):
			return parseSchemaTypes(root, root.Definitions[name], depth+1)
		}
		return nil
	}
	if s.Type != "" {
		return []string{s.Type}
	}
	if len(s.Types) > 0 {
		return s.Types
	}
	var out []string
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, sub := range list {
			out = append(out, parseSchemaTypes(root, sub, depth+1)...)
		}
	}
	if len(out) > 0 {
		return out
	}
	values := s.Enum
	if s.Const != nil {
		values = append(values[:len(values):len(values)], *s.Const)
	}
	for _, v := range values {
		switch v.(type) {
		case string:
			out = append(out, "string")
		case bool:
			out = append(out, "boolean")
		case float64, int, int64, json.Number:
			out = append(out, "number")
		case nil:
			out = append(out, "null")
		}
	}
	return out
}

func parseHas(types []string, t string) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

// parseAppendValue converts one text value. Without types it follows the XML
// prompt format: "true"/"false" to a boolean, an integer, a decimal number,
// anything else a string. With types the schema decides; text that does not
// fit any type stays a string, for the validator to report.
func parseAppendValue(b []byte, v parseArgVal, types []string) []byte {
	t := strings.TrimSpace(v.text)
	if types == nil {
		if lt := strings.ToLower(t); lt == "true" || lt == "false" {
			return append(b, lt...)
		}
		if n, ok := parseIntText(t); ok {
			return append(b, n...)
		}
		if n, ok := parseFloatText(t); ok {
			return append(b, n...)
		}
		return parseAppendString(b, v.text)
	}
	if parseHas(types, "null") && t == "null" {
		return append(b, "null"...)
	}
	if parseHas(types, "boolean") {
		if lt := strings.ToLower(t); lt == "true" || lt == "false" {
			return append(b, lt...)
		}
	}
	if parseHas(types, "integer") {
		if n, ok := parseIntText(t); ok {
			return append(b, n...)
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil && parseFloatSyntax(t) && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return strconv.AppendInt(b, int64(f), 10)
		}
	}
	if parseHas(types, "number") {
		if n, ok := parseIntText(t); ok {
			return append(b, n...)
		}
		if n, ok := parseFloatText(t); ok {
			return append(b, n...)
		}
	}
	if (parseHas(types, "array") && strings.HasPrefix(t, "[")) || (parseHas(types, "object") && strings.HasPrefix(t, "{")) {
		if end, st := parseJSONSpan(t, 0, 0); st == parseSpanOK && end == len(t) {
			return parseAppendCompact(b, t)
		}
	}
	return parseAppendString(b, v.text)
}

// parseIntText returns the JSON form of an integer written as text: an
// optional sign and digits, leading zeros allowed ("007" is 7, as Python's
// int reads it).
func parseIntText(t string) (string, bool) {
	s := t
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || len(s) > 400 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", false
		}
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0", true
	}
	if neg {
		return "-" + s, true
	}
	return s, true
}

// parseFloatSyntax reports whether t is a plain decimal number: digits with
// an optional point and exponent, no hex, no "inf", no underscores.
func parseFloatSyntax(t string) bool {
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	digits := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
		digits++
	}
	if i < len(t) && t[i] == '.' {
		i++
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		e := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == e {
			return false
		}
	}
	return i == len(t)
}

// parseFloatText returns the JSON form of a finite decimal number.
func parseFloatText(t string) (string, bool) {
	if !parseFloatSyntax(t) {
		return "", false
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	out, err := json.Marshal(f)
	if err != nil {
		return "", false
	}
	return string(out), true
}

// parseAppendString appends s as a JSON string, leaving non-ASCII and HTML
// characters as they are (so unicode reads back unchanged) and replacing
// invalid UTF-8 with U+FFFD.
func parseAppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// parseAppendCompact appends valid JSON text without insignificant
// whitespace.
func parseAppendCompact(b []byte, s string) []byte {
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			b = append(b, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inStr = true
		}
		b = append(b, c)
	}
	return b
}
