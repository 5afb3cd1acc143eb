package llm

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseTag is one tag read tolerantly: <name>, </ name >, <NAME attr=v>,
// <ns:name a="v"/>, <function=value>. name is lowered and has any namespace
// prefix removed.
type parseTag struct {
	name        string
	rawName     string // name as written: parameter names keep their case
	closing     bool
	selfClosing bool
	hasEq       bool   // <name=value>: the Qwen3-Coder form
	eq          string // the value after '=' in that form
	attrs       []parseAttr
	start, end  int // text[start:end] is the whole tag
}

type parseAttr struct{ key, val string }

// attr returns the value of attribute key, and whether it is present.
func (t parseTag) attr(key string) (string, bool) {
	for _, a := range t.attrs {
		if a.key == key {
			return a.val, true
		}
	}
	return "", false
}

func parseIsNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == ':' || c == '.'
}

func parseIsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseTagAt reads the tag that starts at text[i] == '<' and ends before to.
// Tags may not span more than a few lines' worth of attributes, so a stray
// '<' in prose costs little.
func parseTagAt(text, lower string, i, to int) (parseTag, bool) {
	t := parseTag{start: i}
	k := i + 1
	skip := func() {
		for k < to && parseIsSpace(lower[k]) {
			k++
		}
	}
	skip()
	if k < to && lower[k] == '/' {
		t.closing = true
		k++
		skip()
	}
	ns := k
	for k < to && parseIsNameByte(lower[k]) {
		k++
	}
	if k == ns || !(lower[ns] >= 'a' && lower[ns] <= 'z' || lower[ns] == '_') {
		return t, false
	}
	t.name, t.rawName = lower[ns:k], text[ns:k]
	if c := strings.LastIndexByte(t.name, ':'); c >= 0 {
		t.name, t.rawName = t.name[c+1:], t.rawName[c+1:]
		if t.name == "" {
			return t, false
		}
	}
	skip()
	if k < to && lower[k] == '=' && !t.closing {
		// <function=name> / <parameter=name>: the value runs to '>'.
		k++
		gt := strings.IndexByte(lower[k:to], '>')
		if gt < 0 {
			return t, false
		}
		v := strings.TrimSpace(text[k : k+gt])
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if strings.ContainsAny(v, "<\n") {
			return t, false
		}
		t.hasEq, t.eq, t.end = true, v, k+gt+1
		return t, true
	}
	for k < to {
		skip()
		if k >= to {
			return t, false
		}
		switch lower[k] {
		case '>':
			t.end = k + 1
			return t, true
		case '/':
			if k+1 < to && lower[k+1] == '>' {
				t.selfClosing, t.end = true, k+2
				return t, true
			}
			return t, false
		}
		if t.closing {
			return t, false
		}
		as := k
		for k < to && parseIsNameByte(lower[k]) {
			k++
		}
		if k == as {
			return t, false
		}
		key := lower[as:k]
		skip()
		if k >= to || lower[k] != '=' {
			t.attrs = append(t.attrs, parseAttr{key: key})
			continue
		}
		k++
		skip()
		if k >= to {
			return t, false
		}
		var val string
		if q := lower[k]; q == '"' || q == '\'' {
			e := strings.IndexByte(lower[k+1:to], q)
			if e < 0 {
				return t, false
			}
			val = text[k+1 : k+1+e]
			if strings.ContainsAny(val, "<\n") {
				return t, false
			}
			k += e + 2
		} else {
			vs := k
			for k < to && !parseIsSpace(lower[k]) && lower[k] != '>' && lower[k] != '<' && !(lower[k] == '/' && k+1 < to && lower[k+1] == '>') {
				k++
			}
			val = text[vs:k]
		}
		t.attrs = append(t.attrs, parseAttr{key: key, val: parseXMLUnescape(val)})
	}
	return t, false
}

// parseHasTagPrefix reports whether s starts with an opening tag named name
// (lowered, whitespace tolerated).
func parseHasTagPrefix(s, name string) bool {
	if !strings.HasPrefix(s, "<") {
		return false
	}
	t, ok := parseTagAt(s, s, 0, len(s))
	return ok && !t.closing && t.name == name
}

// parseValueMode says how an element's text becomes a value.
type parseValueMode int

const (
	// parseValueXML trims the text and decodes XML entities, as an XML
	// parser would read the prompt format's elements.
	parseValueXML parseValueMode = iota
	// parseValueRaw keeps the text as written (models do not escape code in
	// <parameter> bodies), dropping only the newline after the opening tag
	// and the one before the closing tag.
	parseValueRaw
)

// parseElem is the value of one element read by readElem.
type parseElem struct {
	text      string
	cdata     bool // the value was CDATA: kept byte for byte
	end       int  // where reading continues
	truncated bool // the text ended inside the value
	// problem says why the value cannot be recovered ("markup but no
	// closing tag </content>"); the call is then lost, never given "".
	problem string
}

// readElem reads the value of the element named name whose opening tag ends
// at from. The value ends at its closing tag; when that is missing, at the
// next tag (a sibling opening, or the parent closing, named in stops). A
// value that starts with CDATA is read by readCDATAElem (sections joined as
// XML does, nested ones kept). atEOF says the enclosing block runs to the
// end of the text, so a value with no end is cut off rather than unclosed.
func (p *parseState) readElem(name string, from, limit int, mode parseValueMode, atEOF bool, stops ...string) parseElem {
	text, lower := p.text, p.lower
	k := from
	for k < limit && parseIsSpace(text[k]) {
		k++
	}
	if strings.HasPrefix(lower[k:limit], parseCDATAOpen) {
		return p.readCDATAElem(name, k, limit, mode, atEOF)
	}
	// The value ends at its closing tag. Without one it ends, in XML mode,
	// at the first tag inside it (values with markup belong in CDATA); in
	// raw mode, where code with tags of its own is common, at the next
	// sibling or the parent's closing tag.
	first, stop := -1, -1
	var firstTag parseTag
	i := from
	for tags := 0; i < limit; tags++ {
		if mode == parseValueXML && tags >= parseMaxInnerTags {
			break
		}
		lt := strings.IndexByte(lower[i:limit], '<')
		if lt < 0 {
			break
		}
		lt += i
		if strings.HasPrefix(lower[lt:limit], parseCDATAOpen) {
			// A section later in the value: nothing inside it is a tag.
			if e := p.cdataEnd(lt, limit, false); e >= 0 {
				i = e
				continue
			}
		}
		t, ok := parseTagAt(text, lower, lt, limit)
		if !ok {
			i = lt + 1
			continue
		}
		if first < 0 {
			first, firstTag = lt, t
		}
		if t.name == name && t.closing {
			return parseElem{text: parseFinishText(text[from:lt], lower[from:lt], mode), end: t.end}
		}
		if t.name == name && !t.closing && !t.selfClosing || parseIsStop(t, stops) {
			stop = lt
			break
		}
		i = t.end
	}
	switch {
	case mode == parseValueXML && first >= 0:
		v := parseFinishText(text[from:first], lower[from:first], mode)
		if v == "" && !firstTag.closing {
			// <content><svg>…: markup that is the value, or an empty
			// element followed by a sibling? Either reading may be wrong,
			// and "" would be a value the model did not write.
			return parseElem{end: first, problem: "markup but no closing tag </" + name + ">"}
		}
		return parseElem{text: v, end: first}
	case mode == parseValueRaw && stop >= 0:
		return parseElem{text: parseFinishText(text[from:stop], lower[from:stop], mode), end: stop}
	}
	return parseElem{text: parseFinishText(text[from:limit], lower[from:limit], mode), end: limit, truncated: atEOF}
}

// parseMaxInnerTags bounds the tags readElem looks through for a closing tag
// in XML mode, which bounds the work on text full of unclosed elements.
const parseMaxInnerTags = 256

// parseIsStop reports whether t ends an unclosed value: stops lists tag
// names, "/x" for a closing tag and "x" for an opening one.
func parseIsStop(t parseTag, stops []string) bool {
	for _, s := range stops {
		if strings.HasPrefix(s, "/") {
			if t.closing && t.name == s[1:] {
				return true
			}
		} else if !t.closing && t.name == s {
			return true
		}
	}
	return false
}

// parseFinishText turns an element's content (lower is the same, lowered)
// into its value: in XML mode trimmed, entities decoded and CDATA sections
// inside it read as XML reads them; in raw mode as written, less the
// newlines that frame it.
func parseFinishText(s, lower string, mode parseValueMode) string {
	if mode == parseValueXML {
		t := strings.TrimSpace(s)
		if !strings.Contains(lower, parseCDATAOpen) {
			return parseXMLUnescape(t)
		}
		lead := len(s) - len(strings.TrimLeftFunc(s, unicode.IsSpace))
		if v, ok := parseCDATAFlat(t, lower[lead:lead+len(t)], true, false); ok {
			return v
		}
		return parseXMLUnescape(t)
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "<![CDATA[") && strings.HasSuffix(t, "]]>") &&
		!strings.Contains(t[9:len(t)-3], "]]>") {
		return t[9 : len(t)-3]
	}
	s = strings.TrimPrefix(s, "\r")
	s = strings.TrimPrefix(s, "\n")
	if strings.HasSuffix(s, "\r\n") {
		s = s[:len(s)-2]
	} else {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// parseXMLUnescape decodes the five XML entities and character references;
// anything else that starts with '&' stays as written, as a lenient reader
// should.
func parseXMLUnescape(s string) string {
	amp := strings.IndexByte(s, '&')
	if amp < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for amp >= 0 {
		b.WriteString(s[:amp])
		s = s[amp:]
		semi := strings.IndexByte(s, ';')
		n := 1
		if semi > 1 && semi <= 10 {
			ent := s[1:semi]
			r := ""
			switch ent {
			case "lt":
				r = "<"
			case "gt":
				r = ">"
			case "amp":
				r = "&"
			case "quot":
				r = `"`
			case "apos":
				r = "'"
			default:
				if ent[0] == '#' {
					var v uint64
					var err error
					if len(ent) > 1 && (ent[1] == 'x' || ent[1] == 'X') {
						v, err = strconv.ParseUint(ent[2:], 16, 32)
					} else {
						v, err = strconv.ParseUint(ent[1:], 10, 32)
					}
					if err == nil && utf8.ValidRune(rune(v)) {
						r = string(rune(v))
					}
				}
			}
			if r != "" {
				b.WriteString(r)
				n = semi + 1
			} else {
				b.WriteByte('&')
			}
		} else {
			b.WriteByte('&')
		}
		s = s[n:]
		amp = strings.IndexByte(s, '&')
	}
	b.WriteString(s)
	return b.String()
}
