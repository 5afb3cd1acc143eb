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
// anthropic.Tools, gemini.Tools, [MCPTools]).
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
// tools in the exact layout of seed 000's prompt generator and asks for
// <tool_call> blocks with CDATA values; [JSONInstructions] asks for
// {"name": ..., "parameters": {...}} objects, seed 002's structured output.
// [Parse] reads either back, along with the other formats models write.
//
// # Parsing tool calls
//
// [Parse] finds the calls a model wrote in its reply, whatever its habit
// (the XML format above, Hermes JSON, <function=…>, <invoke>, fenced or
// bare JSON, whole provider response bodies), and returns each as a
// [ParsedCall] with a JSON object of arguments, ready for the engine, which
// validates them.
//
// # Results
//
// A [wield.Result] goes back to the model as [XMLResult] (seed 000's
// format_tool_result), [JSONResult], [OpenAIResult], [OpenAIResponsesResult],
// [AnthropicResult], [GeminiResult] or [MCPResult]. A failed call reads as
// seed 001 words it: "Can not find tool named 'x'" for an unknown tool,
// "Error: <message>" otherwise. Only the result's model-facing fields are
// used; internal error text never reaches a model.
package llm
