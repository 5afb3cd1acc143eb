package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// scanPythonTag reads what follows <|python_tag|> (Llama 3.1): JSON calls
// separated by ';' or newlines, or a built-in tool call written as Python,
// brave_search.call(query="…"). It returns where the scan continues.
func (p *parseState) scanPythonTag(from, to int) int {
	k := from
	for {
		k = parseJSONSkipWS(p.text[:to], k)
		if k >= to {
			return k
		}
		switch c := p.text[k]; {
		case c == '{' || c == '[':
			end, st := parseJSONSpan(p.text[:to], k, 0)
			switch st {
			case parseSpanOK:
				p.jsonExtract(p.text[k:end], p.rules|parseRuleMarked, 0)
				k = end
			case parseSpanTruncated:
				if to == len(p.text) {
					p.jsonCut(p.text[k:to], true)
					return to
				}
				return k + 1
			default:
				return k + 1
			}
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			end, ok := p.scanPythonCall(k, to)
			if !ok {
				return k
			}
			k = end
		default:
			return k
		}
		k = parseJSONSkipWS(p.text[:to], k)
		if k < to && p.text[k] == ';' {
			k++
		}
	}
}

// scanPythonCall reads name(.name)*(key=literal, …) at k. A trailing ".call"
// is the Llama built-in tool convention and is dropped from the name.
func (p *parseState) scanPythonCall(k, to int) (int, bool) {
	s := p.text[:to]
	i := k
	for i < len(s) && (parseIsNameByte(s[i]) || s[i] >= 'A' && s[i] <= 'Z') && s[i] != ':' && s[i] != '-' {
		i++
	}
	name := strings.TrimSuffix(s[k:i], ".call")
	if i >= len(s) {
		if to == len(p.text) && name != "" {
			p.loseCall(name, "cut off before its arguments")
		}
		return i, false
	}
	if s[i] != '(' || name == "" || strings.HasSuffix(name, ".") {
		return i, false
	}
	i++
	b := []byte{'{'}
	n := 0
	for {
		i = parseJSONSkipWS(s, i)
		if i >= len(s) {
			break
		}
		if s[i] == ')' {
			p.add(name, append(b, '}'))
			return i + 1, true
		}
		ks := i
		for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
			i++
		}
		key := s[ks:i]
		i = parseJSONSkipWS(s, i)
		if key == "" || i >= len(s) || s[i] != '=' {
			if i >= len(s) {
				break
			}
			return i, false
		}
		var val []byte
		var st parseSpanStatus
		val, i, st = parsePyLiteral(s, parseJSONSkipWS(s, i+1), 0)
		if st == parseSpanTruncated {
			break
		}
		if st != parseSpanOK {
			return i, false
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = parseAppendString(b, key)
		b = append(b, ':')
		b = append(b, val...)
		n++
		i = parseJSONSkipWS(s, i)
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
	if to == len(p.text) {
		p.loseCall(name, "cut off inside its arguments")
		return to, true
	}
	return i, false
}

// parsePyLiteral converts the Python literal at s[i] (string, number,
// True/False/None, list, dict with string keys) to JSON.
func parsePyLiteral(s string, i, depth int) ([]byte, int, parseSpanStatus) {
	if depth > 64 {
		return nil, i, parseSpanInvalid
	}
	if i >= len(s) {
		return nil, i, parseSpanTruncated
	}
	switch c := s[i]; {
	case c == '"' || c == '\'':
		var b strings.Builder
		k := i + 1
		for k < len(s) {
			switch s[k] {
			case c:
				return parseAppendString(nil, b.String()), k + 1, parseSpanOK
			case '\\':
				if k+1 >= len(s) {
					return nil, len(s), parseSpanTruncated
				}
				switch e := s[k+1]; e {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				default:
					b.WriteByte(e)
				}
				k += 2
			case '\n':
				return nil, k, parseSpanInvalid
			default:
				_, size := utf8.DecodeRuneInString(s[k:])
				b.WriteString(s[k : k+size])
				k += size
			}
		}
		return nil, len(s), parseSpanTruncated
	case c == '[' || c == '{':
		closeC := byte(']')
		if c == '{' {
			closeC = '}'
		}
		b := []byte{c}
		k := i + 1
		for n := 0; ; n++ {
			k = parseJSONSkipWS(s, k)
			if k >= len(s) {
				return nil, k, parseSpanTruncated
			}
			if s[k] == closeC {
				return append(b, closeC), k + 1, parseSpanOK
			}
			if n > 0 {
				if s[k] != ',' {
					return nil, k, parseSpanInvalid
				}
				k = parseJSONSkipWS(s, k+1)
				if k < len(s) && s[k] == closeC {
					return append(b, closeC), k + 1, parseSpanOK
				}
				b = append(b, ',')
			}
			if c == '{' {
				if k < len(s) && s[k] != '"' && s[k] != '\'' {
					return nil, k, parseSpanInvalid
				}
				key, e, st := parsePyLiteral(s, k, depth+1)
				if st != parseSpanOK {
					return nil, e, st
				}
				b = append(b, key...)
				k = parseJSONSkipWS(s, e)
				if k >= len(s) {
					return nil, k, parseSpanTruncated
				}
				if s[k] != ':' {
					return nil, k, parseSpanInvalid
				}
				b = append(b, ':')
				k++
			}
			v, e, st := parsePyLiteral(s, parseJSONSkipWS(s, k), depth+1)
			if st != parseSpanOK {
				return nil, e, st
			}
			b = append(b, v...)
			k = e
		}
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		k := i + 1
		for k < len(s) && strings.IndexByte("0123456789.eE+-_", s[k]) >= 0 {
			k++
		}
		if k == len(s) {
			return nil, k, parseSpanTruncated
		}
		t := strings.ReplaceAll(s[i:k], "_", "")
		if n, ok := parseIntText(t); ok {
			return []byte(n), k, parseSpanOK
		}
		if n, ok := parseFloatText(t); ok {
			return []byte(n), k, parseSpanOK
		}
		return nil, i, parseSpanInvalid
	default:
		for _, lit := range [...][2]string{{"True", "true"}, {"False", "false"}, {"None", "null"}} {
			if strings.HasPrefix(s[i:], lit[0]) {
				return []byte(lit[1]), i + len(lit[0]), parseSpanOK
			}
			if len(s)-i < len(lit[0]) && strings.HasPrefix(lit[0], s[i:]) {
				return nil, len(s), parseSpanTruncated
			}
		}
		return nil, i, parseSpanInvalid
	}
}

// scanMistral reads what follows [TOOL_CALLS]: a JSON array of calls
// (Mistral v3 tokenizers), or name[ARGS]{…} with an optional [CALL_ID]id
// (v11 and later). It returns where the scan continues.
func (p *parseState) scanMistral(from, to int) int {
	s := p.text[:to]
	k := parseJSONSkipWS(s, from)
	if k >= to {
		if to == len(p.text) {
			p.loseCall("", "cut off right after [TOOL_CALLS]")
		}
		return k
	}
	if c := s[k]; c == '[' || c == '{' {
		end, st := parseJSONSpan(s, k, 0)
		switch st {
		case parseSpanOK:
			if !p.jsonExtract(s[k:end], p.rules|parseRuleMarked, 0) {
				p.loseCall("", "after [TOOL_CALLS] is JSON without a tool name")
			}
			return end
		case parseSpanTruncated:
			if to == len(p.text) {
				p.jsonCut(s[k:], true)
				return to
			}
		}
		p.loseCall("", fmt.Sprintf("after [TOOL_CALLS] is not valid JSON (error at byte %d of the JSON)", end-k))
		return end
	}
	ns := k
	for k < to && (parseIsNameByte(s[k]) || s[k] >= 'A' && s[k] <= 'Z') {
		k++
	}
	name := s[ns:k]
	if name == "" {
		return k
	}
	if strings.HasPrefix(s[k:], "[CALL_ID]") {
		k += len("[CALL_ID]")
		a := strings.Index(s[k:], "[ARGS]")
		if a < 0 {
			if to == len(p.text) {
				p.loseCall(name, "cut off before [ARGS]")
				return to
			}
			return k
		}
		k += a
	}
	if !strings.HasPrefix(s[k:], "[ARGS]") {
		if to == len(p.text) && strings.HasPrefix("[ARGS]", s[k:]) {
			p.loseCall(name, "cut off before [ARGS]")
			return to
		}
		return k
	}
	k = parseJSONSkipWS(s, k+len("[ARGS]"))
	end, st := parseJSONSpan(s, k, 0)
	switch {
	case st == parseSpanOK:
		if obj, problem := parseArgsObject(json.RawMessage(s[k:end])); problem != "" {
			p.loseCall(name, problem)
		} else {
			p.add(name, obj)
		}
		return end
	case st == parseSpanTruncated && to == len(p.text):
		p.loseCall(name, "cut off inside its JSON arguments")
		return to
	}
	p.loseCall(name, fmt.Sprintf("has [ARGS] that are not valid JSON (error at byte %d of the JSON)", end-k))
	return end
}
