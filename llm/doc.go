// Package llm is how wield talks to models: it presents tools in each
// model's dialect, writes the prompt fallback for models without function
// calling, reads tool calls back out of a model's text, and formats results
// for the model to read.
//
// # Exporting tools
//
// [Export] converts a list of tools (a registry's [wield.Registry.List], a
// toolset's tools, an agent's [wield.Toolkit.Tools]) for one [Dialect]:
//
//	tools := reg.List(wield.Query{Toolset: "research"})
//	defs, problems := llm.Export(openai.ChatStrict, tools)
//	for _, p := range problems {
//		log.Print(p) // openai-strict: tool "set_labels" at /properties/labels/additionalProperties: ...
//	}
//	// defs marshals to the "tools" of a Chat Completions request.
//
// The dialects are openai.Chat, openai.ChatStrict, openai.Responses and
// openai.ResponsesStrict in package llm/openai, anthropic.Dialect in
// llm/anthropic, gemini.Dialect in llm/gemini, and [MCP] here for MCP's
// tools/list. Each has typed helpers as well (openai.ChatTools,
// anthropic.Tools, gemini.Tools, [MCPTools]). The model clients send their
// tools through the same conversion, once per tool ([ToolCache]), and
// refuse a request with a tool their dialect refuses ([ToolsError]).
//
// A dialect that cannot express something about a tool says so with a
// [Problem] (the tool, the dialect, a JSON pointer into the input schema and
// a message) and leaves that tool out of its export: a request with the
// tool would be refused by the provider, or would tell the model something
// other than what the tool accepts. Conversions that keep the meaning are
// made silently: OpenAI's strict mode gets every property required and the
// optional ones nullable; Gemini gets references expanded, type lists with
// null as nullable and upper-case types; keywords a provider lacks that
// only narrow a value are moved into the description ("Name;maxLength: 64").
// The engine still validates every call against the tool's own schema.
//
// # Prompt fallback
//
// For a model without native function calling, [XMLInstructions] lists the
// tools in the exact layout of the XML call format's prompt generator and
// asks for <tool_call> blocks with CDATA values; [JSONInstructions] asks for
// {"name": ..., "parameters": {...}} objects, the JSON structured output.
// [Parse] reads either back, along with the other formats models write.
//
// # Parsing tool calls
//
// [Parse] finds the calls a model wrote in its reply, whatever its habit
// (the XML format above, Hermes JSON, <function=…>, <invoke>, fenced or
// bare JSON, whole provider response bodies), and returns each as a
// [ParsedCall] with a JSON object of arguments, ready for the engine, which
// validates them. Where a model's text is ambiguous, it decides so:
//
// Calls without arguments. A tool without parameters is called with {}:
// a missing arguments key, null, "" and the string "null" all read as {};
// parameters, args, input, params and tool_input stand for arguments; a
// JSON-encoded string is decoded, twice if it was encoded twice. Where the
// context marks a call (inside <tool_call>, after <|python_tag|> or
// [TOOL_CALLS]), a name with no arguments key is a call whose arguments
// are the object's other members (less id, type and index), as some models
// write them beside the name. In prose or a fence, JSON without an
// arguments key is a call only when it holds nothing but a name that reads
// as a tool name ({"name": "current_time"}), and, when the parse has
// schemas, a known tool's: {"name": "Alice", "age": 30} stays data.
//
// CDATA inside CDATA. In the XML call format a value may hold CDATA itself
// (an SVG with a <style> section, an XML or HTML file), which XML cannot
// express, since the first "]]>" ends a section; models write it nested.
// Sections are counted as they open and close, and a value runs to its own
// closing tag outside every section. Its text is then what XML reads when
// that is well formed (sections joined with the text between them,
// entities decoded, so "a]]]]><![CDATA[>b" carries "]]>"), else the
// outermost section's content with the inner markers kept as written. A
// section that never closes ends at the element's last closing tag. A value
// is never silently "": markup with no closing tag, or a section that never
// closes with no closing tag after it, loses the call, and the
// [*IncompleteError] says which parameter and why.
//
// Reasoning. What a model thinks before it answers is never a source of
// calls, though it often drafts one: <think>, <thinking> and <reasoning>
// blocks (any namespace prefix, as in <seed:think>), Magistral's
// [THINK]…[/THINK], Command's <|START_THINKING|>…<|END_THINKING|>,
// <|begin_of_thought|>…<|end_of_thought|> and gpt-oss's harmony analysis
// channel are skipped whole, wherever they are. A closing marker with no
// opening one (Qwen3 and DeepSeek-R1 templates put <think> in the prompt)
// makes everything before it reasoning. A block never closed runs to the
// end of the text, and a call inside it is reported as lost rather than
// made: the model was cut off while thinking, or forgot to close the block,
// and should write the call again outside it. A marker inside `code` in
// prose is prose. Reasoning that providers return apart from the answer
// (reasoning_content, thinking blocks, thought parts, reasoning items) is
// not read for calls, by Parse nor by the clients.
//
// # Results
//
// A [wield.Result] goes back to the model as [XMLResult] (the XML call
// format's format_tool_result), [JSONResult], [OpenAIResult],
// [OpenAIResponsesResult], [AnthropicResult], [GeminiResult] or
// [MCPResult], all through [wield.Result.Text]. A failed call reads
// "Error: <message>", with any validation error the message does not
// already name on a line of its own, so the model reads each problem once.
// A call of a tool the caller cannot use (tool_not_found) reads as the
// message alone, in the wording agent frameworks match: "Tool 'x' not
// available in A's toolkit" when the call went through agent A's toolkit
// (as an agent loop's calls do), "Can not find tool named 'x'" without a
// toolkit. Through a toolkit, a tool that exists outside it and a tool that
// does not exist at all read the same, so a model learns nothing of tools
// beyond its own. Only the result's model-facing fields are used; internal
// error text never reaches a model.
package llm
