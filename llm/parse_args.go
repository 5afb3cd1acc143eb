package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A call's arguments, however a model wrote them.

// parseArgsObject turns a call's arguments into a JSON object: an object as
// is, a JSON-encoded string decoded (OpenAI sends arguments that way; some
// servers encode them twice), absent, null, "" or "null" as {}.
func parseArgsObject(raw json.RawMessage) (json.RawMessage, string) {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		return json.RawMessage("{}"), ""
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal([]byte(t), &s) != nil {
			return nil, "has an arguments string that is not valid JSON"
		}
		t = strings.TrimSpace(s)
		if t == "" || t == "null" {
			return json.RawMessage("{}"), ""
		}
		if t[0] == '"' {
			// Encoded twice, or a string where an object belongs.
			var s2 string
			if json.Unmarshal([]byte(t), &s2) == nil {
				if s2 = strings.TrimSpace(s2); s2 == "" || s2 == "null" {
					return json.RawMessage("{}"), ""
				} else if s2[0] == '{' {
					t = s2
				}
			}
			if t[0] == '"' {
				return nil, "has arguments that are a string, not a JSON object"
			}
		}
		end, st := parseJSONSpan(t, 0, 0)
		switch {
		case st == parseSpanTruncated:
			return nil, "has an arguments string cut off inside its JSON"
		case st != parseSpanOK || parseJSONSkipWS(t, end) != len(t):
			return nil, fmt.Sprintf("has an arguments string that is not valid JSON (error at byte %d)", end)
		}
	}
	if t[0] != '{' {
		return nil, "has arguments that are " + parseJSONKind(t[0]) + ", not a JSON object"
	}
	return json.RawMessage(parseAppendCompact(make([]byte, 0, len(t)), t)), ""
}

func parseJSONKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// parseFlatArgs returns the arguments of a call whose JSON has a name but no
// arguments key: the object's other members (a model may write the
// arguments beside the name), leaving out the name and the call's own id,
// type and index; nil when there are none, which reads as {}.
func parseFlatArgs(m []parseMember, nameKey string) json.RawMessage {
	var b []byte
	for _, mem := range m {
		switch mem.key {
		case nameKey, "id", "call_id", "type", "index":
			continue
		}
		if b == nil {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = parseAppendString(b, mem.key)
		b = append(b, ':')
		b = parseAppendCompact(b, mem.val)
	}
	if b == nil {
		return nil
	}
	return append(b, '}')
}

// bareNameCall reports whether an object found in prose or a fence, with a
// name and no arguments, is a call: it must hold nothing but the name (and
// a "type" of "function" or "tool_call"), the name must read as a tool name,
// and a known tool when the parse has schemas. {"name": "Alice", "age": 30}
// is data, {"name": "current_time"} is a call.
func (p *parseState) bareNameCall(m []parseMember, nameKey, name string) bool {
	for _, mem := range m {
		switch mem.key {
		case nameKey:
		case "type":
			if t, _ := parseJSONStr(mem.val); t != "function" && t != "tool_call" {
				return false
			}
		default:
			return false
		}
	}
	if !parseIsToolName(name) {
		return false
	}
	return p.schema == nil || p.schema(name) != nil
}

// parseIsToolName reports whether s reads as a tool name: a letter or '_'
// first, then letters, digits and _ - . : /, at most 128 bytes.
func parseIsToolName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':' || c == '/'):
		default:
			return false
		}
	}
	return true
}
