package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/schema"
)

// seedBlock is seed 000's "生成示例" (the generator's actual output) for
// its web_search tool, byte for byte.
const seedBlock = `### web_search
Description: Search the web for information using Bocha AI search engine
Parameters:
  - query: string (required) - Search query using keywords.
  - freshness: string (optional) - Time range filter: 'noLimit', 'oneDay', ...
    Default: noLimit
  - count: integer (optional) - Number of results to return (1-50)
    Default: 10
Example:
<tool_call>
  <name>web_search</name>
  <params>
    <query><![CDATA[your_query_here]]></query>
    <freshness><![CDATA[noLimit]]></freshness>
    <count><![CDATA[10]]></count>
  </params>
</tool_call>
`

func TestXMLInstructionsSeedLayout(t *testing.T) {
	got := llm.XMLInstructions([]*wield.Tool{webSearch()})
	if !strings.Contains(got, "\n"+seedBlock) {
		t.Errorf("the web_search block is not seed 000's, byte for byte; got:\n%s", got)
	}
}

func TestPromptGolden(t *testing.T) {
	tools := representativeTools(t)
	checkGolden(t, "prompt_xml.txt", []byte(llm.XMLInstructions(tools)))
	checkGolden(t, "prompt_json.txt", []byte(llm.JSONInstructions(tools)))
}

func TestXMLInstructionsParameterLines(t *testing.T) {
	type in struct {
		Mode    string   `json:"mode" enum:"fast,slow" description:"Speed"`
		Flags   []string `json:"flags,omitempty" description:"Switches" examples:"[[\"-v\"]]"`
		Verbose bool     `json:"verbose,omitempty" default:"true"`
		Any     any      `json:"any,omitempty"`
	}
	tool := wield.Func("run", "Run it", func(context.Context, in) (string, error) { return "", nil })
	got := llm.XMLInstructions([]*wield.Tool{tool})
	want := `### run
Description: Run it
Parameters:
  - mode: string (required) - Speed
    Allowed values: fast, slow
  - flags: array (optional) - Switches
    Schema: {"type":"array","items":{"type":"string"},"description":"Switches","examples":[["-v"]]}
  - verbose: boolean (optional)
    Default: true
  - any: any (optional)
Example:
<tool_call>
  <name>run</name>
  <params>
    <mode><![CDATA[fast]]></mode>
    <flags><![CDATA[["-v"]]]></flags>
    <verbose><![CDATA[true]]></verbose>
  </params>
</tool_call>
`
	if !strings.Contains(got, want) {
		t.Errorf("block mismatch (-want +got):\n%s", cmp.Diff(want, got))
	}
}

func TestInstructionsWithoutTools(t *testing.T) {
	for name, f := range map[string]func([]*wield.Tool) string{"xml": llm.XMLInstructions, "json": llm.JSONInstructions} {
		got := f([]*wield.Tool{nil, {Name: "no_schema"}})
		if !strings.Contains(got, "(no tools are available)") || strings.Contains(got, "no_schema") {
			t.Errorf("%s: want the no-tools line and no tool without a schema; got:\n%s", name, got)
		}
	}
}

// TestInstructionExamplesParse checks that the example call of every tool,
// in both formats, is read back by [llm.Parse] as a call of that tool.
func TestInstructionExamplesParse(t *testing.T) {
	tools := representativeTools(t)
	schemas := map[string]*wield.Tool{}
	for _, tool := range tools {
		schemas[tool.Name] = tool
	}
	opts := func(f llm.Format) *llm.ParseOptions {
		return &llm.ParseOptions{Format: f, Schema: func(name string) *jsonschema.Schema {
			if tool := schemas[name]; tool != nil {
				return tool.InputSchema
			}
			return nil
		}}
	}
	xmlText := llm.XMLInstructions(tools)
	jsonText := llm.JSONInstructions(tools)
	for _, tool := range tools {
		v, err := schema.Compile(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		examples := map[llm.Format]string{
			llm.FormatXML:  between(t, xmlText, "### "+tool.Name+"\n", "Example:\n", "</tool_call>\n"),
			llm.FormatJSON: between(t, jsonText, "### "+tool.Name+"\n", "Example:\n", "\n}\n"),
		}
		for format, example := range examples {
			calls, err := llm.Parse(example, opts(format))
			if err != nil || len(calls) != 1 || calls[0].Name != tool.Name {
				t.Errorf("%s example of %s parses as %v, %v", format, tool.Name, calls, err)
				continue
			}
			// The example is a call the engine accepts.
			if _, errs := v.Normalize(calls[0].Arguments); len(errs) > 0 {
				t.Errorf("%s example of %s does not validate: %v\n%s", format, tool.Name, errs, example)
			}
		}
	}
	calls, err := llm.Parse(between(t, xmlText, "### web_search\n", "Example:\n", "</tool_call>\n"), opts(llm.FormatXML))
	if err != nil || len(calls) != 1 {
		t.Fatalf("web_search example: %v, %v", calls, err)
	}
	var args map[string]any
	if err := json.Unmarshal(calls[0].Arguments, &args); err != nil {
		t.Fatal(err)
	}
	// web_search has examples of its own: the first is its example call.
	want := map[string]any{"query": "golang generics tutorial", "count": float64(5)}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("web_search example arguments (-want +got):\n%s", diff)
	}
}

// between returns the text of s from the first start after section, up to
// and including end.
func between(t *testing.T, s, section, start, end string) string {
	t.Helper()
	i := strings.Index(s, section)
	if i < 0 {
		t.Fatalf("no %q in:\n%s", section, s)
	}
	s = s[i:]
	j := strings.Index(s, start)
	if j < 0 {
		t.Fatalf("no %q after %q", start, section)
	}
	s = s[j+len(start):]
	k := strings.Index(s, end)
	if k < 0 {
		t.Fatalf("no %q after %q", end, start)
	}
	return s[:k+len(end)]
}

func TestCDATA(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "<![CDATA[plain]]>"},
		{"a < b && c > d", "<![CDATA[a < b && c > d]]>"},
		{"x]]>y", "<![CDATA[x]]]]><![CDATA[>y]]>"},
		{"", "<![CDATA[]]>"},
	}
	for _, tt := range tests {
		if got := llm.CDATA(tt.in); got != tt.want {
			t.Errorf("CDATA(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ExampleXMLInstructions() {
	type readIn struct {
		Path string `json:"path" description:"File path"`
		Max  int    `json:"max_bytes,omitempty" description:"Bytes to read at most" default:"4096"`
	}
	read := wield.Func("read_file", "Read a text file",
		func(context.Context, readIn) (string, error) { return "", nil })
	text := llm.XMLInstructions([]*wield.Tool{read})
	fmt.Print(text[:strings.Index(text, "\n## How to Call Tools")])
	// Output:
	// ## Available Tools
	//
	// ### read_file
	// Description: Read a text file
	// Parameters:
	//   - path: string (required) - File path
	//   - max_bytes: integer (optional) - Bytes to read at most
	//     Default: 4096
	// Example:
	// <tool_call>
	//   <name>read_file</name>
	//   <params>
	//     <path><![CDATA[your_path_here]]></path>
	//     <max_bytes><![CDATA[4096]]></max_bytes>
	//   </params>
	// </tool_call>
}

func ExampleJSONInstructions() {
	type readIn struct {
		Path string `json:"path" description:"File path"`
	}
	read := wield.Func("read_file", "Read a text file",
		func(context.Context, readIn) (string, error) { return "", nil })
	text := llm.JSONInstructions([]*wield.Tool{read})
	fmt.Print(text[strings.Index(text, "Example:"):strings.Index(text, "\n## How to Call Tools")])
	// Output:
	// Example:
	// {
	//   "name": "read_file",
	//   "parameters": {
	//     "path": "your_path_here"
	//   }
	// }
}
