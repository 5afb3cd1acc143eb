package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// parseRule is a set of JSON shapes that count as calls.
type parseRule uint8

const (
	// parseRuleOpenAI: chat.completion choices[].message.tool_calls[] with
	// function{name, arguments}, the legacy function_call, and Responses
	// output[] items of type function_call.
	parseRuleOpenAI parseRule = 1 << iota
	// parseRuleAnthropic: content[] blocks of type tool_use.
	parseRuleAnthropic
	// parseRuleGemini: candidates[].content.parts[].functionCall, except in
	// thought parts ("thought": true), which are reasoning.
	parseRuleGemini
	// parseRuleGeneric: {"name"|"tool"|"tool_name": …, "arguments"|
	// "parameters"|"args"|"input"|"params": …}.
	parseRuleGeneric
	// parseRuleMarked: the context says the JSON is a call (inside
	// <tool_call>, after <|python_tag|> or [TOOL_CALLS]), so a name without
	// an arguments key is still a call. It holds for the value and the
	// elements of an array, not for objects found deeper.
	parseRuleMarked

	parseRuleAll = parseRuleOpenAI | parseRuleAnthropic | parseRuleGemini | parseRuleGeneric
)

// The keys the generic rule reads a call's name and arguments from, in the
// order they are tried.
var (
	parseNameKeys = []string{"name", "tool", "tool_name", "function"}
	parseArgKeys  = []string{"arguments", "parameters", "args", "input", "params", "tool_input"}
)

// parseSpanStatus says how a JSON value ended.
type parseSpanStatus int

const (
	parseSpanOK parseSpanStatus = iota
	parseSpanInvalid
	parseSpanTruncated // the text ended inside the value
	parseSpanTooDeep   // nested deeper than parseJSONMaxDepth
)

// parseJSONMaxDepth bounds nesting, so hostile input cannot exhaust the stack.
const parseJSONMaxDepth = 256

// parseJSONSpan checks the JSON value that starts at s[i] and returns where it
// ends. On failure the offset is where the value went wrong.
func parseJSONSpan(s string, i, depth int) (int, parseSpanStatus) {
	if depth > parseJSONMaxDepth {
		return i, parseSpanTooDeep
	}
	i = parseJSONSkipWS(s, i)
	if i >= len(s) {
		return i, parseSpanTruncated
	}
	switch c := s[i]; {
	case c == '{' || c == '[':
		closeC := byte('}')
		if c == '[' {
			closeC = ']'
		}
		i = parseJSONSkipWS(s, i+1)
		if i < len(s) && s[i] == closeC {
			return i + 1, parseSpanOK
		}
		for {
			if c == '{' {
				i = parseJSONSkipWS(s, i)
				if i >= len(s) {
					return i, parseSpanTruncated
				}
				if s[i] != '"' {
					return i, parseSpanInvalid
				}
				var st parseSpanStatus
				if i, st = parseJSONString(s, i); st != parseSpanOK {
					return i, st
				}
				i = parseJSONSkipWS(s, i)
				if i >= len(s) {
					return i, parseSpanTruncated
				}
				if s[i] != ':' {
					return i, parseSpanInvalid
				}
				i++
			}
			var st parseSpanStatus
			if i, st = parseJSONSpan(s, i, depth+1); st != parseSpanOK {
				return i, st
			}
			i = parseJSONSkipWS(s, i)
			if i >= len(s) {
				return i, parseSpanTruncated
			}
			switch s[i] {
			case ',':
				i++
			case closeC:
				return i + 1, parseSpanOK
			default:
				return i, parseSpanInvalid
			}
		}
	case c == '"':
		return parseJSONString(s, i)
	case c == '-' || c >= '0' && c <= '9':
		return parseJSONNumber(s, i)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if c == lit[0] {
				n := min(len(s)-i, len(lit))
				if s[i:i+n] != lit[:n] {
					return i, parseSpanInvalid
				}
				if n < len(lit) {
					return len(s), parseSpanTruncated
				}
				return i + n, parseSpanOK
			}
		}
		return i, parseSpanInvalid
	}
}

func parseJSONSkipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func parseJSONString(s string, i int) (int, parseSpanStatus) {
	i++
	for i < len(s) {
		switch c := s[i]; {
		case c == '"':
			return i + 1, parseSpanOK
		case c == '\\':
			if i+1 >= len(s) {
				return len(s), parseSpanTruncated
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(s) {
						return len(s), parseSpanTruncated
					}
					if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[k])) {
						return k, parseSpanInvalid
					}
				}
				i += 6
			default:
				return i, parseSpanInvalid
			}
		case c < 0x20:
			return i, parseSpanInvalid
		default:
			i++
		}
	}
	return len(s), parseSpanTruncated
}

func parseJSONNumber(s string, i int) (int, parseSpanStatus) {
	start := i
	if s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		if i >= len(s) {
			return i, parseSpanTruncated
		}
		return start, parseSpanInvalid
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			if i >= len(s) {
				return i, parseSpanTruncated
			}
			return i, parseSpanInvalid
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			if i >= len(s) {
				return i, parseSpanTruncated
			}
			return i, parseSpanInvalid
		}
	}
	return i, parseSpanOK
}

// parseJSONClosers returns the brackets that would close the JSON prefix s,
// or false when s ends inside a string (nothing safe to add).
func parseJSONClosers(s string) (string, bool) {
	var stack []byte
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
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
		case '"':
			inStr = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return "", false
			}
			stack = stack[:len(stack)-1]
		}
	}
	if inStr || len(stack) == 0 || len(stack) > 3 {
		return "", false
	}
	out := make([]byte, len(stack))
	for i := range stack {
		out[i] = stack[len(stack)-1-i]
	}
	return string(out), true
}

// scanBareJSON reads a JSON value that starts at j (bare, or the content of a
// fence) and records the calls it holds. JSON that is not a call is skipped
// whole, so nothing inside it is read as a call; text that is not JSON is
// prose and moves the scan one byte on.
func (p *parseState) scanBareJSON(j, to int) int {
	end, st := parseJSONSpan(p.text[:to], j, 0)
	switch st {
	case parseSpanOK:
		p.jsonExtract(p.text[j:end], p.rules, 0)
		return end
	case parseSpanTruncated:
		if to == len(p.text) && p.jsonCut(p.text[j:to], false) {
			return to
		}
	case parseSpanTooDeep:
		// Every start before the failure nests as deep: skip them all.
		return end
	}
	return j + 1
}

// jsonCut handles JSON that the end of the text cut off: the whole calls of
// a cut array are recovered, and the call that was cut is lost. Unless force
// (the context says a call was there), JSON that does not look like a call
// is left alone. It reports whether it recorded anything.
func (p *parseState) jsonCut(s string, force bool) bool {
	cut := s
	recovered := false
	rules := p.rules
	if force {
		rules |= parseRuleMarked
	}
	if s[0] == '[' {
		i := parseJSONSkipWS(s, 1)
		cut = ""
		for i < len(s) {
			e, st := parseJSONSpan(s, i, 0)
			if st != parseSpanOK {
				cut = s[i:]
				break
			}
			if p.jsonExtract(s[i:e], rules, 0) {
				recovered = true
			}
			i = parseJSONSkipWS(s, e)
			if i < len(s) && s[i] == ',' {
				i = parseJSONSkipWS(s, i+1)
			}
		}
	}
	name, isCall := "", false
	if cut != "" {
		name, isCall = parseJSONCutCall(cut)
	}
	if isCall || recovered || force {
		p.loseCall(name, "cut off inside its JSON")
		return true
	}
	return false
}

// scanHermes reads the JSON inside one <tool_call> block: usually one object,
// sometimes several, sometimes missing a closing brace before </tool_call>.
func (p *parseState) scanHermes(from, to int, closed bool) {
	atEOF := !closed && to == len(p.text)
	k := from
	for {
		k = parseJSONSkipWS(p.text[:to], k)
		if k >= to || (p.text[k] != '{' && p.text[k] != '[') {
			return
		}
		end, st := parseJSONSpan(p.text[:to], k, 0)
		raw := ""
		switch st {
		case parseSpanOK:
			raw = p.text[k:end]
		case parseSpanTruncated:
			if !atEOF {
				if cl, ok := parseJSONClosers(p.text[k:to]); ok {
					fixed := strings.TrimRight(p.text[k:to], " \t\r\n") + cl
					if e, st := parseJSONSpan(fixed, 0, 0); st == parseSpanOK && e == len(fixed) {
						raw, end = fixed, to
					}
				}
			}
		}
		if raw == "" {
			if st == parseSpanTruncated && atEOF {
				p.jsonCut(p.text[k:to], true)
			} else {
				name, _ := parseJSONCutCall(p.text[k:to])
				p.loseCall(name, fmt.Sprintf("in <tool_call> is not valid JSON (error at byte %d of the JSON)", end-k))
			}
			return
		}
		if !p.jsonExtract(raw, p.rules|parseRuleMarked, 0) {
			p.loseCall("", "in <tool_call> is JSON without a tool name")
		}
		k = parseJSONSkipWS(p.text[:to], end)
		if k < to && p.text[k] == ',' {
			k++ // objects listed with commas but no array around them
		}
	}
}

// parseMember is one member of a JSON object: its decoded key and its raw
// value.
type parseMember struct{ key, val string }

// parseJSONMembers lists the members of the valid JSON object raw, without
// decoding the values.
func parseJSONMembers(raw string, buf []parseMember) []parseMember {
	i := parseJSONSkipWS(raw, 1)
	for i < len(raw) && raw[i] != '}' {
		ke, _ := parseJSONString(raw, i)
		key, _ := parseJSONStr(raw[i:ke])
		i = parseJSONSkipWS(raw, ke)
		i = parseJSONSkipWS(raw, i+1) // ':'
		ve, st := parseJSONSpan(raw, i, 0)
		if st != parseSpanOK {
			break
		}
		buf = append(buf, parseMember{key: key, val: raw[i:ve]})
		i = parseJSONSkipWS(raw, ve)
		if i < len(raw) && raw[i] == ',' {
			i = parseJSONSkipWS(raw, i+1)
		}
	}
	return buf
}

// parseJSONElems lists the elements of the valid JSON array raw.
func parseJSONElems(raw string) []string {
	var out []string
	i := parseJSONSkipWS(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		ve, st := parseJSONSpan(raw, i, 0)
		if st != parseSpanOK {
			break
		}
		out = append(out, raw[i:ve])
		i = parseJSONSkipWS(raw, ve)
		if i < len(raw) && raw[i] == ',' {
			i = parseJSONSkipWS(raw, i+1)
		}
	}
	return out
}

// parseJSONStr decodes a raw JSON value that should be a string.
func parseJSONStr(raw string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if body := raw[1 : len(raw)-1]; !strings.ContainsAny(body, "\\\"") && utf8.ValidString(body) {
		return body, true
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return "", false
	}
	return s, true
}

// jsonExtract records the calls in one valid JSON value, following only the
// containers of the shapes in rules, and reports whether it found any.
func (p *parseState) jsonExtract(raw string, rules parseRule, depth int) bool {
	raw = strings.TrimSpace(raw)
	if depth > 8 || raw == "" {
		return false
	}
	if raw[0] == '[' {
		found := false
		for _, it := range parseJSONElems(raw) {
			if p.jsonExtract(it, rules, depth+1) {
				found = true
			}
		}
		return found
	}
	if raw[0] != '{' {
		return false
	}
	var buf [8]parseMember
	m := parseJSONMembers(raw, buf[:0])
	get := func(k string) (string, bool) {
		// The last of duplicate keys wins, as in encoding/json.
		for i := len(m) - 1; i >= 0; i-- {
			if m[i].key == k {
				return m[i].val, true
			}
		}
		return "", false
	}
	str := func(k string) string {
		v, _ := get(k)
		s, _ := parseJSONStr(v)
		return s
	}
	arg := func(k string) json.RawMessage {
		if v, ok := get(k); ok {
			return json.RawMessage(v)
		}
		return nil
	}
	if rules&parseRuleGemini != 0 {
		if v, ok := get("thought"); ok && v == "true" {
			// A Gemini thought part is the model's reasoning: never a
			// source of calls, whatever it holds (a functionCall, text).
			return false
		}
	}
	typ := str("type")
	if rules&parseRuleAnthropic != 0 && typ == "tool_use" {
		return p.jsonCall(str("name"), arg("input"), true)
	}
	if rules&parseRuleOpenAI != 0 {
		if typ == "function_call" {
			return p.jsonCall(str("name"), arg("arguments"), true)
		}
		for _, k := range []string{"function", "function_call"} {
			if f, ok := get(k); ok && f[0] == '{' {
				fm := parseJSONMembers(f, nil)
				var name string
				var args json.RawMessage
				for _, mem := range fm {
					switch mem.key {
					case "name":
						name, _ = parseJSONStr(mem.val)
					case "arguments", "parameters":
						args = json.RawMessage(mem.val)
					}
				}
				if name != "" {
					return p.jsonCall(name, args, true)
				}
			}
		}
	}
	if rules&parseRuleGemini != 0 {
		if f, ok := get("functionCall"); ok && f[0] == '{' {
			var name string
			var args json.RawMessage
			for _, mem := range parseJSONMembers(f, nil) {
				switch mem.key {
				case "name":
					name, _ = parseJSONStr(mem.val)
				case "args":
					args = json.RawMessage(mem.val)
				}
			}
			if name != "" {
				return p.jsonCall(name, args, true)
			}
		}
	}
	if rules&parseRuleGeneric != 0 {
		for _, nk := range parseNameKeys {
			name := str(nk)
			if name == "" {
				continue
			}
			for _, ak := range parseArgKeys {
				if a, ok := get(ak); ok {
					return p.jsonCall(name, json.RawMessage(a), false)
				}
			}
			// A name and no arguments key: models write that for tools
			// without parameters.
			if rules&parseRuleMarked != 0 {
				return p.jsonCall(name, parseFlatArgs(m, nk), true)
			}
			if p.bareNameCall(m, nk, name) {
				return p.jsonCall(name, nil, false)
			}
		}
	}
	rules &^= parseRuleMarked
	found := false
	for _, mem := range m {
		follow := false
		switch mem.key {
		case "choices", "message", "tool_calls", "output":
			follow = rules&parseRuleOpenAI != 0
		case "content":
			follow = rules&(parseRuleAnthropic|parseRuleGemini) != 0
		case "candidates", "parts":
			follow = rules&parseRuleGemini != 0
		}
		if follow && p.jsonExtract(mem.val, rules, depth+1) {
			found = true
		}
	}
	if !found && rules&parseRuleOpenAI != 0 && str("role") == "assistant" {
		// An OpenAI-compatible server without a tool parser hands the
		// model's text back as the message content: read the calls in it.
		if content := str("content"); content != "" {
			found = p.scanNested(content)
		}
	}
	return found
}

// scanNested reads the calls in text found inside a JSON value, numbering
// them after the calls found so far, and reports whether it found any.
func (p *parseState) scanNested(text string) bool {
	if p.depth >= 4 {
		return false
	}
	sub := &parseState{
		text: text, lower: parseASCIILower(text), schema: p.schema,
		kinds: parseKindAll, rules: parseRuleAll, calls: p.calls, lost: p.lost,
		seen: p.seen, depth: p.depth + 1,
		base: len(p.calls), baseLost: len(p.lost), baseSeen: p.seen,
	}
	sub.scan(0, len(text))
	found := sub.seen > p.seen
	p.calls, p.lost, p.seen = sub.calls, sub.lost, sub.seen
	return found
}

// jsonCall records one call from JSON. strict says the shape already marks it
// as a call, so a missing name is a lost call rather than some other JSON.
func (p *parseState) jsonCall(name string, args json.RawMessage, strict bool) bool {
	name = strings.TrimSpace(name)
	if name == "" {
		if strict {
			p.loseCall("", "has no tool name")
			return true
		}
		return false
	}
	obj, problem := parseArgsObject(args)
	if problem != "" {
		p.loseCall(name, problem)
		return true
	}
	p.add(name, obj)
	return true
}

// parseJSONCutCall reads a JSON prefix that the text cut off and reports
// whether it was a call: a tool name under a name key, together with an
// arguments key (or a provider's call marker). It returns the name.
func parseJSONCutCall(s string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	type level struct{ object, wantKey bool }
	var stack []level
	name, lastKey := "", ""
	marked := false
	for n := 0; n < 10000; n++ {
		tok, err := dec.Token()
		if err != nil {
			break // the cut (or the first syntax error) ends what can be read
		}
		isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = !stack[len(stack)-1].wantKey
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, level{object: true, wantKey: true})
			case '[':
				stack = append(stack, level{})
			default:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
				if len(stack) > 0 && stack[len(stack)-1].object {
					// The closed container was a value: the next token is a key.
					stack[len(stack)-1].wantKey = true
				}
			}
			continue
		case string:
			if isKey {
				lastKey = v
				switch v {
				case "arguments", "parameters", "args", "input", "params", "tool_input", "functionCall", "tool_calls":
					marked = true
				}
				continue
			}
			switch lastKey {
			case "name", "tool", "tool_name", "function":
				if name == "" {
					name = v
				}
			case "type":
				if v == "tool_use" || v == "function_call" || v == "function" {
					marked = true
				}
			}
		}
	}
	name = strings.TrimSpace(name)
	return name, name != "" && marked
}

// parseProvider reads a whole provider response body.
func (p *parseState) parseProvider(format string, rules parseRule) ([]ParsedCall, error) {
	lead := len(p.text) - len(strings.TrimLeft(p.text, " \t\r\n"))
	t := strings.TrimRight(p.text[lead:], " \t\r\n")
	if t == "" {
		return p.calls, nil
	}
	if t[0] != '{' {
		return p.calls, fmt.Errorf("parse tool calls: %s response is not a JSON object (byte %d is %q)", format, lead, t[0])
	}
	end, st := parseJSONSpan(t, 0, 0)
	switch {
	case st == parseSpanTruncated:
		name, _ := parseJSONCutCall(t)
		if name == "" {
			p.lost = append(p.lost, fmt.Sprintf("%s response cut off at byte %d", format, lead+len(t)))
		} else {
			p.loseCall(name, fmt.Sprintf("cut off at byte %d of the %s response", lead+len(t), format))
		}
		return p.result()
	case st != parseSpanOK:
		return p.calls, fmt.Errorf("parse tool calls: %s response is not valid JSON (error at byte %d)", format, lead+end)
	case parseJSONSkipWS(t, end) != len(t):
		return p.calls, fmt.Errorf("parse tool calls: %s response has text after its JSON at byte %d", format, lead+parseJSONSkipWS(t, end))
	}
	p.jsonExtract(t, rules, 0)
	return p.result()
}
