// Package safetext makes text from tools, servers and files safe to show a
// person on a terminal or a page.
//
// A tool's description, an argument or a file's content may hold control
// characters: an escape sequence that rewrites what the terminal shows, sets
// its title or plants a hyperlink, a carriage return that writes over the
// start of the line, or a bidirectional override (U+202E) that makes
// "…/\u202etxt.sdrawkcab" read as "…/backwards.txt". [Line] and [Text] write
// every such character as a visible escape (\x1b, \r, \u202e), so what a
// person reads is what the bytes are. JSON meant for programs does not need
// them: encoding/json escapes control characters already.
package safetext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line is s made safe for one line of a table or a message: every control
// character (C0 including newline and tab, DEL, C1 including U+009B CSI), the
// bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
// U+2066–U+2069), the line and paragraph separators and invalid UTF-8 are
// written as Go-style escapes. Other text, backslashes included, is kept.
func Line(s string) string { return escape(s, false) }

// Text is [Line] for text of several lines: newline and tab are kept,
// everything else Line escapes is escaped.
func Text(s string) string { return escape(s, true) }

func unsafe(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

func escape(s string, multiline bool) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafe(r, multiline) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case !unsafe(r, multiline):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		default:
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)) + h)
		}
		i += n
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// Clip cuts s to at most n bytes, on a character boundary, and marks the
// cut with "…" (not counted in n): text a tool or a server sent, kept to a
// bound before it is stored, relayed or shown. Text of n bytes or fewer is
// returned as it is.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
