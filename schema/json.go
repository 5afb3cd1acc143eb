package schema

import (
	"bytes"
	"fmt"
	"github.com/wieldhq/wield/internal/jsonscan"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is how deeply arguments may nest; deeper JSON is refused before
// it can exhaust the stack.
const MaxDepth = 100

type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNumber
	kString
	kArray
	kObject
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "boolean", "number", "string", "array", "object"}[k]
}

// node is one JSON value of a parsed document. Scalars keep their token
// (strings with their quotes), containers the span of their text and the
// range of their children in doc.kids (objects: key, value, key, value...).
type node struct {
	raw  []byte
	kid  int32
	n    int32
	kind kind
	esc  bool // a string with escapes
}

// doc is a parsed JSON text: a flat slice of nodes, reused between calls.
type doc struct {
	nodes []node
	kids  []int32
	stack []int32
}

func (d *doc) reset() {
	d.nodes = d.nodes[:0]
	d.kids = d.kids[:0]
	d.stack = d.stack[:0]
}

type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.off, e.msg)
}

// parse parses one JSON value filling the whole of b and returns its node.
// Duplicate keys, invalid UTF-8 and nesting beyond MaxDepth are errors.
func (d *doc) parse(b []byte) (int32, error) {
	p := parser{d: d, b: b}
	p.ws()
	if p.i >= len(b) {
		return 0, &syntaxError{p.i, "no value"}
	}
	root, err := p.value(0)
	if err != nil {
		return 0, err
	}
	p.ws()
	if p.i < len(b) {
		return 0, &syntaxError{p.i, fmt.Sprintf("unexpected %s after the value", quoteByte(b[p.i]))}
	}
	return root, nil
}

type parser struct {
	d *doc
	b []byte
	i int
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) add(n node) int32 {
	p.d.nodes = append(p.d.nodes, n)
	return int32(len(p.d.nodes) - 1)
}

func (p *parser) value(depth int) (int32, error) {
	if p.i >= len(p.b) {
		return 0, &syntaxError{p.i, "unexpected end of input"}
	}
	switch c := p.b[p.i]; c {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case '"':
		start := p.i
		esc, err := p.str()
		if err != nil {
			return 0, err
		}
		return p.add(node{kind: kString, raw: p.b[start:p.i], esc: esc}), nil
	case 't':
		return p.lit("true", kTrue)
	case 'f':
		return p.lit("false", kFalse)
	case 'n':
		return p.lit("null", kNull)
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			start := p.i
			end, ok := jsonscan.Number(p.b, p.i)
			if !ok {
				return 0, &syntaxError{start, "malformed number"}
			}
			p.i = end
			return p.add(node{kind: kNumber, raw: p.b[start:end]}), nil
		}
		return 0, &syntaxError{p.i, fmt.Sprintf("unexpected %s", quoteByte(c))}
	}
}

func (p *parser) lit(word string, k kind) (int32, error) {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		return 0, &syntaxError{p.i, "unknown literal (expected true, false or null)"}
	}
	start := p.i
	p.i += len(word)
	return p.add(node{kind: k, raw: p.b[start:p.i]}), nil
}

// isNumber reports whether s is exactly one JSON number.
func isNumber(s []byte) bool {
	end, ok := jsonscan.Number(s, 0)
	return ok && end == len(s)
}

// plainByte marks the bytes a string may hold with nothing to check: not the
// quote, the backslash, control characters or the start of UTF-8.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str scans a string starting at its opening quote and reports whether it
// has escapes.
func (p *parser) str() (bool, error) {
	b := p.b
	start := p.i
	i := p.i + 1
	esc, high := false, false
	for i < len(b) {
		for i < len(b) && plainByte[b[i]] {
			i++ // the common case: nothing to look at
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			if high && !utf8.Valid(b[start+1:i]) {
				return false, &syntaxError{start, "string is not valid UTF-8"}
			}
			p.i = i + 1
			return esc, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return false, &syntaxError{i, "unterminated escape"}
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return false, &syntaxError{i, `bad \u escape`}
				}
				i += 6
			default:
				return false, &syntaxError{i, fmt.Sprintf("bad escape \\%c", b[i+1])}
			}
		case c < 0x20:
			return false, &syntaxError{i, "control character in string (escape it)"}
		default:
			if c >= 0x80 {
				high = true
			}
			i++
		}
	}
	return false, &syntaxError{start, "unterminated string"}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (p *parser) object(depth int) (int32, error) {
	if depth > MaxDepth {
		return 0, &syntaxError{p.i, fmt.Sprintf("nested deeper than %d levels", MaxDepth)}
	}
	d := p.d
	start := p.i
	p.i++
	mark := len(d.stack)
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return p.add(node{kind: kObject, raw: p.b[start:p.i], kid: int32(len(d.kids))}), nil
	}
	for {
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return 0, &syntaxError{p.i, "expected a string key"}
		}
		kstart := p.i
		esc, err := p.str()
		if err != nil {
			return 0, err
		}
		k := p.add(node{kind: kString, raw: p.b[kstart:p.i], esc: esc})
		for j := mark; j < len(d.stack); j += 2 {
			if sameString(&d.nodes[d.stack[j]], &d.nodes[k]) {
				return 0, &syntaxError{kstart, fmt.Sprintf("duplicate key %s", d.nodes[k].raw)}
			}
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return 0, &syntaxError{p.i, "expected ':' after key"}
		}
		p.i++
		p.ws()
		v, err := p.value(depth)
		if err != nil {
			return 0, err
		}
		d.stack = append(d.stack, k, v)
		p.ws()
		if p.i >= len(p.b) {
			return 0, &syntaxError{p.i, "unterminated object"}
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == '}' {
			p.i++
			break
		}
		return 0, &syntaxError{p.i, fmt.Sprintf("expected ',' or '}', got %s", quoteByte(p.b[p.i]))}
	}
	kid := int32(len(d.kids))
	d.kids = append(d.kids, d.stack[mark:]...)
	n := int32((len(d.stack) - mark) / 2)
	d.stack = d.stack[:mark]
	return p.add(node{kind: kObject, raw: p.b[start:p.i], kid: kid, n: n}), nil
}

func (p *parser) array(depth int) (int32, error) {
	if depth > MaxDepth {
		return 0, &syntaxError{p.i, fmt.Sprintf("nested deeper than %d levels", MaxDepth)}
	}
	d := p.d
	start := p.i
	p.i++
	mark := len(d.stack)
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return p.add(node{kind: kArray, raw: p.b[start:p.i], kid: int32(len(d.kids))}), nil
	}
	for {
		p.ws()
		v, err := p.value(depth)
		if err != nil {
			return 0, err
		}
		d.stack = append(d.stack, v)
		p.ws()
		if p.i >= len(p.b) {
			return 0, &syntaxError{p.i, "unterminated array"}
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == ']' {
			p.i++
			break
		}
		return 0, &syntaxError{p.i, fmt.Sprintf("expected ',' or ']', got %s", quoteByte(p.b[p.i]))}
	}
	kid := int32(len(d.kids))
	d.kids = append(d.kids, d.stack[mark:]...)
	n := int32(len(d.stack) - mark)
	d.stack = d.stack[:mark]
	return p.add(node{kind: kArray, raw: p.b[start:p.i], kid: kid, n: n}), nil
}

// text returns the content of a string node, unescaped. Without escapes it
// is a sub-slice of the input; with them, a new slice.
func text(n *node) []byte {
	if !n.esc {
		return n.raw[1 : len(n.raw)-1]
	}
	return unescape(n.raw[1 : len(n.raw)-1])
}

func sameString(a, b *node) bool {
	if !a.esc && !b.esc {
		return bytes.Equal(a.raw, b.raw)
	}
	return bytes.Equal(text(a), text(b))
}

// unescape decodes the escapes of a valid JSON string body.
func unescape(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := jsonscan.Hex4((s[i+1 : i+5]))
			i += 4
			if utf16.IsSurrogate(r) {
				if i+7 <= len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					r2 := jsonscan.Hex4((s[i+3 : i+7]))
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, s[i])
		}
	}
	return out
}
