package llm

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// parseGot is a parsed call with its arguments decoded, so expected and
// actual arguments compare as JSON values, not as bytes.
type parseGot struct {
	Name string
	Args any
}

// parseWant writes an expected call: name and arguments as JSON text.
func parseWant(name, args string) parseGot {
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		panic("bad expected arguments for " + name + ": " + err.Error())
	}
	return parseGot{Name: name, Args: v}
}

func parseDecode(t *testing.T, calls []ParsedCall) []parseGot {
	t.Helper()
	out := []parseGot{}
	for _, c := range calls {
		var v any
		if err := json.Unmarshal(c.Arguments, &v); err != nil {
			t.Fatalf("call %s: arguments %q are not JSON: %v", c.Name, c.Arguments, err)
		}
		if _, ok := v.(map[string]any); !ok {
			t.Fatalf("call %s: arguments %s are not a JSON object", c.Name, c.Arguments)
		}
		out = append(out, parseGot{Name: c.Name, Args: v})
	}
	return out
}

type parseCase struct {
	name   string
	format Format
	text   string
	want   []parseGot
	lost   string // the IncompleteError's Lost, "" for none
}

// parseCases is the table TestParse checks and FuzzParse starts from: the
// formats below, and the classes in parse_classes_test.go.
var parseCases = slices.Concat(parseCasesFormats, parseCasesNoArguments, parseCasesCDATA, parseCasesReasoning)

var parseCasesFormats = []parseCase{
	// The XML prompt format, as written by the prompt generator.
	{
		name: "xml: the example of the XML call format",
		text: "I'll search for that.\n\n<tool_call>\n  <name>web_search</name>\n  <params>\n    <query><![CDATA[Python async best practices]]></query>\n    <max_results><![CDATA[10]]></max_results>\n  </params>\n</tool_call>",
		want: []parseGot{parseWant("web_search", `{"query":"Python async best practices","max_results":10}`)},
	},
	{
		name: "xml conversions without schema",
		text: "<tool_call><name>web_search</name><params><query><![CDATA[天气 北京]]></query><freshness><![CDATA[noLimit]]></freshness><count><![CDATA[10]]></count><safe><![CDATA[true]]></safe><ratio><![CDATA[3.14]]></ratio><code><![CDATA[007]]></code></params></tool_call>",
		want: []parseGot{parseWant("web_search", `{"query":"天气 北京","freshness":"noLimit","count":10,"safe":true,"ratio":3.14,"code":7}`)},
	},
	{
		name: "xml code in cdata kept byte for byte",
		text: "Let me write the file.\n<tool_call>\n<name>create_artifact</name>\n<params>\n<id><![CDATA[fib]]></id>\n<content><![CDATA[def fib(n):\n    if n < 2 and n >= 0:\n        return n  # a & b\n    return fib(n-1) + fib(n-2)\nprint(\"<tag>\", 'x')\n]]></content>\n</params>\n</tool_call>",
		want: []parseGot{parseWant("create_artifact", `{"id":"fib","content":"def fib(n):\n    if n < 2 and n >= 0:\n        return n  # a & b\n    return fib(n-1) + fib(n-2)\nprint(\"<tag>\", 'x')\n"}`)},
	},
	{
		name: "xml cdata split to carry ]]>",
		text: "<tool_call><name>echo</name><params><message><![CDATA[a]]]]><![CDATA[>b]]></message></params></tool_call>",
		want: []parseGot{parseWant("echo", `{"message":"a]]>b"}`)},
	},
	{
		name: "xml sloppy: no cdata, entities, missing closing tags",
		text: "<tool_call>\n<name>web_fetch</name>\n<params>\n<url>https://example.com/?a=1&amp;b=2</url>\n<max_length>5000\n</params>\n",
		want: []parseGot{parseWant("web_fetch", `{"url":"https://example.com/?a=1&b=2","max_length":5000}`)},
	},
	{
		name: "xml sloppy: mixed case and whitespace in tags",
		text: "<Tool_Call>\n   <NAME> read_artifact </NAME>\n   <Params>\n      < id ><![CDATA[report]]></ id >\n      <maxVersion>2</MAXVERSION>\n   </Params>\n</TOOL_CALL>",
		want: []parseGot{parseWant("read_artifact", `{"id":"report","maxVersion":2}`)},
	},
	{
		name: "xml sloppy: no params container, stop sequence ate </tool_call>",
		text: "<tool_call>\n<name>call_subagent</name>\n<agent_name><![CDATA[search]]></agent_name>\n<instruction><![CDATA[查找 2024 年的论文]]></instruction>\n",
		want: []parseGot{parseWant("call_subagent", `{"agent_name":"search","instruction":"查找 2024 年的论文"}`)},
	},
	{
		name: "xml parameter named name inside params",
		text: "<tool_call><name>create_artifact</name><params><name><![CDATA[notes.md]]></name><content><![CDATA[# Notes]]></content></params></tool_call>",
		want: []parseGot{parseWant("create_artifact", `{"name":"notes.md","content":"# Notes"}`)},
	},
	{
		name: "xml two calls and prose between",
		text: "First I search.\n<tool_call><name>web_search</name><params><query><![CDATA[go generics]]></query></params></tool_call>\nThen I fetch.\n<tool_call><name>web_fetch</name><params><url><![CDATA[https://go.dev/doc]]></url></params></tool_call>\nDone.",
		want: []parseGot{
			parseWant("web_search", `{"query":"go generics"}`),
			parseWant("web_fetch", `{"url":"https://go.dev/doc"}`),
		},
	},
	{
		name: "xml no arguments",
		text: "<tool_call>\n  <name>current_time</name>\n  <params>\n  </params>\n</tool_call>",
		want: []parseGot{parseWant("current_time", `{}`)},
	},
	{
		name: "xml forgot </tool_call> before the next call",
		text: "<tool_call><name>a</name><params><x>1</x></params>\n<tool_call><name>b</name><params><y>no</y></params></tool_call>",
		want: []parseGot{parseWant("a", `{"x":1}`), parseWant("b", `{"y":"no"}`)},
	},
	{
		name:   "xml only, hermes ignored",
		format: FormatXML,
		text:   "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call><name>b</name></tool_call>",
		want:   []parseGot{parseWant("b", `{}`)},
	},
	{
		name: "xml truncated inside cdata",
		text: "<tool_call><name>web_search</name><params><query><![CDATA[x]]></query></params></tool_call>\n<tool_call><name>create_artifact</name><params><id><![CDATA[a]]></id><content><![CDATA[def main():\n    print(",
		want: []parseGot{parseWant("web_search", `{"query":"x"}`)},
		lost: `call 2 (create_artifact) cut off inside the value of parameter "content"`,
	},
	{
		name: "xml truncated inside a tag",
		text: "<tool_call><name>web_fetch</name><params><url>https://a.b</url><max_len",
		want: []parseGot{},
		lost: "call 1 (web_fetch) cut off inside a tag",
	},
	{
		name: "xml truncated right after the opening tag",
		text: "Searching now.\n<tool_call>\n",
		want: []parseGot{},
		lost: "call 1 cut off before its <name>",
	},

	// Hermes / Qwen2.5.
	{
		name: "hermes qwen2.5 single",
		text: "<tool_call>\n{\"name\": \"get_current_weather\", \"arguments\": {\"location\": \"San Francisco, CA\", \"unit\": \"fahrenheit\"}}\n</tool_call>",
		want: []parseGot{parseWant("get_current_weather", `{"location":"San Francisco, CA","unit":"fahrenheit"}`)},
	},
	{
		name: "hermes parallel calls keep JSON types",
		text: "<tool_call>\n{\"name\": \"get_temperature\", \"arguments\": {\"location\": \"San Francisco, CA, USA\", \"days\": 3, \"metric\": true, \"zip\": \"007\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_temperature_date\", \"arguments\": {\"location\": \"San Francisco, CA, USA\", \"date\": \"2024-10-01\"}}\n</tool_call>",
		want: []parseGot{
			parseWant("get_temperature", `{"location":"San Francisco, CA, USA","days":3,"metric":true,"zip":"007"}`),
			parseWant("get_temperature_date", `{"location":"San Francisco, CA, USA","date":"2024-10-01"}`),
		},
	},
	{
		name: "hermes arguments that mention the closing tag",
		text: "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"p.md\", \"content\": \"End with </tool_call> then stop.\"}}\n</tool_call>",
		want: []parseGot{parseWant("write_file", `{"path":"p.md","content":"End with </tool_call> then stop."}`)},
	},
	{
		name: "hermes missing final brace",
		text: "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"main.go\"}\n</tool_call>",
		want: []parseGot{parseWant("read_file", `{"path":"main.go"}`)},
	},
	{
		name: "hermes truncated",
		text: "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.txt\", \"content\": \"hello wor",
		want: []parseGot{},
		lost: "call 1 (write_file) cut off inside its JSON",
	},
	{
		name: "hermes invalid JSON is reported",
		text: "<tool_call>\n{'name': 'get_weather', 'arguments': {'city': 'Paris'}}\n</tool_call>",
		want: []parseGot{},
		lost: "call 1 in <tool_call> is not valid JSON (error at byte 1 of the JSON)",
	},
	{
		name: "hermes inside a fence counted once",
		text: "```xml\n<tool_call>\n{\"name\": \"list_files\", \"arguments\": {\"path\": \".\"}}\n</tool_call>\n```",
		want: []parseGot{parseWant("list_files", `{"path":"."}`)},
	},

	// Qwen3-Coder.
	{
		name: "qwen3 coder",
		text: "I'll create the file.\n<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/main.py\n</parameter>\n<parameter=content>\nimport sys\n\nif len(sys.argv) < 2 and True:\n    print(\"usage: main.py <name>\")\n</parameter>\n</function>\n</tool_call>",
		want: []parseGot{parseWant("write_file", `{"path":"src/main.py","content":"import sys\n\nif len(sys.argv) < 2 and True:\n    print(\"usage: main.py <name>\")"}`)},
	},
	{
		name: "qwen3 coder values without schema",
		text: "<tool_call>\n<function=search_files>\n<parameter=pattern>\nTODO\n</parameter>\n<parameter=max_results>\n50\n</parameter>\n<parameter=recursive>\ntrue\n</parameter>\n</function>\n</tool_call>",
		want: []parseGot{parseWant("search_files", `{"pattern":"TODO","max_results":50,"recursive":true}`)},
	},
	{
		name: "qwen3 coder missing closing tags, two calls",
		text: "<tool_call>\n<function=read_file>\n<parameter=path>\na.go\n<parameter=offset>\n10\n</function>\n</tool_call>\n<tool_call>\n<function=current_time>\n</function>\n</tool_call>",
		want: []parseGot{parseWant("read_file", `{"path":"a.go","offset":10}`), parseWant("current_time", `{}`)},
	},
	{
		name: "qwen3 coder html content, closing tag missing before the next parameter",
		text: "<tool_call>\n<function=write_file>\n<parameter=content>\n<!DOCTYPE html>\n<html>\n<body><p class=\"x\">Hi & bye</p></body>\n</html>\n<parameter=path>\nindex.html\n</parameter>\n</function>\n</tool_call>",
		want: []parseGot{parseWant("write_file", `{"content":"<!DOCTYPE html>\n<html>\n<body><p class=\"x\">Hi & bye</p></body>\n</html>","path":"index.html"}`)},
	},
	{
		name: "qwen3 coder truncated",
		text: "<tool_call>\n<function=write_file>\n<parameter=path>\nout.txt\n</parameter>\n<parameter=content>\nline one\nline tw",
		want: []parseGot{},
		lost: `call 1 (write_file) cut off inside the value of parameter "content"`,
	},

	// Claude-style <function_calls>.
	{
		name: "invoke two calls",
		text: "I'll check both cities.\n\n<function_calls>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">San Francisco, CA</parameter>\n<parameter name=\"unit\">celsius</parameter>\n</invoke>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">東京</parameter>\n</invoke>\n</function_calls>",
		want: []parseGot{
			parseWant("get_weather", `{"location":"San Francisco, CA","unit":"celsius"}`),
			parseWant("get_weather", `{"location":"東京"}`),
		},
	},
	{
		name: "invoke unquoted attributes and raw code",
		text: "<function_calls>\n<invoke name=str_replace>\n<parameter name=path>app.js</parameter>\n<parameter name=new_str>\nif (a < b && c > d) { return \"x\"; }\n</parameter>\n</invoke>\n</function_calls>",
		want: []parseGot{parseWant("str_replace", `{"path":"app.js","new_str":"if (a < b && c > d) { return \"x\"; }"}`)},
	},
	{
		name: "invoke with namespace prefix, closed by the stop sequence",
		text: "<fc:function_calls>\n<fc:invoke name='calculator'>\n<fc:parameter name='expression'>2 * (3 + 4)</fc:parameter>\n<fc:parameter name='precision'>2</fc:parameter>\n</fc:invoke>\n",
		want: []parseGot{parseWant("calculator", `{"expression":"2 * (3 + 4)","precision":2}`)},
	},
	{
		name: "invoke truncated in a parameter",
		text: "<function_calls>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">Paris</parameter>\n</invoke>\n<invoke name=\"write_file\">\n<parameter name=\"content\">Once upon a ti",
		want: []parseGot{parseWant("get_weather", `{"location":"Paris"}`)},
		lost: `call 2 (write_file) cut off inside the value of parameter "content"`,
	},

	// Llama 3.1.
	{
		name: "llama python_tag json",
		text: "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"San Francisco\", \"metric\": true}}<|eom_id|>",
		want: []parseGot{parseWant("get_weather", `{"city":"San Francisco","metric":true}`)},
	},
	{
		name: "llama python_tag built-in tool",
		text: "<|python_tag|>brave_search.call(query=\"current weather in Menlo Park, California\")<|eom_id|>",
		want: []parseGot{parseWant("brave_search", `{"query":"current weather in Menlo Park, California"}`)},
	},
	{
		name: "llama python_tag several calls separated by semicolons",
		text: "<|python_tag|>{\"name\": \"a\", \"parameters\": {\"x\": 1}}; {\"name\": \"b\", \"parameters\": {\"y\": [1, 2]}}<|eot_id|>",
		want: []parseGot{parseWant("a", `{"x":1}`), parseWant("b", `{"y":[1,2]}`)},
	},
	{
		name: "llama python call with python literals",
		text: "<|python_tag|>wolfram_alpha.call(query='solve x^2 = 4', exact=True, limit=3, tags=['a', \"b\"], opts={'k': None})",
		want: []parseGot{parseWant("wolfram_alpha", `{"query":"solve x^2 = 4","exact":true,"limit":3,"tags":["a","b"],"opts":{"k":null}}`)},
	},

	// Mistral.
	{
		name: "mistral v3 array",
		text: "[TOOL_CALLS] [{\"name\": \"get_current_weather\", \"arguments\": {\"location\": \"Paris, France\", \"format\": \"celsius\"}}, {\"name\": \"get_time\", \"arguments\": {}}]</s>",
		want: []parseGot{
			parseWant("get_current_weather", `{"location":"Paris, France","format":"celsius"}`),
			parseWant("get_time", `{}`),
		},
	},
	{
		name: "mistral v11 name[ARGS]",
		text: "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Lyon\"}[TOOL_CALLS]get_time[CALL_ID]a1b2c3d4e[ARGS]{\"tz\": \"Europe/Paris\"}",
		want: []parseGot{parseWant("get_weather", `{"city":"Lyon"}`), parseWant("get_time", `{"tz":"Europe/Paris"}`)},
	},
	{
		name: "mistral truncated",
		text: "[TOOL_CALLS][{\"name\": \"send_email\", \"arguments\": {\"to\": \"a@b.c\", \"body\": \"Hi",
		want: []parseGot{},
		lost: "call 1 (send_email) cut off inside its JSON",
	},

	// JSON in text (the JSON prompt format, DeepSeek-style fences, bare).
	{
		name: "json prompt format name/parameters in a fence",
		text: "好的，我来调用工具：\n```json\n{\n  \"name\": \"sql_tool\",\n  \"parameters\": {\n    \"query\": \"SELECT * FROM orders WHERE total > 100\",\n    \"limit\": 20\n  }\n}\n```",
		want: []parseGot{parseWant("sql_tool", `{"query":"SELECT * FROM orders WHERE total > 100","limit":20}`)},
	},
	{
		name: "json array of calls bare",
		text: "[{\"tool\": \"plot_tool\", \"parameters\": {\"kind\": \"bar\"}}, {\"name\": \"excel_tool\", \"arguments\": \"{\\\"sheet\\\": \\\"Q3\\\"}\"}]",
		want: []parseGot{parseWant("plot_tool", `{"kind":"bar"}`), parseWant("excel_tool", `{"sheet":"Q3"}`)},
	},
	{
		name: "json function with arguments string, deepseek fence",
		text: "To answer, I need the weather.\n\n```json\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": \"{\\\"location\\\": \\\"Hangzhou\\\"}\"}}\n```\n",
		want: []parseGot{parseWant("get_weather", `{"location":"Hangzhou"}`)},
	},
	{
		name: "json tool_calls wrapper",
		text: "{\"tool_calls\": [{\"name\": \"echo\", \"arguments\": {\"message\": \"héllo 👋\"}}]}",
		want: []parseGot{parseWant("echo", `{"message":"héllo 👋"}`)},
	},
	{
		name:   "json format ignores tags",
		format: FormatJSON,
		text:   "<function=x></function>\n```json\n{\"name\": \"y\", \"arguments\": {\"n\": 1.5}}\n```",
		want:   []parseGot{parseWant("y", `{"n":1.5}`)},
	},
	{
		name: "json call with arguments that are not an object",
		text: "{\"name\": \"echo\", \"arguments\": [1, 2]}",
		want: []parseGot{},
		lost: "call 1 (echo) has arguments that are an array, not a JSON object",
	},

	// Provider response objects.
	{
		name: "openai chat.completion",
		text: `{"id":"chatcmpl-abc","object":"chat.completion","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Boston, MA\"}"}},{"id":"call_2","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
		want: []parseGot{parseWant("get_weather", `{"location":"Boston, MA"}`), parseWant("get_time", `{}`)},
	},
	{
		name: "openai-compatible server that left the calls in the content",
		text: `{"object":"chat.completion","model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"message":{"role":"assistant","content":"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"北京\"}}\n</tool_call>","tool_calls":[]},"finish_reason":"stop"}]}`,
		want: []parseGot{parseWant("get_weather", `{"city":"北京"}`)},
	},
	{
		name:   "openai responses output",
		format: FormatOpenAI,
		text:   `{"id":"resp_1","object":"response","output":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"location\":\"Paris, France\"}"}]}`,
		want:   []parseGot{parseWant("get_weather", `{"location":"Paris, France"}`)},
	},
	{
		name:   "anthropic message",
		format: FormatAnthropic,
		text:   `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"I'll check. <tool_call> is not used here."},{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"location":"San Francisco, CA","unit":"celsius"}}],"stop_reason":"tool_use"}`,
		want:   []parseGot{parseWant("get_weather", `{"location":"San Francisco, CA","unit":"celsius"}`)},
	},
	{
		name:   "gemini candidates",
		format: FormatGemini,
		text:   `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"schedule_meeting","args":{"attendees":["Bob","Alice"],"date":"2025-03-27","duration":30}}},{"functionCall":{"name":"ping"}}]},"finishReason":"STOP"}]}`,
		want:   []parseGot{parseWant("schedule_meeting", `{"attendees":["Bob","Alice"],"date":"2025-03-27","duration":30}`), parseWant("ping", `{}`)},
	},
	{
		name: "gemini in auto mode",
		text: `{"candidates":[{"content":{"parts":[{"text":"Sure."},{"functionCall":{"name":"lights_on","args":{"room":"kitchen"}}}]}}]}`,
		want: []parseGot{parseWant("lights_on", `{"room":"kitchen"}`)},
	},
	{
		name:   "anthropic format ignores openai shapes",
		format: FormatAnthropic,
		text:   `{"choices":[{"message":{"tool_calls":[{"type":"function","function":{"name":"x","arguments":"{}"}}]}}]}`,
		want:   []parseGot{},
	},
	{
		name:   "openai truncated response",
		format: FormatOpenAI,
		text:   `{"choices":[{"message":{"tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":"{\"loc`,
		want:   []parseGot{},
		lost:   "call 1 (get_weather) cut off at byte 109 of the openai response",
	},

	// Several formats in one text.
	{
		name: "mixed formats in order of appearance",
		text: "Step one:\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\nStep two:\n<function_calls><invoke name=\"b\"><parameter name=\"k\">v</parameter></invoke></function_calls>\nStep three:\n```json\n{\"name\": \"c\", \"arguments\": {\"n\": 3}}\n```\nStep four:\n<tool_call><name>d</name><params><z><![CDATA[false]]></z></params></tool_call>",
		want: []parseGot{parseWant("a", `{}`), parseWant("b", `{"k":"v"}`), parseWant("c", `{"n":3}`), parseWant("d", `{"z":false}`)},
	},

	// More shapes models produce.
	{
		name: "xml name as an attribute, numeric character references",
		text: "<tool_call name=\"echo\">\n<message>&#x4e2d;&#25991; &lt;ok&gt;</message>\n</tool_call>",
		want: []parseGot{parseWant("echo", `{"message":"中文 <ok>"}`)},
	},
	{
		name: "xml params written as JSON keep JSON types",
		text: "<tool_call>\n<name>sql_tool</name>\n<params>{\"query\": \"SELECT 1\", \"limit\": \"007\"}</params>\n</tool_call>",
		want: []parseGot{parseWant("sql_tool", `{"query":"SELECT 1","limit":"007"}`)},
	},
	{
		name: "invoke self-closing without arguments",
		text: "<function_calls>\n<invoke name=\"current_time\"/>\n</function_calls>",
		want: []parseGot{parseWant("current_time", `{}`)},
	},
	{
		name: "qwen3 coder without the tool_call wrapper",
		text: "<function=list_files>\n<parameter=path>\n./src\n</parameter>\n</function>",
		want: []parseGot{parseWant("list_files", `{"path":"./src"}`)},
	},
	{
		name:   "hermes only: two objects with a comma in one block, xml ignored",
		format: FormatHermes,
		text:   "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": [1, {\"y\": null}]}},\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>\n<tool_call><name>c</name></tool_call>",
		want:   []parseGot{parseWant("a", `{"x":[1,{"y":null}]}`), parseWant("b", `{}`)},
	},
	{
		name: "openai legacy function_call message",
		text: `{"role": "assistant", "content": null, "function_call": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}`,
		want: []parseGot{parseWant("get_weather", `{"city":"Oslo"}`)},
	},
	{
		name: "prose names an unclosed invoke, a hermes call follows",
		text: "Claude uses <invoke> blocks; I use this:\n<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>",
		want: []parseGot{parseWant("ping", `{}`)},
	},
	{
		name: "llama python_tag truncated",
		text: "<|python_tag|>{\"name\": \"search\", \"parameters\": {\"query\": \"long q",
		want: []parseGot{},
		lost: "call 1 (search) cut off inside its JSON",
	},
	{
		name: "fence never closed, JSON cut off",
		text: "```json\n[{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"k\": tr",
		want: []parseGot{parseWant("a", `{}`)},
		lost: "call 2 (b) cut off inside its JSON",
	},

	// Prose: no call.
	{
		name: "plain prose",
		text: "The capital of France is Paris. Let me know if you need anything else!",
		want: []parseGot{},
	},
	{
		name: "prose mentions tags in backticks",
		text: "To call a tool, wrap JSON in `<tool_call>` tags, e.g. `<tool_call>{\"name\": \"x\", \"arguments\": {}}</tool_call>`, or use `<function=name>`.",
		want: []parseGot{},
	},
	{
		name: "prose with JSON that is not a call",
		text: "Here is the user record:\n```json\n{\"name\": \"Alice\", \"age\": 30, \"tags\": [\"admin\"]}\n```\nand a list [1, 2, 3] and braces {like this}.",
		want: []parseGot{},
	},
	{
		name: "prose with comparison signs and a stray tag",
		text: "If x < 3 and y > 2 then <b>bold</b> text; see [docs](https://example.com) {not json",
		want: []parseGot{},
	},
	{
		name: "prose describing the format without a call",
		text: "I can use tools by writing a <tool_call> block when needed. For now, no tool is necessary.</tool_call>",
		want: []parseGot{},
	},
	{
		name: "prose names an unclosed tag, a JSON call follows",
		text: "I'll use the <tool_call> format here:\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"Asia/Shanghai\"}}",
		want: []parseGot{parseWant("get_time", `{"tz":"Asia/Shanghai"}`)},
	},
	{
		name: "fence inside a JSON string does not close the block",
		text: "```json\n{\"function\": \"create_artifact\", \"arguments\": {\"content\": \"```go\\nfmt.Println()\\n```\"}}\n```\nDone.",
		want: []parseGot{parseWant("create_artifact", "{\"content\":\"```go\\nfmt.Println()\\n```\"}")},
	},
	{
		name: "empty text",
		text: "",
		want: []parseGot{},
	},
}

func TestParse(t *testing.T) {
	if len(parseCases) < 40 {
		t.Fatalf("the table has %d cases, want at least 40", len(parseCases))
	}
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := Parse(tc.text, &ParseOptions{Format: tc.format})
			if calls == nil {
				t.Fatal("Parse returned a nil slice")
			}
			if diff := cmp.Diff(tc.want, parseDecode(t, calls)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			lost := ""
			if err != nil {
				var ie *IncompleteError
				if !errors.As(err, &ie) {
					t.Fatalf("error %v is not an *IncompleteError", err)
				}
				if ie.Recovered != len(calls) {
					t.Errorf("Recovered = %d, want %d", ie.Recovered, len(calls))
				}
				lost = ie.Lost
			}
			if diff := cmp.Diff(tc.lost, lost); diff != "" {
				t.Errorf("lost (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseSchema shows the schema deciding how text values convert in the
// XML-like formats, and not touching JSON formats.
func TestParseSchema(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{
		"t": {
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"code":   {Type: "string"},
				"n":      {Type: "integer"},
				"f":      {Type: "number"},
				"on":     {Type: "boolean"},
				"list":   {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
				"obj":    {Type: "object"},
				"opt":    {Types: []string{"null", "integer"}},
				"color":  {Enum: []any{"red", "007"}},
				"either": {AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "array"}}},
				"ref":    {Ref: "#/$defs/id"},
			},
			Defs: map[string]*jsonschema.Schema{"id": {Type: "string"}},
		},
	}
	opts := &ParseOptions{Schema: func(name string) *jsonschema.Schema { return schemas[name] }}
	tests := []struct {
		name, text string
		want       []parseGot
	}{
		{
			name: "xml",
			text: "<tool_call><name>t</name><params><code><![CDATA[007]]></code><n><![CDATA[ 42 ]]></n><f>2.50</f><on>TRUE</on><list><![CDATA[[\"a\", \"b\"]]]></list><obj><![CDATA[{\"k\": {\"v\": 1}}]]></obj><opt>null</opt><color>007</color><either>[1]</either><ref>12</ref><extra>12</extra></params></tool_call>",
			want: []parseGot{parseWant("t", `{"code":"007","n":42,"f":2.5,"on":true,"list":["a","b"],"obj":{"k":{"v":1}},"opt":null,"color":"007","either":[1],"ref":"12","extra":12}`)},
		},
		{
			name: "values that do not fit stay strings for the validator",
			text: "<tool_call><name>t</name><params><n>forty</n><n2>1</n2><list>a, b</list><on>yes</on></params></tool_call>",
			want: []parseGot{parseWant("t", `{"n":"forty","n2":1,"list":"a, b","on":"yes"}`)},
		},
		{
			name: "integer written as a whole float",
			text: "<tool_call>\n<function=t>\n<parameter=n>\n3.0\n</parameter>\n<parameter=code>\n12\n</parameter>\n</function>\n</tool_call>",
			want: []parseGot{parseWant("t", `{"n":3,"code":"12"}`)},
		},
		{
			name: "invoke",
			text: "<function_calls><invoke name=\"t\"><parameter name=\"code\">0123</parameter><parameter name=\"list\">[\"x\"]</parameter></invoke></function_calls>",
			want: []parseGot{parseWant("t", `{"code":"0123","list":["x"]}`)},
		},
		{
			name: "json formats keep their types",
			text: "<tool_call>{\"name\": \"t\", \"arguments\": {\"code\": 7, \"n\": \"5\"}}</tool_call>",
			want: []parseGot{parseWant("t", `{"code":7,"n":"5"}`)},
		},
		{
			name: "a bare name alone is a call of a known tool only",
			text: "```json\n{\"name\": \"t\"}\n```\n{\"name\": \"Alice\"}\n<tool_call>{\"name\": \"other\"}</tool_call>",
			want: []parseGot{parseWant("t", `{}`), parseWant("other", `{}`)},
		},
		{
			name: "unknown tool converts as without schema",
			text: "<tool_call><name>other</name><params><code>007</code></params></tool_call>",
			want: []parseGot{parseWant("other", `{"code":7}`)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := Parse(tc.text, opts)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want, parseDecode(t, calls)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		text   string
		want   string
	}{
		{"unknown format", "yaml", "x", `parse tool calls: unknown format "yaml" (want one of auto, xml, hermes, qwen3_coder, invoke, json, python_tag, mistral, openai, anthropic, gemini)`},
		{"provider text not JSON", FormatOpenAI, "Sorry, I can't.", "parse tool calls: openai response is not a JSON object (byte 0 is 'S')"},
		{"provider JSON invalid", FormatAnthropic, "\n{\"content\": [}", "parse tool calls: anthropic response is not valid JSON (error at byte 14)"},
		{"provider text after JSON", FormatGemini, `{"candidates":[]} trailing`, "parse tool calls: gemini response has text after its JSON at byte 18"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := Parse(tc.text, &ParseOptions{Format: tc.format})
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tc.text, calls)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if calls == nil || len(calls) != 0 {
				t.Errorf("calls = %#v, want an empty slice", calls)
			}
		})
	}
}

// TestParseArgumentsAreCompactObjects checks the bytes handed to the engine:
// always a compact JSON object, unicode kept as written.
func TestParseArgumentsAreCompactObjects(t *testing.T) {
	for _, tc := range parseCases {
		calls, _ := Parse(tc.text, &ParseOptions{Format: tc.format})
		for _, c := range calls {
			s := string(c.Arguments)
			if !strings.HasPrefix(s, "{") || !json.Valid(c.Arguments) {
				t.Errorf("%s: call %s: arguments %s are not a JSON object", tc.name, c.Name, s)
			}
			if strings.Contains(s, "\\u00") && !strings.Contains(tc.text, "\\u00") {
				t.Errorf("%s: call %s: arguments %s escape characters the text did not", tc.name, c.Name, s)
			}
		}
	}
}
