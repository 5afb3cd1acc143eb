package llm_test

import (
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield/llm"
)

func ExampleParse() {
	text := "Let me search first.\n" +
		"<tool_call>\n  <name>web_search</name>\n  <params>\n" +
		"    <query><![CDATA[Go 1.26 release notes]]></query>\n" +
		"    <max_results><![CDATA[10]]></max_results>\n" +
		"  </params>\n</tool_call>\n" +
		"<tool_call>\n{\"name\": \"web_fetch\", \"arguments\": {\"url\": \"https://go.dev/doc/go1.26\"}}\n</tool_call>"
	calls, err := llm.Parse(text, nil)
	if err != nil {
		fmt.Println(err)
	}
	for _, c := range calls {
		fmt.Println(c.Name, string(c.Arguments))
	}
	// Output:
	// web_search {"query":"Go 1.26 release notes","max_results":10}
	// web_fetch {"url":"https://go.dev/doc/go1.26"}
}

func ExampleParse_schema() {
	// With a schema, a string parameter keeps its leading zeros.
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"code":  {Type: "string"},
		"count": {Type: "integer"},
	}}
	text := "<function_calls>\n<invoke name=\"lookup\">\n" +
		"<parameter name=\"code\">007</parameter>\n<parameter name=\"count\">3</parameter>\n" +
		"</invoke>\n</function_calls>"
	calls, _ := llm.Parse(text, &llm.ParseOptions{
		Format: llm.FormatInvoke,
		Schema: func(tool string) *jsonschema.Schema { return schema },
	})
	fmt.Println(calls[0].Name, string(calls[0].Arguments))
	// Output:
	// lookup {"code":"007","count":3}
}

func ExampleIncompleteError() {
	// A reply that hit its token limit in the middle of the second call.
	text := "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"go.mod\"}}\n</tool_call>\n" +
		"<tool_call>\n<function=write_file>\n<parameter=path>\nmain.go\n</parameter>\n<parameter=content>\npackage ma"
	calls, err := llm.Parse(text, nil)
	var incomplete *llm.IncompleteError
	if errors.As(err, &incomplete) {
		fmt.Println("recovered:", incomplete.Recovered, calls[0].Name)
		fmt.Println("lost:", incomplete.Lost)
	}
	// Output:
	// recovered: 1 read_file
	// lost: call 2 (write_file) cut off inside the value of parameter "content"
}

func ExampleParse_reasoning() {
	// A reasoning model drafts a call in its thinking, then makes another;
	// a tool without parameters is called with a name only.
	text := "<think>\nI could run <tool_call>{\"name\": \"delete_file\", \"arguments\": {\"path\": \"/\"}}</tool_call>, but no.\n</think>\n\n" +
		"<tool_call>{\"name\": \"current_time\"}</tool_call>"
	calls, err := llm.Parse(text, nil)
	if err != nil {
		fmt.Println(err)
	}
	for _, c := range calls {
		fmt.Println(c.Name, string(c.Arguments))
	}
	// Output:
	// current_time {}
}

func ExampleParse_nestedCDATA() {
	// An SVG whose <style> holds CDATA, inside the XML call format's CDATA.
	text := "<tool_call><name>write_file</name><params>" +
		"<content><![CDATA[<svg><style><![CDATA[.a{fill:red}]]></style></svg>]]></content>" +
		"<path><![CDATA[icon.svg]]></path></params></tool_call>"
	calls, _ := llm.Parse(text, &llm.ParseOptions{Format: llm.FormatXML})
	fmt.Println(calls[0].Name, string(calls[0].Arguments))
	// Output:
	// write_file {"content":"<svg><style><![CDATA[.a{fill:red}]]></style></svg>","path":"icon.svg"}
}
