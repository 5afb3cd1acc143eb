package modelapi

import (
	"encoding/json"
	"strings"

	"github.com/wieldhq/wield/llm"
)

// toolsRefusals are the words a server answers with when the model or the
// server cannot take the tools of a request, lower-cased:
//   - Ollama, for a model whose template has no tools:
//     "registry.ollama.ai/library/gemma3:4b does not support tools" (400,
//     as {"error":{"message":...}} on /v1 and {"error":"..."} on /api/chat);
//   - vLLM started without a tool parser: "\"auto\" tool choice requires
//     --enable-auto-tool-choice and --tool-call-parser to be set" (400,
//     {"object":"error","message":...} or {"error":{"message":...}});
//   - llama.cpp's server without --jinja: "tools param requires --jinja
//     flag", and before that "Unsupported param: tools" (500);
//   - OpenAI, for a model without function calling: "Unsupported
//     parameter: 'tools' is not supported with this model." (400).
var toolsRefusals = []string{
	"does not support tools",
	"tool choice requires --enable-auto-tool-choice",
	"requires --enable-auto-tool-choice and --tool-call-parser",
	"tools param requires --jinja",
	"unsupported param: tools",
	"'tools' is not supported with this model",
}

// ToolsRefused reports whether a provider's error answer says that the
// model or the server does not take tools natively, so that the request may
// be made again with the tools described in the prompt. Only the error's
// message is read (the shapes of every provider above), never the rest of
// the body, which may echo what the conversation said.
func ToolsRefused(se *StatusError) bool {
	if se == nil || se.StatusCode < 400 {
		return false
	}
	msg := strings.ToLower(errorMessage(se.Body))
	if msg == "" {
		return false
	}
	for _, r := range toolsRefusals {
		if strings.Contains(msg, r) {
			return true
		}
	}
	return false
}

// errorMessage is the message of an error body in any of the shapes above:
// {"error":{"message":...}}, {"error":"..."} or {"message":...}.
func errorMessage(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil && s != "" {
		return s
	}
	if m := Message(body); m != "" {
		return m
	}
	return e.Message
}

// ToolsRefusal marks err, a client's error for an answer that
// [ToolsRefused], as [llm.ErrToolsUnsupported]; its text stays err's.
func ToolsRefusal(err error) error {
	return toolsRefusal{err}
}

type toolsRefusal struct{ err error }

func (r toolsRefusal) Error() string { return r.err.Error() }
func (r toolsRefusal) Unwrap() error { return r.err }

// Is makes errors.Is(err, llm.ErrToolsUnsupported) true.
func (r toolsRefusal) Is(target error) bool { return target == llm.ErrToolsUnsupported }
