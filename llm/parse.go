package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Format names a way models write tool calls in text. [Parse] reads one
// format, or with [FormatAuto] every format it finds, in order of appearance.
type Format string

// The formats [Parse] understands.
const (
	// FormatAuto finds every format below in the text (the zero value).
	FormatAuto Format = "auto"
	// FormatXML is the prompt fallback format: <tool_call><name>…</name>
	// <params><p><![CDATA[v]]></p></params></tool_call>, read tolerantly
	// (missing closing tags, mixed case, extra whitespace, CDATA nested in
	// CDATA: see the package doc).
	FormatXML Format = "xml"
	// FormatHermes is <tool_call>{"name":…,"arguments":{…}}</tool_call>
	// (Hermes, Qwen2.5).
	FormatHermes Format = "hermes"
	// FormatQwen3Coder is <function=name><parameter=p>v</parameter></function>,
	// usually inside <tool_call> (Qwen3-Coder).
	FormatQwen3Coder Format = "qwen3_coder"
	// FormatInvoke is <function_calls><invoke name="…"><parameter name="…">v
	// </parameter></invoke></function_calls> (Claude-style prompts).
	FormatInvoke Format = "invoke"
	// FormatJSON is JSON in a ```json fence or bare: one call or an array of
	// calls, with keys name/arguments, tool/parameters, or
	// function{name, arguments}; arguments may be a JSON-encoded string,
	// null or missing (a tool without parameters).
	FormatJSON Format = "json"
	// FormatPythonTag is <|python_tag|>{"name":…,"parameters":{…}} (Llama 3.1),
	// and the built-in tool form <|python_tag|>brave_search.call(query="…").
	FormatPythonTag Format = "python_tag"
	// FormatMistral is [TOOL_CALLS][{"name":…,"arguments":{…}}] and the newer
	// [TOOL_CALLS]name[ARGS]{…}.
	FormatMistral Format = "mistral"
	// FormatOpenAI is an OpenAI response body: a chat.completion (or one of
	// its messages) with tool_calls, or a Responses object with function_call
	// output items. An assistant message without tool_calls has its text
	// content read for calls, as OpenAI-compatible servers without a tool
	// parser return them.
	FormatOpenAI Format = "openai"
	// FormatAnthropic is an Anthropic Messages response with tool_use content
	// blocks.
	FormatAnthropic Format = "anthropic"
	// FormatGemini is a Gemini generateContent response with functionCall
	// parts; a thought part ("thought": true) is reasoning, never a call.
	FormatGemini Format = "gemini"
)

// Formats lists every format [Parse] accepts, in a stable order.
var Formats = []Format{
	FormatAuto, FormatXML, FormatHermes, FormatQwen3Coder, FormatInvoke, FormatJSON,
	FormatPythonTag, FormatMistral, FormatOpenAI, FormatAnthropic, FormatGemini,
}

// ParsedCall is one tool call found in a model's text. Arguments is always a
// JSON object, so it can go to the engine as a call's arguments unchanged.
type ParsedCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ParseOptions configures [Parse]. A nil *ParseOptions means FormatAuto and
// no schemas.
type ParseOptions struct {
	// Format restricts parsing to one format; empty means FormatAuto.
	Format Format
	// Schema returns the input schema of a tool, or nil when unknown. The
	// XML-like formats carry every value as text; with a schema the
	// property's type decides how the text converts (a string keeps "007",
	// an integer parses, an array or object parses as JSON text). Without
	// one, text converts as the XML prompt format says: true/false to a
	// boolean, an integer, a decimal number, else a string. JSON formats
	// keep their JSON types either way. Parse never validates: that is the
	// engine's job.
	Schema func(tool string) *jsonschema.Schema
}

// IncompleteError reports calls that were started in the text but could not be
// recovered whole: cut off mid-way (a reply that hit its token limit),
// unreadable (arguments that are not a JSON object, a value whose end cannot
// be told), or written inside reasoning that was never closed. Such a call is
// reported rather than returned with a guessed or empty value. [Parse]
// returns the calls it did recover together with this error.
type IncompleteError struct {
	// Recovered is the number of calls returned.
	Recovered int
	// Lost says which calls were lost and where, one clause per call, joined
	// by "; ", e.g. "call 3 (write_file) cut off inside parameter content".
	Lost string
}

// Error implements error.
func (e *IncompleteError) Error() string {
	return fmt.Sprintf("parse tool calls: %s (%d recovered)", e.Lost, e.Recovered)
}

// Parse finds the tool calls in a model's text, in order of appearance.
//
// Text with no call (plain prose, a tag mentioned inside `backticks`, JSON
// that is not a call, calls drafted in reasoning such as <think>) gives an
// empty, non-nil slice. When a call was started
// but is cut off or unreadable, Parse returns the calls it recovered and an
// [*IncompleteError] saying what was lost. An unknown format, or a provider
// format (openai, anthropic, gemini) whose text is not JSON, is an error with
// no calls.
func Parse(text string, opts *ParseOptions) ([]ParsedCall, error) {
	var o ParseOptions
	if opts != nil {
		o = *opts
	}
	if o.Format == "" {
		o.Format = FormatAuto
	}
	p := &parseState{text: text, schema: o.Schema, calls: []ParsedCall{}}
	switch o.Format {
	case FormatAuto:
		p.kinds = parseKindAll
		p.rules = parseRuleAll
	case FormatXML:
		p.kinds = parseKindXML
	case FormatHermes:
		p.kinds = parseKindHermes
		p.rules = parseRuleAll
	case FormatQwen3Coder:
		p.kinds = parseKindQwen
	case FormatInvoke:
		p.kinds = parseKindInvoke
	case FormatJSON:
		p.kinds = parseKindJSON
		p.rules = parseRuleAll
	case FormatPythonTag:
		p.kinds = parseKindPythonTag
		p.rules = parseRuleAll
	case FormatMistral:
		p.kinds = parseKindMistral
		p.rules = parseRuleAll
	case FormatOpenAI:
		return p.parseProvider(string(o.Format), parseRuleOpenAI)
	case FormatAnthropic:
		return p.parseProvider(string(o.Format), parseRuleAnthropic)
	case FormatGemini:
		return p.parseProvider(string(o.Format), parseRuleGemini)
	default:
		names := make([]string, len(Formats))
		for i, f := range Formats {
			names[i] = string(f)
		}
		return []ParsedCall{}, fmt.Errorf("parse tool calls: unknown format %q (want one of %s)", o.Format, strings.Join(names, ", "))
	}
	p.lower = parseASCIILower(text)
	p.scan(0, len(text))
	return p.result()
}

// parseKind is a set of the text formats a scan looks for.
type parseKind uint16

const (
	parseKindXML parseKind = 1 << iota
	parseKindHermes
	parseKindQwen
	parseKindInvoke
	parseKindJSON
	parseKindPythonTag
	parseKindMistral

	parseKindAll = parseKindXML | parseKindHermes | parseKindQwen | parseKindInvoke |
		parseKindJSON | parseKindPythonTag | parseKindMistral
)

// parseState is one run of Parse over one text.
type parseState struct {
	text   string
	lower  string // text with ASCII letters lowered: same length, same offsets
	schema func(string) *jsonschema.Schema
	kinds  parseKind
	rules  parseRule
	calls  []ParsedCall
	lost   []string
	seen   int // calls started so far, recovered or lost: numbers calls in messages
	depth  int // nesting of fences, nested texts and reasoning, to bound recursion
	fence  int // nesting of code fences
	// base, baseLost and baseSeen are calls, lost and seen when the scan of
	// this text began: what a closing reasoning marker with no opening one
	// keeps (see parse_reasoning.go).
	base, baseLost, baseSeen int
	cdata                    *parseCDATAMarks // see cdataEnd
}

func (p *parseState) result() ([]ParsedCall, error) {
	if len(p.lost) > 0 {
		return p.calls, &IncompleteError{Recovered: len(p.calls), Lost: strings.Join(p.lost, "; ")}
	}
	return p.calls, nil
}

// add records a recovered call.
func (p *parseState) add(name string, args json.RawMessage) {
	p.seen++
	p.calls = append(p.calls, ParsedCall{Name: name, Arguments: args})
}

// loseCall records a call that could not be recovered; why reads after the
// call's number and name, e.g. "cut off inside parameter content".
func (p *parseState) loseCall(name, why string) {
	p.seen++
	if name != "" {
		p.lost = append(p.lost, fmt.Sprintf("call %d (%s) %s", p.seen, name, why))
	} else {
		p.lost = append(p.lost, fmt.Sprintf("call %d %s", p.seen, why))
	}
}

// scan looks for calls in text[from:to], in order, and consumes each one it
// finds so nothing inside it is read twice.
func (p *parseState) scan(from, to int) {
	i := from
	for i < to {
		j := strings.IndexAny(p.text[i:to], "<`[{")
		if j < 0 {
			return
		}
		j += i
		next := j + 1
		switch p.text[j] {
		case '`':
			next = p.scanBackticks(j, to)
		case '<':
			if end, ok := p.scanReasoning(j, to); ok {
				next = end
			} else if end, ok := p.scanAngle(j, to); ok {
				next = end
			}
		case '[':
			if end, ok := p.scanReasoning(j, to); ok {
				next = end
			} else if p.kinds&parseKindMistral != 0 && strings.HasPrefix(p.text[j:to], "[TOOL_CALLS]") {
				next = p.scanMistral(j+len("[TOOL_CALLS]"), to)
			} else if p.kinds&parseKindJSON != 0 {
				next = p.scanBareJSON(j, to)
			}
		case '{':
			if p.kinds&parseKindJSON != 0 {
				next = p.scanBareJSON(j, to)
			}
		}
		if next <= j {
			next = j + 1
		}
		i = next
	}
}

// scanBackticks handles a backtick at j: a ``` fence is scanned inside (a
// model may wrap a call in a code block), while an inline `code span` on one
// line is prose that mentions syntax, and is skipped.
func (p *parseState) scanBackticks(j, to int) int {
	t := p.text[:to]
	if strings.HasPrefix(t[j:], "```") {
		k := j + 3
		for k < to && t[k] == '`' {
			k++
		}
		fence := t[j:k]
		// The info string (json, xml, tool_call, …) runs to the end of the line.
		nl := strings.IndexByte(t[k:], '\n')
		if nl < 0 {
			return to // a fence opened on the last line holds nothing
		}
		start := k + nl + 1
		end, after := to, to
		if c := parseFenceClose(t, start, fence); c >= 0 {
			end, after = c, c+len(fence)
			for after < to && t[after] == '`' {
				after++
			}
		}
		if p.depth < 4 {
			p.depth++
			p.fence++
			p.scan(start, end)
			p.fence--
			p.depth--
		}
		return after
	}
	nl := strings.IndexByte(t[j+1:], '\n')
	line := t[j+1:]
	if nl >= 0 {
		line = line[:nl]
	}
	if c := strings.IndexByte(line, '`'); c >= 0 {
		return j + 1 + c + 1
	}
	return j + 1
}

// parseFenceClose finds the fence that closes a code block opened before
// from: the same backticks at the start of a line (after indentation), so
// backticks inside a line of the block do not end it. It returns -1 when the
// block is never closed.
func parseFenceClose(t string, from int, fence string) int {
	for i := from; i < len(t); {
		c := strings.Index(t[i:], fence)
		if c < 0 {
			return -1
		}
		c += i
		k := c
		for k > from && (t[k-1] == ' ' || t[k-1] == '\t') {
			k--
		}
		if k == from || t[k-1] == '\n' {
			return c
		}
		i = c + len(fence)
	}
	return -1
}

// scanAngle handles a '<' at j: one of the tag-based formats, or nothing.
func (p *parseState) scanAngle(j, to int) (int, bool) {
	if p.kinds&parseKindPythonTag != 0 && strings.HasPrefix(p.text[j:to], "<|python_tag|>") {
		return p.scanPythonTag(j+len("<|python_tag|>"), to), true
	}
	tag, ok := parseTagAt(p.text, p.lower, j, to)
	if !ok || tag.closing {
		return 0, false
	}
	seen := p.seen
	end, ok := p.scanOpenTag(tag, to)
	if ok && p.seen == seen {
		// Nothing there (prose that names the tag, say): what follows the
		// tag may still hold calls.
		return tag.end, true
	}
	return end, ok
}

// scanOpenTag dispatches on an opening tag that may start a call.
func (p *parseState) scanOpenTag(tag parseTag, to int) (int, bool) {
	if tag.selfClosing {
		// <invoke name="now"/> and the like: a call without arguments.
		name, _ := tag.attr("name")
		name = strings.TrimSpace(name)
		if name != "" && (tag.name == "invoke" && p.kinds&parseKindInvoke != 0 || tag.name == "tool_call" && p.kinds&parseKindXML != 0) {
			p.add(name, json.RawMessage("{}"))
			return tag.end, true
		}
		return 0, false
	}
	switch tag.name {
	case "tool_call":
		if p.kinds&(parseKindXML|parseKindHermes|parseKindQwen|parseKindInvoke) == 0 {
			return 0, false
		}
		return p.scanToolCall(tag, to)
	case "function_calls":
		if p.kinds&parseKindInvoke == 0 {
			return 0, false
		}
		return p.scanFunctionCalls(tag, to), true
	case "invoke":
		if p.kinds&parseKindInvoke == 0 {
			return 0, false
		}
		return p.scanInvoke(tag, to), true
	case "function":
		if p.kinds&parseKindQwen == 0 || !tag.hasEq {
			return 0, false
		}
		return p.scanQwenFunction(tag, to), true
	}
	return 0, false
}

// scanToolCall reads one <tool_call> block and hands its content to the
// format its first non-space character says: JSON (hermes), <function=…>
// (Qwen3-Coder), <invoke> or the XML format's <name>.
func (p *parseState) scanToolCall(open parseTag, to int) (int, bool) {
	searchFrom := open.end
	if k := parseJSONSkipWS(p.text[:to], open.end); k < to && (p.text[k] == '{' || p.text[k] == '[') {
		// JSON whose strings mention </tool_call> must not end the block.
		if end, st := parseJSONSpan(p.text[:to], k, 0); st == parseSpanOK {
			searchFrom = end
		}
	}
	bodyEnd, after, closed := p.findBlockEnd(searchFrom, to, "tool_call")
	body := strings.TrimLeft(p.text[open.end:bodyEnd], " \t\r\n")
	bodyStart := bodyEnd - len(body)
	switch {
	case strings.HasPrefix(body, "{") || strings.HasPrefix(body, "["):
		if p.kinds&parseKindHermes == 0 {
			return 0, false
		}
		p.scanHermes(bodyStart, bodyEnd, closed)
	case strings.HasPrefix(p.lower[bodyStart:bodyEnd], "<function="),
		strings.HasPrefix(p.lower[bodyStart:bodyEnd], "<function ="):
		if p.kinds&parseKindQwen == 0 {
			return 0, false
		}
		p.scanQwenBlock(bodyStart, bodyEnd, closed)
	case parseHasTagPrefix(p.lower[bodyStart:bodyEnd], "invoke"), parseHasTagPrefix(p.lower[bodyStart:bodyEnd], "function_calls"):
		if p.kinds&parseKindInvoke == 0 {
			return 0, false
		}
		p.scanInvokeBlock(bodyStart, bodyEnd, closed)
	default:
		if p.kinds&parseKindXML == 0 {
			return 0, false
		}
		p.scanXMLCall(open, bodyStart, bodyEnd, closed)
	}
	return after, true
}

// findBlockEnd finds where a block opened before from ends: at its closing
// tag, at the next opening tag of the same name (the model forgot to close
// it), or at to. CDATA sections are skipped, so code that mentions the tag is
// not an end: counted as they nest, or, when they do not balance that way
// (a literal "<![CDATA[" inside one), as XML reads them, a section that
// never ends being read as text. closed reports a closing tag was found.
func (p *parseState) findBlockEnd(from, to int, name string) (bodyEnd, after int, closed bool) {
	if bodyEnd, after, closed, ok := p.findBlockEndCDATA(from, to, name, true); ok {
		return bodyEnd, after, closed
	}
	bodyEnd, after, closed, _ = p.findBlockEndCDATA(from, to, name, false)
	return bodyEnd, after, closed
}

// findBlockEndCDATA is findBlockEnd with sections counted as they nest, or
// not; ok is false when a section does not end.
func (p *parseState) findBlockEndCDATA(from, to int, name string, nested bool) (bodyEnd, after int, closed, ok bool) {
	i := from
	for i < to {
		k := strings.IndexByte(p.lower[i:to], '<')
		if k < 0 {
			break
		}
		k += i
		if strings.HasPrefix(p.lower[k:to], parseCDATAOpen) {
			e := p.cdataEnd(k, to, !nested)
			switch {
			case e >= 0:
				i = e
			case nested:
				return to, to, false, false
			default:
				// A section that never ends: its marker is read as text,
				// so the block's own closing tag still ends it.
				i = k + len(parseCDATAOpen)
			}
			continue
		}
		tag, isTag := parseTagAt(p.text, p.lower, k, to)
		if isTag && tag.name == name {
			if tag.closing {
				return k, tag.end, true, true
			}
			return k, k, false, true
		}
		i = k + 1
	}
	return to, to, false, true
}

// parseASCIILower lowers ASCII letters only, so offsets into the result are
// offsets into s (strings.ToLower may change the length of some runes).
func parseASCIILower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for k := i; k < len(b); k++ {
				if c := b[k]; c >= 'A' && c <= 'Z' {
					b[k] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
