package llm

import (
	"slices"
	"strings"
)

// CDATA in a model's text.
//
// In XML a section ends at the first "]]>", so a value that itself holds a
// section (an SVG with a <style><![CDATA[…]]></style>, an XML file, HTML
// with inline script) cannot be written in one section; models write it
// nested anyway. The reader below takes the reading that matches the
// structure: sections are counted as they open and close, and an element
// ends at its own closing tag outside every section. The value is then what
// XML makes of it when that is well formed (sections joined with the text
// between them, entities decoded: how "a]]]]><![CDATA[>b" carries "]]>"),
// else the outermost section's content with the inner markers kept as
// written, which is what the model meant by nesting.

const parseCDATAOpen = "<![cdata["

// cdataEnd returns where the section that opens at text[k] ends (just
// after its "]]>"), counting sections nested in it, or -1 when it does not
// end before to. With flat it is XML's end instead: the first "]]>". The
// markers of the whole text are found once, the first time one is asked
// for, so text full of sections that never end costs no more than once.
func (p *parseState) cdataEnd(k, to int, flat bool) int {
	if p.cdata == nil {
		p.cdata = parseCDATAScan(p.lower)
	}
	e := p.cdata.ends[k]
	if flat {
		e = -1
		if i, _ := slices.BinarySearch(p.cdata.closes, k+len(parseCDATAOpen)); i < len(p.cdata.closes) {
			e = p.cdata.closes[i] + 3
		}
	}
	if e > 0 && e <= to {
		return e
	}
	return -1
}

// parseCDATAMarks are the CDATA markers of a text.
type parseCDATAMarks struct {
	// ends maps the offset of each section's "<![cdata[" to the offset
	// just after the "]]>" that ends it when sections nest: each "]]>"
	// ends the innermost section still open, and one with none open is
	// text. Sections that never end are not in it.
	ends map[int]int
	// closes are the offsets of every "]]>", in order.
	closes []int
}

func parseCDATAScan(lower string) *parseCDATAMarks {
	all := func(marker string) []int {
		var out []int
		for i := 0; ; {
			k := strings.Index(lower[i:], marker)
			if k < 0 {
				return out
			}
			out = append(out, i+k)
			i += k + len(marker)
		}
	}
	opens := all(parseCDATAOpen)
	m := &parseCDATAMarks{ends: make(map[int]int, len(opens)), closes: all("]]>")}
	var stack []int
	for oi, ci := 0, 0; ci < len(m.closes); {
		if oi < len(opens) && opens[oi] < m.closes[ci] {
			stack = append(stack, opens[oi])
			oi++
			continue
		}
		if n := len(stack); n > 0 {
			m.ends[stack[n-1]] = m.closes[ci] + 3
			stack = stack[:n-1]
		}
		ci++
	}
	return m
}

// parseCDATAValue reads an element's content that starts with a CDATA
// section: XML's reading when the content is sections and plain text only,
// else (nested sections) the outermost section's content as written. xml
// says entities in the text between sections are decoded.
func parseCDATAValue(text, lower string, xml bool) string {
	text = strings.TrimRight(text, " \t\r\n")
	if v, ok := parseCDATAFlat(text, lower[:len(text)], xml, true); ok {
		return v
	}
	return parseCDATANested(text)
}

// parseCDATAFlat reads text as XML reads character data: each section's
// content as written, the text between sections with entities decoded
// (when xml). It fails when a section is not closed and, if strict, when
// the text between sections has markup.
func parseCDATAFlat(text, lower string, xml, strict bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(text); {
		if strings.HasPrefix(lower[i:], parseCDATAOpen) {
			c := strings.Index(text[i+len(parseCDATAOpen):], "]]>")
			if c < 0 {
				return "", false
			}
			b.WriteString(text[i+len(parseCDATAOpen) : i+len(parseCDATAOpen)+c])
			i += len(parseCDATAOpen) + c + 3
			continue
		}
		n := strings.Index(lower[i:], parseCDATAOpen)
		if n < 0 {
			n = len(text) - i
		}
		seg := text[i : i+n]
		if strict && strings.IndexByte(seg, '<') >= 0 {
			return "", false
		}
		if xml {
			seg = parseXMLUnescape(seg)
		}
		b.WriteString(seg)
		i += n
	}
	return b.String(), true
}

// parseCDATANested is the content of the outermost section of text, the
// markers of sections inside it kept as written; a missing final "]]>" is
// tolerated.
func parseCDATANested(text string) string {
	s := text[len(parseCDATAOpen):]
	return strings.TrimSuffix(s, "]]>")
}

// readCDATAElem reads the value of the element named name whose content
// starts with a CDATA section at k. It ends at the element's closing tag
// outside every section, or, the closing tag missing, at the first other
// tag outside them. When a section is never closed, the element's last
// closing tag before limit ends it; without one the value is cut off (at
// the end of the text) or cannot be recovered, which the result says.
func (p *parseState) readCDATAElem(name string, k, limit int, mode parseValueMode, atEOF bool) parseElem {
	text, lower := p.text, p.lower
	xml := mode == parseValueXML
	i := k
	for i < limit {
		lt := strings.IndexByte(lower[i:limit], '<')
		if lt < 0 {
			break
		}
		lt += i
		if strings.HasPrefix(lower[lt:limit], parseCDATAOpen) {
			e := p.cdataEnd(lt, limit, false)
			if e < 0 {
				return p.readUnclosedCDATA(name, k, limit, xml, atEOF)
			}
			i = e
			continue
		}
		t, ok := parseTagAt(text, lower, lt, limit)
		if !ok {
			i = lt + 1
			continue
		}
		end := lt
		if t.closing && t.name == name {
			end = t.end
		}
		return parseElem{text: parseCDATAValue(text[k:lt], lower[k:lt], xml), cdata: true, end: end}
	}
	return parseElem{text: parseCDATAValue(text[k:limit], lower[k:limit], xml), cdata: true, end: limit}
}

// readUnclosedCDATA handles a value with a section that never closes: a
// literal "<![CDATA[" inside a section, or a forgotten "]]>".
func (p *parseState) readUnclosedCDATA(name string, k, limit int, xml, atEOF bool) parseElem {
	text, lower := p.text, p.lower
	last, after := -1, -1
	for i := k; i < limit; {
		c := strings.Index(lower[i:limit], "</")
		if c < 0 {
			break
		}
		c += i
		if t, ok := parseTagAt(text, lower, c, limit); ok && t.closing && t.name == name {
			last, after = c, t.end
			i = t.end
			continue
		}
		i = c + 2
	}
	if last >= 0 {
		return parseElem{text: parseCDATAValue(text[k:last], lower[k:last], xml), cdata: true, end: after}
	}
	v := parseCDATANested(strings.TrimRight(text[k:limit], " \t\r\n"))
	if atEOF {
		return parseElem{text: v, cdata: true, end: limit, truncated: true}
	}
	return parseElem{end: limit, problem: "a CDATA section that is never closed (no ]]>) and no closing tag </" + name + ">"}
}
