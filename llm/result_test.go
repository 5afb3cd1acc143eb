package llm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// results are the cases every result form is tested with.
var results = map[string]*wield.Result{
	"object": {Tool: "create_event", OK: true, Output: json.RawMessage(`{"id":"e1","link":"https://cal/e1"}`)},
	"string": {Tool: "ping", OK: true, Output: json.RawMessage(`"pong ]]> <ok>"`)},
	"empty":  {Tool: "ping", OK: true},
	"not_found": {Tool: "weather", ErrorType: wield.ErrToolNotFound,
		Error: "Can not find tool named 'weather'"},
	"validation": {Tool: "web_search", ErrorType: wield.ErrValidation, Error: "arguments do not match the schema",
		ValidationErrors: []wield.ValidationError{{Path: "count", Message: "must be at most 50"}}},
	"execution": {Tool: "web_search", ErrorType: wield.ErrExecution, Error: "search service answered 503",
		Metadata: map[string]any{"internal": "dial tcp 10.0.0.7:443: connection refused"}},
}

func TestResultText(t *testing.T) {
	// The text forms say what wield.Result.Text says, in seed 001's words;
	// this pins the words the other forms rely on.
	want := map[string]string{
		"object":     `{"id":"e1","link":"https://cal/e1"}`,
		"string":     "pong ]]> <ok>",
		"empty":      "",
		"not_found":  "Can not find tool named 'weather'",
		"validation": "Error: arguments do not match the schema\n- " + results["validation"].ValidationErrors[0].String(),
		"execution":  "Error: search service answered 503",
	}
	for name, r := range results {
		if diff := cmp.Diff(want[name], r.Text()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestXMLResult(t *testing.T) {
	tests := []struct{ name, want string }{
		{"object", "<tool_result>\n  <name>create_event</name>\n  <success>true</success>\n  <data><![CDATA[{\"id\":\"e1\",\"link\":\"https://cal/e1\"}]]></data>\n</tool_result>"},
		{"string", "<tool_result>\n  <name>ping</name>\n  <success>true</success>\n  <data><![CDATA[pong ]]]]><![CDATA[> <ok>]]></data>\n</tool_result>"},
		{"not_found", "<tool_result>\n  <name>weather</name>\n  <success>false</success>\n  <error><![CDATA[Can not find tool named 'weather']]></error>\n</tool_result>"},
		{"execution", "<tool_result>\n  <name>web_search</name>\n  <success>false</success>\n  <error><![CDATA[Error: search service answered 503]]></error>\n</tool_result>"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, llm.XMLResult(results[tt.name])); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	odd := &wield.Result{Tool: "<x&y>", ErrorType: wield.ErrToolNotFound, Error: "Can not find tool named '<x&y>'"}
	want := "<tool_result>\n  <name>&lt;x&amp;y&gt;</name>\n  <success>false</success>\n  <error><![CDATA[Can not find tool named '<x&y>']]></error>\n</tool_result>"
	if diff := cmp.Diff(want, llm.XMLResult(odd)); diff != "" {
		t.Errorf("escaped name (-want +got):\n%s", diff)
	}
}

func TestJSONResult(t *testing.T) {
	tests := []struct{ name, want string }{
		{"object", `{"tool_name":"create_event","output":{"id":"e1","link":"https://cal/e1"}}`},
		{"string", `{"tool_name":"ping","output":"pong ]]> <ok>"}`},
		{"empty", `{"tool_name":"ping","output":null}`},
		{"not_found", `{"tool_name":"weather","error":"Can not find tool named 'weather'"}`},
		{"execution", `{"tool_name":"web_search","error":"Error: search service answered 503"}`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, llm.JSONResult(results[tt.name])); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// marshal returns v's JSON as wield writes it for a model, for comparing
// with the provider's documented shape.
func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := llm.JSON(v, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestProviderResults(t *testing.T) {
	tests := []struct {
		name  string
		form  func(*wield.Result) any
		cases map[string]string
	}{
		{"openai", func(r *wield.Result) any { return llm.OpenAIResult("call_1", r) }, map[string]string{
			"object":    `{"role":"tool","tool_call_id":"call_1","content":"{\"id\":\"e1\",\"link\":\"https://cal/e1\"}"}`,
			"not_found": `{"role":"tool","tool_call_id":"call_1","content":"Can not find tool named 'weather'"}`,
			"execution": `{"role":"tool","tool_call_id":"call_1","content":"Error: search service answered 503"}`,
		}},
		{"openai-responses", func(r *wield.Result) any { return llm.OpenAIResponsesResult("call_1", r) }, map[string]string{
			"string":    `{"type":"function_call_output","call_id":"call_1","output":"pong ]]> <ok>"}`,
			"execution": `{"type":"function_call_output","call_id":"call_1","output":"Error: search service answered 503"}`,
		}},
		{"anthropic", func(r *wield.Result) any { return llm.AnthropicResult("toolu_1", r) }, map[string]string{
			"object":    `{"type":"tool_result","tool_use_id":"toolu_1","content":"{\"id\":\"e1\",\"link\":\"https://cal/e1\"}"}`,
			"not_found": `{"type":"tool_result","tool_use_id":"toolu_1","content":"Can not find tool named 'weather'","is_error":true}`,
			"execution": `{"type":"tool_result","tool_use_id":"toolu_1","content":"Error: search service answered 503","is_error":true}`,
		}},
		{"gemini", func(r *wield.Result) any { return llm.GeminiResult("", r) }, map[string]string{
			"object":    `{"functionResponse":{"name":"create_event","response":{"output":{"id":"e1","link":"https://cal/e1"}}}}`,
			"string":    `{"functionResponse":{"name":"ping","response":{"output":"pong ]]> <ok>"}}}`,
			"empty":     `{"functionResponse":{"name":"ping","response":{"output":null}}}`,
			"not_found": `{"functionResponse":{"name":"weather","response":{"error":"Can not find tool named 'weather'"}}}`,
			"execution": `{"functionResponse":{"name":"web_search","response":{"error":"Error: search service answered 503"}}}`,
		}},
		{"gemini-id", func(r *wield.Result) any { return llm.GeminiResult("fc_9", r) }, map[string]string{
			"string": `{"functionResponse":{"id":"fc_9","name":"ping","response":{"output":"pong ]]> <ok>"}}}`,
		}},
		{"mcp", func(r *wield.Result) any { return llm.MCPResult(r) }, map[string]string{
			"object":     `{"content":[{"type":"text","text":"{\"id\":\"e1\",\"link\":\"https://cal/e1\"}"}],"structuredContent":{"id":"e1","link":"https://cal/e1"},"isError":false}`,
			"string":     `{"content":[{"type":"text","text":"pong ]]> <ok>"}],"isError":false}`,
			"not_found":  `{"content":[{"type":"text","text":"Can not find tool named 'weather'"}],"isError":true}`,
			"validation": fmt.Sprintf(`{"content":[{"type":"text","text":%s}],"isError":true}`, marshal(t, results["validation"].Text())),
		}},
	}
	for _, tt := range tests {
		for name, want := range tt.cases {
			if diff := cmp.Diff(want, marshal(t, tt.form(results[name]))); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tt.name, name, diff)
			}
		}
		// Nothing but the model-facing fields reaches any form.
		for name, r := range results {
			if got := marshal(t, tt.form(r)); strings.Contains(got, "10.0.0.7") {
				t.Errorf("%s %s leaks metadata: %s", tt.name, name, got)
			}
		}
	}
}

func ExampleXMLResult() {
	r := &wield.Result{Tool: "weather", ErrorType: wield.ErrToolNotFound, Error: "Can not find tool named 'weather'"}
	fmt.Println(llm.XMLResult(r))
	// Output:
	// <tool_result>
	//   <name>weather</name>
	//   <success>false</success>
	//   <error><![CDATA[Can not find tool named 'weather']]></error>
	// </tool_result>
}

func ExampleMCPResult() {
	r := &wield.Result{Tool: "create_event", OK: true, Output: json.RawMessage(`{"id":"e1"}`)}
	out, _ := json.Marshal(llm.MCPResult(r))
	fmt.Println(string(out))
	// Output:
	// {"content":[{"type":"text","text":"{\"id\":\"e1\"}"}],"structuredContent":{"id":"e1"},"isError":false}
}

// TestMessageResultText checks that a tool message carries Result.Text, the
// words every client sends, and its Content when it has no Result.
func TestMessageResultText(t *testing.T) {
	for name, r := range results {
		m := llm.Message{Role: llm.RoleTool, ToolName: r.Tool, Result: r}
		if diff := cmp.Diff(r.Text(), m.ResultText()); diff != "" {
			t.Errorf("%s: ResultText (-want +got):\n%s", name, diff)
		}
	}
	m := llm.Message{Role: llm.RoleTool, Content: "plain"}
	if got := m.ResultText(); got != "plain" {
		t.Errorf("ResultText without a Result = %q, want %q", got, "plain")
	}
}

// TestResultsKeepText checks that every dialect hands the model <, > and &
// as they are, also when the tool wrote its output with encoding/json's
// HTML escapes.
func TestResultsKeepText(t *testing.T) {
	const code = "if a < b && c > d"
	escaped, _ := json.Marshal(map[string]string{"code": code}) // {"code":"if a \u003c b ..."}
	quoted, _ := json.Marshal(code)
	for name, r := range map[string]*wield.Result{
		"string": {Tool: "echo", OK: true, Output: quoted},
		"object": {Tool: "echo", OK: true, Output: escaped},
		"error":  {Tool: "echo", ErrorType: wield.ErrExecution, Error: code},
	} {
		forms := map[string]any{
			"xml":              llm.XMLResult(r),
			"json":             llm.JSONResult(r),
			"openai":           llm.OpenAIResult("c1", r).Content,
			"openai-responses": llm.OpenAIResponsesResult("c1", r).Output,
			"anthropic":        llm.AnthropicResult("t1", r).Content,
			"gemini":           llm.GeminiResult("", r),
			"mcp":              llm.MCPResult(r),
			"mcp-structured":   string(llm.MCPResult(r).StructuredContent),
		}
		for form, v := range forms {
			text, ok := v.(string)
			if !ok {
				text = marshal(t, v)
			}
			if name == "object" && form == "mcp-structured" || form != "mcp-structured" {
				if !strings.Contains(text, code) || strings.Contains(text, `\u00`) {
					t.Errorf("%s result in %s = %s, want %q as it is", name, form, text, code)
				}
			}
		}
	}
}
