package llm

import (
	"encoding/json"
	"strings"
)

// parseArgs collects the arguments of one XML-like call in order of
// appearance; a repeated parameter keeps its first place and its last value.
type parseArgs struct {
	keys []string
	vals []parseArgVal
}

type parseArgVal struct {
	text  string
	cdata bool
}

func (a *parseArgs) set(k string, v parseArgVal) {
	for i, old := range a.keys {
		if old == k {
			a.vals[i] = v
			return
		}
	}
	a.keys = append(a.keys, k)
	a.vals = append(a.vals, v)
}

// The element names the XML format's fallback accepts for the tool name and
// for the parameter container: models drift between them.
var (
	parseXMLNameTags   = []string{"name", "tool_name", "tool", "function_name"}
	parseXMLParamsTags = []string{"params", "parameters", "arguments", "args", "input"}
	parseXMLStops      = []string{"/params", "/parameters", "/arguments", "/args", "/input", "/tool_call", "tool_call"}
)

func parseIn(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// parseTailCut reports whether text[i:end] ends the text with a tag that was
// cut off, e.g. "<param" or "</para".
func (p *parseState) parseTailCut(i, end int, atEOF bool) bool {
	if !atEOF {
		return false
	}
	rest := strings.TrimSpace(p.text[i:end])
	return strings.HasPrefix(rest, "<") && !strings.Contains(rest, ">")
}

// parseUnreadable says why the value of parameter key cannot be recovered,
// to follow a call's number and name.
func parseUnreadable(key, problem string) string {
	return `has parameter "` + key + `" with ` + problem + `, so its value cannot be recovered`
}

// scanXMLCall reads the XML format's call in text[from:to]:
// <name>tool</name><params><p><![CDATA[v]]></p>…</params>. It tolerates what
// the format's own regex fallback tolerates and more: missing closing tags, any
// case, whitespace inside tags, the name given as an attribute, parameters
// directly under <tool_call>, and synonyms of <name> and <params>.
func (p *parseState) scanXMLCall(open parseTag, from, to int, closed bool) {
	atEOF := !closed && to == len(p.text)
	name, _ := open.attr("name")
	name = strings.TrimSpace(name)
	var args parseArgs
	var jsonArgs json.RawMessage
	inParams, sawParams := false, false
	i := from
	for i < to {
		lt := strings.IndexByte(p.lower[i:to], '<')
		if lt < 0 {
			break
		}
		lt += i
		t, ok := parseTagAt(p.text, p.lower, lt, to)
		if !ok {
			if p.parseTailCut(lt, to, atEOF) {
				p.loseCall(name, "cut off inside a tag")
				return
			}
			i = lt + 1
			continue
		}
		switch {
		case t.closing:
			if parseIn(t.name, parseXMLParamsTags) {
				inParams = false
			}
			i = t.end
			continue
		case !inParams && name == "" && parseIn(t.name, parseXMLNameTags):
			if t.selfClosing {
				i = t.end
				continue
			}
			v := p.readElem(t.name, t.end, to, parseValueXML, atEOF, parseXMLStops...)
			if v.truncated {
				p.loseCall("", "cut off inside its <"+t.name+">")
				return
			}
			if v.problem != "" {
				p.loseCall("", "has a <"+t.name+"> with "+v.problem)
				return
			}
			name = strings.TrimSpace(v.text)
			i = v.end
			continue
		case !inParams && !sawParams && parseIn(t.name, parseXMLParamsTags):
			inParams, sawParams = !t.selfClosing, true
			i = t.end
			if k := parseJSONSkipWS(p.text[:to], i); inParams && k < to && p.text[k] == '{' {
				// <params>{"query": "…"}</params>: JSON instead of elements.
				if end, st := parseJSONSpan(p.text[:to], k, 0); st == parseSpanOK {
					jsonArgs = json.RawMessage(parseAppendCompact(nil, p.text[k:end]))
					i = end
				}
			}
			continue
		case !inParams && sawParams:
			// After </params>: stray elements are not parameters.
			i = t.end
			continue
		}
		if t.selfClosing {
			args.set(t.rawName, parseArgVal{})
			i = t.end
			continue
		}
		v := p.readElem(t.name, t.end, to, parseValueXML, atEOF, parseXMLStops...)
		if v.truncated {
			p.loseCall(name, `cut off inside the value of parameter "`+t.rawName+`"`)
			return
		}
		if v.problem != "" {
			p.loseCall(name, parseUnreadable(t.rawName, v.problem))
			return
		}
		args.set(t.rawName, parseArgVal{text: v.text, cdata: v.cdata})
		i = v.end
	}
	if name == "" {
		switch {
		case len(args.keys) > 0:
			p.loseCall("", "has parameters but no <name>")
		case atEOF && strings.TrimSpace(p.text[from:to]) == "":
			p.loseCall("", "cut off before its <name>")
		}
		return
	}
	if jsonArgs != nil && len(args.keys) == 0 {
		p.add(name, jsonArgs)
		return
	}
	if inParams && atEOF && len(args.keys) == 0 {
		p.loseCall(name, "cut off inside <params>")
		return
	}
	p.add(name, p.convertArgs(name, &args))
}

// scanQwenBlock reads the <function=…> calls inside one <tool_call> body.
func (p *parseState) scanQwenBlock(from, to int, closed bool) {
	p.scanCallTags(from, to, closed, func(t parseTag) bool { return t.name == "function" && t.hasEq }, p.scanQwenFunction)
}

// scanQwenFunction reads <function=name><parameter=p>v</parameter>…
// </function>, the Qwen3-Coder format, from its opening tag.
func (p *parseState) scanQwenFunction(open parseTag, to int) int {
	bodyEnd, after, closed := p.findBlockEnd(open.end, to, "function")
	if !closed {
		// Without </function>, a </tool_call> still ends the call.
		if e, a, ok := p.findBlockEnd(open.end, bodyEnd, "tool_call"); ok {
			bodyEnd, after, closed = e, a, true
		}
	}
	atEOF := !closed && bodyEnd == len(p.text)
	name := strings.TrimSpace(open.eq)
	var args parseArgs
	i := open.end
	for i < bodyEnd {
		lt := strings.IndexByte(p.lower[i:bodyEnd], '<')
		if lt < 0 {
			break
		}
		lt += i
		t, ok := parseTagAt(p.text, p.lower, lt, bodyEnd)
		if !ok {
			if p.parseTailCut(lt, bodyEnd, atEOF) {
				p.loseCall(name, "cut off inside a tag")
				return bodyEnd
			}
			i = lt + 1
			continue
		}
		if t.name != "parameter" || t.closing || !t.hasEq {
			i = t.end
			continue
		}
		v := p.readElem("parameter", t.end, bodyEnd, parseValueRaw, atEOF, "parameter", "/function", "/tool_call")
		if v.truncated {
			p.loseCall(name, `cut off inside the value of parameter "`+t.eq+`"`)
			return bodyEnd
		}
		if v.problem != "" {
			p.loseCall(name, parseUnreadable(t.eq, v.problem))
			return after
		}
		args.set(t.eq, parseArgVal{text: v.text, cdata: v.cdata})
		i = v.end
	}
	if name == "" {
		if len(args.keys) > 0 {
			p.loseCall("", "has parameters but no function name")
		}
		return after
	}
	p.add(name, p.convertArgs(name, &args))
	return after
}

// scanFunctionCalls reads a <function_calls> block of <invoke> calls.
func (p *parseState) scanFunctionCalls(open parseTag, to int) int {
	bodyEnd, after, closed := p.findBlockEnd(open.end, to, "function_calls")
	p.scanInvokeBlock(open.end, bodyEnd, closed)
	return after
}

// scanInvokeBlock reads the <invoke> calls in text[from:to].
func (p *parseState) scanInvokeBlock(from, to int, closed bool) {
	p.scanCallTags(from, to, closed, func(t parseTag) bool { return t.name == "invoke" && !t.closing }, p.scanInvoke)
}

// scanCallTags reads the calls in text[from:to]: each tag that isCall
// accepts is handed to scan, which returns where reading goes on; other
// tags are skipped. A tag cut off at the end of an unclosed block loses
// the call it began.
func (p *parseState) scanCallTags(from, to int, closed bool, isCall func(parseTag) bool, scan func(parseTag, int) int) {
	atEOF := !closed && to == len(p.text)
	i := from
	for i < to {
		lt := strings.IndexByte(p.lower[i:to], '<')
		if lt < 0 {
			return
		}
		lt += i
		t, ok := parseTagAt(p.text, p.lower, lt, to)
		if !ok {
			if p.parseTailCut(lt, to, atEOF) {
				p.loseCall("", "cut off inside a tag")
				return
			}
			i = lt + 1
			continue
		}
		if isCall(t) {
			i = scan(t, to)
			continue
		}
		i = t.end
	}
}

// scanInvoke reads <invoke name="tool"><parameter name="p">v</parameter>
// </invoke> from its opening tag; the attributes may be unquoted.
func (p *parseState) scanInvoke(open parseTag, to int) int {
	bodyEnd, after, closed := p.findBlockEnd(open.end, to, "invoke")
	if !closed {
		if e, a, ok := p.findBlockEnd(open.end, bodyEnd, "function_calls"); ok {
			bodyEnd, after, closed = e, a, true
		}
	}
	atEOF := !closed && bodyEnd == len(p.text)
	name, _ := open.attr("name")
	name = strings.TrimSpace(name)
	if name == "" && open.hasEq {
		name = strings.TrimSpace(open.eq)
	}
	var args parseArgs
	i := open.end
	for i < bodyEnd {
		lt := strings.IndexByte(p.lower[i:bodyEnd], '<')
		if lt < 0 {
			break
		}
		lt += i
		t, ok := parseTagAt(p.text, p.lower, lt, bodyEnd)
		if !ok {
			if p.parseTailCut(lt, bodyEnd, atEOF) {
				p.loseCall(name, "cut off inside a tag")
				return bodyEnd
			}
			i = lt + 1
			continue
		}
		if t.name != "parameter" || t.closing {
			i = t.end
			continue
		}
		key, _ := t.attr("name")
		if key == "" && t.hasEq {
			key = t.eq
		}
		if key == "" {
			i = t.end
			continue
		}
		if t.selfClosing {
			args.set(key, parseArgVal{})
			i = t.end
			continue
		}
		v := p.readElem("parameter", t.end, bodyEnd, parseValueRaw, atEOF, "parameter", "/invoke", "/function_calls")
		if v.truncated {
			p.loseCall(name, `cut off inside the value of parameter "`+key+`"`)
			return bodyEnd
		}
		if v.problem != "" {
			p.loseCall(name, parseUnreadable(key, v.problem))
			return after
		}
		args.set(key, parseArgVal{text: v.text, cdata: v.cdata})
		i = v.end
	}
	if name == "" {
		if len(args.keys) > 0 {
			p.loseCall("", "has parameters but no name attribute")
		}
		return after
	}
	p.add(name, p.convertArgs(name, &args))
	return after
}
