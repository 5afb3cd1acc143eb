package llm

// The classes of text that once came out wrong, several variants each: a
// call written without arguments, a value whose CDATA holds CDATA, and a
// call inside reasoning. They join parseCases, so TestParse checks them and
// FuzzParse starts from them.

// parseCasesNoArguments: every shape of call with its arguments missing,
// null, "", "null", under another key or encoded as a string. A tool
// without parameters is called that way.
var parseCasesNoArguments = []parseCase{
	{
		name: "no arguments: hermes name only",
		text: `<tool_call>{"name":"current_time"}</tool_call>`,
		want: []parseGot{parseWant("current_time", `{}`)},
	},
	{
		name: "no arguments: hermes name only beside a call with arguments",
		text: "<tool_call>\n{\"name\": \"current_time\"}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		want: []parseGot{parseWant("current_time", `{}`), parseWant("get_weather", `{"city":"Paris"}`)},
	},
	{
		name:   "no arguments: hermes name with id and type only",
		format: FormatHermes,
		text:   `<tool_call>{"id": "call_0", "type": "function", "name": "current_time"}</tool_call>`,
		want:   []parseGot{parseWant("current_time", `{}`)},
	},
	{
		name: "no arguments: hermes array of names",
		text: `<tool_call>[{"name": "current_time"}, {"tool": "list_files"}]</tool_call>`,
		want: []parseGot{parseWant("current_time", `{}`), parseWant("list_files", `{}`)},
	},
	{
		name: "no arguments: hermes arguments beside the name",
		text: `<tool_call>{"name": "get_weather", "city": "Paris", "days": 2}</tool_call>`,
		want: []parseGot{parseWant("get_weather", `{"city":"Paris","days":2}`)},
	},
	{
		name: "no arguments: hermes null, empty string and the string null",
		text: `<tool_call>{"name": "a", "arguments": null}</tool_call><tool_call>{"name": "b", "arguments": ""}</tool_call><tool_call>{"name": "c", "arguments": "null"}</tool_call><tool_call>{"name": "d", "arguments": " "}</tool_call>`,
		want: []parseGot{parseWant("a", `{}`), parseWant("b", `{}`), parseWant("c", `{}`), parseWant("d", `{}`)},
	},
	{
		name: "no arguments: hermes parameters as a JSON string",
		text: `<tool_call>{"name": "get_weather", "parameters": "{\"city\": \"Oslo\"}"}</tool_call>`,
		want: []parseGot{parseWant("get_weather", `{"city":"Oslo"}`)},
	},
	{
		name: "no arguments: arguments encoded twice",
		text: `<tool_call>{"name": "get_weather", "arguments": "\"{\\\"city\\\": \\\"Rome\\\"}\""}</tool_call>`,
		want: []parseGot{parseWant("get_weather", `{"city":"Rome"}`)},
	},
	{
		name: "no arguments: llama python_tag name only",
		text: "<|python_tag|>{\"name\": \"current_time\"}<|eom_id|>",
		want: []parseGot{parseWant("current_time", `{}`)},
	},
	{
		name: "no arguments: mistral array of names",
		text: `[TOOL_CALLS][{"name": "current_time"}, {"name": "get_weather", "arguments": {"city": "Lyon"}}]`,
		want: []parseGot{parseWant("current_time", `{}`), parseWant("get_weather", `{"city":"Lyon"}`)},
	},
	{
		name: "no arguments: mistral v11 null and empty string",
		text: `[TOOL_CALLS]current_time[ARGS]null[TOOL_CALLS]list_files[ARGS]""`,
		want: []parseGot{parseWant("current_time", `{}`), parseWant("list_files", `{}`)},
	},
	{
		name: "no arguments: fenced JSON prompt format, name only",
		text: "我来查看时间：\n```json\n{\"name\": \"current_time\"}\n```",
		want: []parseGot{parseWant("current_time", `{}`)},
	},
	{
		name: "no arguments: fenced JSON prompt format, parameters null and {}",
		text: "```json\n[{\"name\": \"current_time\", \"parameters\": null}, {\"name\": \"list_files\", \"parameters\": {}}]\n```",
		want: []parseGot{parseWant("current_time", `{}`), parseWant("list_files", `{}`)},
	},
	{
		name: "no arguments: bare tool key and typed function",
		text: `{"tool": "current_time"} then {"type": "function", "name": "list_files"}`,
		want: []parseGot{parseWant("current_time", `{}`), parseWant("list_files", `{}`)},
	},
	{
		name: "no arguments: bare names that are data stay data",
		text: `The user is {"name": "Alice Smith"} and the file {"name": "a.txt", "size": 3}.`,
		want: []parseGot{},
	},
	{
		name: "no arguments: openai chat.completion with arguments null and \"null\"",
		text: `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"current_time","arguments":"null"}},{"id":"call_2","type":"function","function":{"name":"list_files","arguments":null}},{"id":"call_3","type":"function","function":{"name":"ping"}}]}}]}`,
		want: []parseGot{parseWant("current_time", `{}`), parseWant("list_files", `{}`), parseWant("ping", `{}`)},
	},
	{
		name:   "no arguments: openai responses, anthropic and gemini without arguments",
		format: FormatAuto,
		text:   `[{"type":"function_call","call_id":"c1","name":"a","arguments":""},{"type":"tool_use","id":"t1","name":"b","input":null},{"functionCall":{"name":"c","args":null}}]`,
		want:   []parseGot{parseWant("a", `{}`), parseWant("b", `{}`), parseWant("c", `{}`)},
	},
	{
		name: "no arguments: the tag formats",
		text: "<tool_call>\n<function=current_time>\n</function>\n</tool_call>\n<function_calls><invoke name=\"list_files\"></invoke></function_calls>\n<tool_call><name>ping</name><params/></tool_call>",
		want: []parseGot{parseWant("current_time", `{}`), parseWant("list_files", `{}`), parseWant("ping", `{}`)},
	},
	{
		name: "no arguments: arguments that are a string of text are reported",
		text: `<tool_call>{"name": "echo", "arguments": "\"hello\""}</tool_call>`,
		want: []parseGot{},
		lost: "call 1 (echo) has arguments that are a string, not a JSON object",
	},
}

// parseCasesCDATA: values of the XML call format with CDATA inside CDATA
// (an SVG, XML or HTML file written by a coding agent), and the other ways
// a value's text is written. A value is never silently "".
var parseCasesCDATA = []parseCase{
	{
		name: "cdata: nested section in an SVG comes back whole",
		text: "<tool_call>\n<name>write_file</name>\n<params>\n<path><![CDATA[icon.svg]]></path>\n<content><![CDATA[<svg xmlns=\"http://www.w3.org/2000/svg\">\n<style><![CDATA[\n  .a { fill: red; }\n]]></style>\n<rect class=\"a\" width=\"10\" height=\"10\"/>\n</svg>\n]]></content>\n</params>\n</tool_call>",
		want: []parseGot{parseWant("write_file", `{"path":"icon.svg","content":"<svg xmlns=\"http://www.w3.org/2000/svg\">\n<style><![CDATA[\n  .a { fill: red; }\n]]></style>\n<rect class=\"a\" width=\"10\" height=\"10\"/>\n</svg>\n"}`)},
	},
	{
		name: "cdata: nested section before a parameter, which stays intact",
		text: "<tool_call><name>write_file</name><params><content><![CDATA[<a><![CDATA[1 < 2]]></a>]]></content><path><![CDATA[a.xml]]></path><overwrite><![CDATA[true]]></overwrite></params></tool_call>",
		want: []parseGot{parseWant("write_file", `{"content":"<a><![CDATA[1 < 2]]></a>","path":"a.xml","overwrite":true}`)},
	},
	{
		name: "cdata: two nested sections and one at the very end",
		text: "<tool_call><name>write_file</name><params><path>feed.xml</path><content><![CDATA[<feed><t><![CDATA[x]]></t><u><![CDATA[y]]></u><![CDATA[z]]>]]></content></params></tool_call>",
		want: []parseGot{parseWant("write_file", `{"path":"feed.xml","content":"<feed><t><![CDATA[x]]></t><u><![CDATA[y]]></u><![CDATA[z]]>"}`)},
	},
	{
		name: "cdata: nested section that mentions the closing tags of the call",
		text: "<tool_call><name>write_file</name><params><content><![CDATA[<doc><![CDATA[end with </content></params></tool_call>]]></doc>]]></content></params></tool_call>\n<tool_call><name>current_time</name></tool_call>",
		want: []parseGot{
			parseWant("write_file", `{"content":"<doc><![CDATA[end with </content></params></tool_call>]]></doc>"}`),
			parseWant("current_time", `{}`),
		},
	},
	{
		name: "cdata: a literal opening marker inside a section",
		text: "<tool_call><name>echo</name><params><message><![CDATA[a section opens with <![CDATA[ in XML]]></message><n>1</n></params></tool_call>",
		want: []parseGot{parseWant("echo", `{"message":"a section opens with <![CDATA[ in XML","n":1}`)},
	},
	{
		name: "cdata: split in two sections with a newline between, as XML reads it",
		text: "<tool_call><name>echo</name><params><message><![CDATA[first]]>\n<![CDATA[second <b>]]></message></params></tool_call>",
		want: []parseGot{parseWant("echo", `{"message":"first\nsecond <b>"}`)},
	},
	{
		name: "cdata: sections with entities between them",
		text: "<tool_call><name>echo</name><params><message><![CDATA[a]]>&amp;&lt;<![CDATA[b]]></message></params></tool_call>",
		want: []parseGot{parseWant("echo", `{"message":"a&<b"}`)},
	},
	{
		name: "cdata: text before a section",
		text: "<tool_call><name>echo</name><params><message>see <![CDATA[<b>bold</b>]]></message></params></tool_call>",
		want: []parseGot{parseWant("echo", `{"message":"see <b>bold</b>"}`)},
	},
	{
		name: "cdata: whitespace and newlines around the section",
		text: "<tool_call>\n<name>\n  web_search\n</name>\n<params>\n<query>\n   <![CDATA[  two spaces kept  ]]>   \n</query>\n</params>\n</tool_call>",
		want: []parseGot{parseWant("web_search", `{"query":"  two spaces kept  "}`)},
	},
	{
		name: "cdata: ]]> in plain text is text",
		text: "<tool_call><name>echo</name><params><message>a ]]> b</message></params></tool_call>",
		want: []parseGot{parseWant("echo", `{"message":"a ]]> b"}`)},
	},
	{
		name: "cdata: markup without CDATA but with its closing tag",
		text: "<tool_call><name>write_file</name><params><path>i.svg</path><content><svg><rect width=\"1\"/></svg></content></params></tool_call>",
		want: []parseGot{parseWant("write_file", `{"path":"i.svg","content":"<svg><rect width=\"1\"/></svg>"}`)},
	},
	{
		name: "cdata: entities without CDATA",
		text: "<tool_call><name>write_file</name><params><content>&lt;svg&gt;&lt;![CDATA[x]]&gt;&lt;/svg&gt;</content></params></tool_call>",
		want: []parseGot{parseWant("write_file", `{"content":"<svg><![CDATA[x]]></svg>"}`)},
	},
	{
		name: "cdata: markup without CDATA and without a closing tag is reported, not \"\"",
		text: "<tool_call><name>write_file</name><params><path>a.html</path><content><div>hi</div>\n<p>x</p></params></tool_call>",
		want: []parseGot{},
		lost: `call 1 (write_file) has parameter "content" with markup but no closing tag </content>, so its value cannot be recovered`,
	},
	{
		name: "cdata: forgotten ]]> before the closing tag",
		text: "<tool_call><name>echo</name><params><message><![CDATA[hello</message><n>2</n></params></tool_call>",
		want: []parseGot{parseWant("echo", `{"message":"hello","n":2}`)},
	},
	{
		name: "cdata: never closed and no closing tag in a closed call is reported",
		text: "<tool_call><name>write_file</name><params><content><![CDATA[abc</params></tool_call>",
		want: []parseGot{},
		lost: `call 1 (write_file) has parameter "content" with a CDATA section that is never closed (no ]]>) and no closing tag </content>, so its value cannot be recovered`,
	},
	{
		name: "cdata: unclosed at the end of the text is cut off",
		text: "<tool_call><name>write_file</name><params><path>a.svg</path><content><![CDATA[<svg><style><![CDATA[.a{}]]></style>",
		want: []parseGot{},
		lost: `call 1 (write_file) cut off inside the value of parameter "content"`,
	},
	{
		name: "cdata: nested in an invoke parameter",
		text: "<function_calls><invoke name=\"write_file\"><parameter name=\"content\"><![CDATA[<x><![CDATA[y]]></x>]]></parameter><parameter name=\"path\">x.xml</parameter></invoke></function_calls>",
		want: []parseGot{parseWant("write_file", `{"content":"<x><![CDATA[y]]></x>","path":"x.xml"}`)},
	},
}

// parseCasesReasoning: calls inside reasoning are never read as calls,
// whatever marks the reasoning.
var parseCasesReasoning = []parseCase{
	{
		name: "reasoning: think block with a hermes call, then the real call",
		text: "<think>\nThe user wants a clean folder. I could run <tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call> but that is too much.\n</think>\n\n<tool_call>{\"name\":\"list_files\",\"arguments\":{\"path\":\".\"}}</tool_call>",
		want: []parseGot{parseWant("list_files", `{"path":"."}`)},
	},
	{
		name:   "reasoning: think block with an XML call, xml format",
		format: FormatXML,
		text:   "<think>Maybe <tool_call><name>delete_file</name><params><path><![CDATA[/]]></path></params></tool_call>? No.</think>\n<tool_call><name>list_files</name><params><path><![CDATA[.]]></path></params></tool_call>",
		want:   []parseGot{parseWant("list_files", `{"path":"."}`)},
	},
	{
		name: "reasoning: a lone closing tag, the opening one was in the prompt",
		text: "Okay, the user wants the time. <tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call> is not it.\n</think>\n\n<tool_call>{\"name\":\"current_time\"}</tool_call>",
		want: []parseGot{parseWant("current_time", `{}`)},
	},
	{
		name: "reasoning: never closed, the call in it is reported",
		text: "<think>I will call <tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call> and",
		want: []parseGot{},
		lost: "call 1 (delete_file) is inside <think>, reasoning that is never closed, so it is not a call to make",
	},
	{
		name: "reasoning: never closed without a call is just text",
		text: "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n<think>now let me consider the result",
		want: []parseGot{parseWant("a", `{}`)},
	},
	{
		name: "reasoning: thinking block between invoke calls",
		text: "<function_calls><invoke name=\"a\"></invoke></function_calls>\n<thinking>Next <function_calls><invoke name=\"delete_file\"><parameter name=\"path\">/</parameter></invoke></function_calls> maybe.</thinking>\n<function_calls><invoke name=\"b\"><parameter name=\"k\">v</parameter></invoke></function_calls>",
		want: []parseGot{parseWant("a", `{}`), parseWant("b", `{"k":"v"}`)},
	},
	{
		name: "reasoning: reasoning block, seed:think and mixed case",
		text: "<reasoning>{\"name\": \"delete_file\", \"arguments\": {\"path\": \"/\"}}</reasoning><seed:think><function=delete_file><parameter=path>/</parameter></function></seed:think><THINK>[TOOL_CALLS]delete_file[ARGS]{}</Think>[TOOL_CALLS]current_time[ARGS]{}",
		want: []parseGot{parseWant("current_time", `{}`)},
	},
	{
		name: "reasoning: gpt-oss harmony analysis channel",
		text: "<|start|>assistant<|channel|>analysis<|message|>Need time. Could do <tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call>.<|end|><|start|>assistant<|channel|>final<|message|><tool_call>{\"name\":\"current_time\"}</tool_call><|return|>",
		want: []parseGot{parseWant("current_time", `{}`)},
	},
	{
		name: "reasoning: harmony analysis without <|end|> ends at the next message",
		text: "<|channel|>analysis<|message|>try ```json\n{\"name\": \"delete_file\", \"arguments\": {}}\n```<|start|>assistant<|channel|>final<|message|>```json\n{\"name\": \"ping\", \"arguments\": {}}\n```",
		want: []parseGot{parseWant("ping", `{}`)},
	},
	{
		name: "reasoning: magistral [THINK] and command <|START_THINKING|>",
		text: "[THINK]draft [TOOL_CALLS][{\"name\": \"delete_file\", \"arguments\": {}}][/THINK]<|START_THINKING|><tool_call>{\"name\":\"delete_file\"}</tool_call><|END_THINKING|>[TOOL_CALLS][{\"name\": \"ping\", \"arguments\": {}}]",
		want: []parseGot{parseWant("ping", `{}`)},
	},
	{
		name: "reasoning: a think tag named in backticks is prose",
		text: "Models wrap reasoning in `<think>` tags. <tool_call>{\"name\":\"ping\"}</tool_call>",
		want: []parseGot{parseWant("ping", `{}`)},
	},
	{
		name: "reasoning: a lone closing tag inside a fence is text",
		text: "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n```\nend with </think>\n```\n<tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>",
		want: []parseGot{parseWant("a", `{}`), parseWant("b", `{}`)},
	},
	{
		name: "reasoning: openai message with reasoning_content and a think block in its content",
		text: `{"choices":[{"message":{"role":"assistant","reasoning_content":"<tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call>","content":"<think><tool_call>{\"name\":\"delete_file\",\"arguments\":{}}</tool_call></think><tool_call>{\"name\":\"list_files\",\"arguments\":{\"path\":\".\"}}</tool_call>"}}]}`,
		want: []parseGot{parseWant("list_files", `{"path":"."}`)},
	},
	{
		name: "reasoning: openai-compatible content with a lone closing tag",
		text: `{"choices":[{"message":{"role":"assistant","content":"plan: <tool_call>{\"name\":\"delete_file\"}</tool_call></think><tool_call>{\"name\":\"ping\"}</tool_call>"}}]}`,
		want: []parseGot{parseWant("ping", `{}`)},
	},
	{
		name:   "reasoning: anthropic thinking block",
		format: FormatAnthropic,
		text:   `{"type":"message","role":"assistant","content":[{"type":"thinking","thinking":"<tool_call>{\"name\":\"delete_file\",\"arguments\":{}}</tool_call>","signature":"sig"},{"type":"redacted_thinking","data":"x"},{"type":"tool_use","id":"t1","name":"ping","input":{}}]}`,
		want:   []parseGot{parseWant("ping", `{}`)},
	},
	{
		name: "reasoning: gemini thought part, ollama thinking, responses reasoning item",
		text: `[{"candidates":[{"content":{"parts":[{"text":"<tool_call>{\"name\":\"delete_file\"}</tool_call>","thought":true},{"functionCall":{"name":"a","args":{}}}]}}]},{"message":{"role":"assistant","thinking":"<tool_call>{\"name\":\"delete_file\"}</tool_call>","content":"<tool_call>{\"name\":\"b\"}</tool_call>"}},{"output":[{"type":"reasoning","content":[{"type":"reasoning_text","text":"<tool_call>{\"name\":\"delete_file\"}</tool_call>"}]},{"type":"function_call","name":"c","arguments":"{}"}]}]`,
		want: []parseGot{parseWant("a", `{}`), parseWant("b", `{}`), parseWant("c", `{}`)},
	},
}
