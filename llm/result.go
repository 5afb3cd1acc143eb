package llm

import (
	"encoding/json"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// The results of calls, written back for each dialect. Every text form is
// [wield.Result.Text]: the output itself when the call succeeded (a JSON
// string unquoted, other JSON with <, > and & as they are: a model reads
// text, never JSON escaped for HTML), and these words when it failed:
// "Can not find tool named 'x'" for tool_not_found, "Error: <message>"
// otherwise, with the validation errors one per line. Only Result.Error, ValidationErrors and
// Output reach the model; they are model-facing already, and the cause of
// an error is never in a Result.

// XMLResult formats a result as the XML call format's format_tool_result
// does, after its ToolResult (success, data, error), for models that call tools
// in XML:
//
//	<tool_result>
//	  <name>web_search</name>
//	  <success>true</success>
//	  <data><![CDATA[...]]></data>
//	</tool_result>
//
// A failed call has <error> instead of <data>. The text is in CDATA, as the
// calls are, so it needs no escaping.
func XMLResult(r *wield.Result) string {
	var b strings.Builder
	b.WriteString("<tool_result>\n  <name>")
	b.WriteString(resultXMLEscape(r.Tool))
	if r.OK {
		b.WriteString("</name>\n  <success>true</success>\n  <data>")
		b.WriteString(CDATA(r.Text()))
		b.WriteString("</data>\n</tool_result>")
	} else {
		b.WriteString("</name>\n  <success>false</success>\n  <error>")
		b.WriteString(CDATA(r.Text()))
		b.WriteString("</error>\n</tool_result>")
	}
	return b.String()
}

// resultXMLEscape escapes a tool name for an element's text; names that
// wield registers need none, but a tool_not_found result carries whatever
// name the model wrote.
func resultXMLEscape(s string) string {
	if !strings.ContainsAny(s, "<>&") {
		return s
	}
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// JSONResult formats a result for models that call tools with JSON (the
// structured-output fallback) as that format's ToolMessage: tool_name, and
// output or error.
func JSONResult(r *wield.Result) string {
	m := JSONToolMessage{ToolName: r.Tool}
	if r.OK {
		m.Output = resultOutput(r)
	} else {
		m.Error = r.Text()
	}
	b, err := jsonenc.Marshal(m)
	if err != nil { // output is valid JSON by then; this is defensive
		b, _ = jsonenc.Marshal(JSONToolMessage{ToolName: r.Tool, Output: json.RawMessage(resultQuote(r.Text()))})
	}
	return string(b)
}

// JSONToolMessage is the JSON call format's ToolMessage, a result in the
// JSON fallback.
type JSONToolMessage struct {
	ToolName string          `json:"tool_name"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// resultOutput is the output as a JSON value, or null when there is none.
func resultOutput(r *wield.Result) json.RawMessage {
	if len(r.Output) == 0 || !json.Valid(r.Output) {
		if len(r.Output) == 0 {
			return json.RawMessage("null")
		}
		return json.RawMessage(resultQuote(string(r.Output)))
	}
	return r.Output
}

func resultQuote(s string) string {
	return string(jsonenc.AppendString(nil, s))
}

// OpenAIToolMessage is the message that answers an OpenAI tool call in Chat
// Completions: {"role":"tool","tool_call_id":...,"content":...}.
type OpenAIToolMessage struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

// OpenAIResult answers the model's tool call callID (the id of the call in
// the model's message, not wield's call id) with r.
func OpenAIResult(callID string, r *wield.Result) OpenAIToolMessage {
	return OpenAIToolMessage{Role: "tool", ToolCallID: callID, Content: r.Text()}
}

// OpenAIFunctionCallOutput is the input item that answers a function call
// in the Responses API.
type OpenAIFunctionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// OpenAIResponsesResult answers the model's function call callID with r in
// the Responses API.
func OpenAIResponsesResult(callID string, r *wield.Result) OpenAIFunctionCallOutput {
	return OpenAIFunctionCallOutput{Type: "function_call_output", CallID: callID, Output: r.Text()}
}

// AnthropicToolResult is the content block that answers a tool_use block in
// Anthropic's Messages API; it goes in a user message.
type AnthropicToolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

// AnthropicResult answers the tool_use block toolUseID with r; a failed
// call sets is_error.
func AnthropicResult(toolUseID string, r *wield.Result) AnthropicToolResult {
	return AnthropicToolResult{Type: "tool_result", ToolUseID: toolUseID, Content: r.Text(), IsError: !r.OK}
}

// GeminiFunctionResponse is the part that answers a functionCall in
// Gemini's API: {"functionResponse": {...}}.
type GeminiFunctionResponse struct {
	FunctionResponse GeminiResponse `json:"functionResponse"`
}

// GeminiResponse is the body of a [GeminiFunctionResponse]. Response is a
// JSON object, as the API requires: {"output": value} when the call
// succeeded, {"error": text} when it failed, the keys the API documents for
// the two cases.
type GeminiResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

// GeminiResult answers a functionCall with r. id is the id of the model's
// functionCall when it gave one, else empty.
func GeminiResult(id string, r *wield.Result) GeminiFunctionResponse {
	resp := GeminiResponse{ID: id, Name: r.Tool}
	if r.OK {
		var v any
		if err := json.Unmarshal(resultOutput(r), &v); err != nil {
			v = r.Text()
		}
		resp.Response = map[string]any{"output": v}
	} else {
		resp.Response = map[string]any{"error": r.Text()}
	}
	return GeminiFunctionResponse{FunctionResponse: resp}
}

// MCPContent is one item of an MCP tool result's content.
type MCPContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// MCPCallResult is MCP's CallToolResult. StructuredContent is the output
// when it is a JSON object (what an outputSchema, which [MCP] lists only
// for object outputs, describes), and the text content is its JSON too, as
// MCP asks for clients that do not read structured content.
type MCPCallResult struct {
	Content           []MCPContent    `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
}

// MCPResult converts r to MCP's CallToolResult; a failed call is a result
// with isError, as MCP wants tool errors reported, not a protocol error.
func MCPResult(r *wield.Result) MCPCallResult {
	out := MCPCallResult{Content: []MCPContent{{Type: "text", Text: r.Text()}}, IsError: !r.OK}
	if r.OK && resultIsObject(r.Output) {
		out.StructuredContent = jsonenc.Unescape(r.Output)
	}
	return out
}

func resultIsObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return json.Valid(raw)
		}
		return false
	}
	return false
}
