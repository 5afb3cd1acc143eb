//go:build unix

package journeys

// Exports from the command line: a person wiring wield into an agent by hand
// prints the tools of a toolset or of an agent in a provider's format, or
// the prompt for a model without function calling, and gets what
// GET /v1/tools?format= of a server on the same files answers.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// exportFiles are the tool files of the export journeys: the three tools the
// data analysis toolset of the architecture document names, a web_search
// with the parameters of the tool prompt generator's example, a tool whose
// description a model must read with <, > and & as they are, and an agent
// with a tool of its own and the toolset.
var exportFiles = map[string]string{
	"tools/data/tools.yaml": `tools:
  - name: sql_tool
    description: Run a read-only SQL query
    parameters:
      - {name: query, type: string, description: The SQL query}
    entry: {type: builtin, handler: echo}
  - name: excel_tool
    description: Read a sheet of a workbook
    parameters:
      - {name: path, type: string, description: The workbook}
      - {name: sheet, type: string, required: false, default: Sheet1}
    entry: {type: builtin, handler: echo}
  - name: plot_tool
    description: Plot a series as a chart
    parameters:
      - {name: series, type: array, validation: {items: number}, description: The values}
    entry: {type: builtin, handler: echo}
`,
	"tools/web/web_search.yaml": `name: web_search
description: Search the web for information using Bocha AI search engine
parameters:
  - name: query
    type: string
    description: Search query using keywords.
    required: true
  - name: freshness
    type: string
    description: "Time range filter: 'noLimit', 'oneDay', ..."
    required: false
    default: noLimit
  - name: count
    type: integer
    description: Number of results to return (1-50)
    required: false
    default: 10
entry: {type: builtin, handler: echo}
`,
	"tools/web/compare.yaml": `name: compare
description: "Say whether a < b && b > c"
parameters:
  - {name: a, type: number, description: "the <left> side & more"}
entry: {type: builtin, handler: echo}
`,
	"tools/agents/analyst.yaml": `kind: agent
name: analyst
tools: [calculator]
tool_sets: [data_analysis_set]
`,
}

// exportUser is a user with the export journeys' tool files.
func exportUser(t *testing.T) *user {
	u := newUser(t)
	for rel, content := range exportFiles {
		u.write(rel, content)
	}
	u.copy("seeds/002/data_analysis_set.yaml", "tools/sets/data_analysis_set.yaml")
	return u
}

// exportNames returns the tool names of a provider's JSON list: a
// function's name (OpenAI chat), a name (Anthropic, MCP, Responses), or the
// names of Gemini's functionDeclarations.
func exportNames(t *testing.T, doc string) []string {
	t.Helper()
	var list []struct {
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	}
	if err := json.Unmarshal([]byte(doc), &list); err != nil {
		t.Fatalf("not a JSON array (%v):\n%s", err, doc)
	}
	var names []string
	for _, x := range list {
		switch {
		case x.Function.Name != "":
			names = append(names, x.Function.Name)
		case x.Name != "":
			names = append(names, x.Name)
		}
		for _, d := range x.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return names
}

func TestJourneyExportFromTheCommandLine(t *testing.T) {
	u := exportUser(t)
	s := u.serve("--tools", "tools")

	// The toolset's tools in OpenAI's format: exactly them.
	openai := u.must("--tools", "tools", "list", "--format", "openai", "--toolset", "data_analysis_set")
	if diff := cmp.Diff([]string{"excel_tool", "plot_tool", "sql_tool"}, exportNames(t, openai.stdout)); diff != "" {
		t.Errorf("openai of the toolset: names (-want +got):\n%s", diff)
	}
	if !strings.Contains(openai.stdout, `"type": "function"`) {
		t.Errorf("openai of the toolset is not OpenAI's tools:\n%s", openai)
	}

	// The agent's toolkit in Anthropic's format: its own tool and its
	// toolset's, each with an input_schema.
	anthropic := u.must("--tools", "tools", "list", "--format", "anthropic", "--agent", "analyst")
	if diff := cmp.Diff([]string{"calculator", "excel_tool", "plot_tool", "sql_tool"}, exportNames(t, anthropic.stdout)); diff != "" {
		t.Errorf("anthropic of the agent: names (-want +got):\n%s", diff)
	}
	var withSchema []struct {
		InputSchema map[string]any `json:"input_schema"`
	}
	anthropic.json(t, &withSchema)
	for i, x := range withSchema {
		if x.InputSchema["type"] != "object" {
			t.Errorf("anthropic tool %d has no object input_schema:\n%s", i, anthropic.stdout)
		}
	}

	// Gemini, the whole registry: one tool of functionDeclarations; the
	// tools Gemini would refuse are warned about on stderr, and the exit is 0.
	gemini := u.must("--tools", "tools", "list", "--format", "gemini")
	var geminiDoc []struct {
		FunctionDeclarations []struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"functionDeclarations"`
	}
	gemini.json(t, &geminiDoc)
	if len(geminiDoc) != 1 || len(geminiDoc[0].FunctionDeclarations) < 10 || !slices.Contains(exportNames(t, gemini.stdout), "web_search") {
		t.Errorf("gemini is not one tool with the registry's functionDeclarations:\n%.2000s", gemini.stdout)
	}
	for _, line := range strings.Split(strings.TrimSpace(gemini.stderr), "\n") {
		if line != "" && !strings.HasPrefix(line, "warning: gemini: tool ") {
			t.Errorf("gemini's stderr holds something else than its warnings: %q", line)
		}
	}
	if !strings.Contains(gemini.stderr, `warning: gemini: tool "http_get"`) || strings.Contains(gemini.stdout, `"http_get"`) {
		t.Errorf("http_get (free-form headers) is not left out of gemini with a warning:\n%s", gemini)
	}

	// The XML prompt: the text a model is given, with <tool_call> and CDATA,
	// web_search's block exactly as the tool prompt generator writes it, and
	// <, > and & as they are.
	xml := u.must("--tools", "tools", "list", "--format", "xml")
	seedPrompt, err := os.ReadFile(filepath.Join("testdata", "seeds", "000", "prompt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<tool_call>", "<![CDATA[", "\n" + string(seedPrompt), "Say whether a < b && b > c", "the <left> side & more"} {
		if !strings.Contains(xml.stdout, want) {
			t.Errorf("the xml prompt lacks %q:\n%s", want, xml.stdout)
		}
	}
	jsonPrompt := u.must("--tools", "tools", "list", "--format", "json-prompt", "--toolset", "data_analysis_set")
	if !strings.Contains(jsonPrompt.stdout, `"name": "sql_tool"`) || strings.Contains(jsonPrompt.stdout, "web_search") {
		t.Errorf("the json prompt of the toolset:\n%s", jsonPrompt)
	}
	for _, r := range []*run{openai, xml, jsonPrompt} {
		if strings.Contains(r.stdout, `\u003c`) || strings.Contains(r.stdout, `\u0026`) || strings.Contains(r.stdout, "&lt;") {
			t.Errorf("wield %s: the document is HTML-escaped:\n%s", strings.Join(r.args, " "), r.stdout)
		}
	}

	// Each equals what the server on the same files answers, and what the
	// command prints when it asks that server.
	for _, c := range []struct {
		r     *run
		query string
	}{
		{openai, "format=openai&toolset=data_analysis_set"},
		{anthropic, "format=anthropic&agent=analyst"},
		{gemini, "format=gemini"},
		{xml, "format=xml"},
		{jsonPrompt, "format=json-prompt&toolset=data_analysis_set"},
	} {
		code, body := s.do("GET", "/v1/tools?"+c.query, "")
		if code != 200 {
			t.Fatalf("GET /v1/tools?%s: %d %s", c.query, code, body)
		}
		if diff := cmp.Diff(string(body), c.r.stdout); diff != "" {
			t.Errorf("wield %s differs from GET /v1/tools?%s (-GET +wield):\n%s", strings.Join(c.r.args, " "), c.query, diff)
		}
		remote := u.must(append([]string{"--server", s.url}, c.r.args[2:]...)...)
		if diff := cmp.Diff(string(body), remote.stdout); diff != "" {
			t.Errorf("wield --server %s differs from GET /v1/tools?%s (-GET +wield):\n%s", strings.Join(c.r.args[2:], " "), c.query, diff)
		}
		if remote.stderr != c.r.stderr {
			t.Errorf("wield --server %s warns otherwise:\n%s\nthan locally:\n%s", strings.Join(c.r.args[2:], " "), remote.stderr, c.r.stderr)
		}
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exited %d after %v:\n%s", code, took, s.stderr)
	}
}

func TestJourneyExportUsageErrors(t *testing.T) {
	u := exportUser(t)
	s := u.serve("--tools", "tools")
	const formats = "the formats are openai, openai-strict, responses, responses-strict, anthropic, anthropic-strict, gemini, gemini-json-schema, mcp, xml, json-prompt"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"list", "--format", "yaml"}, []string{`unknown format "yaml"`, formats}},
		{[]string{"list", "--format", "json"}, []string{formats, "--json"}},
		{[]string{"list", "--format", "openai", "--json"}, []string{"--json and --format exclude each other"}},
		{[]string{"list", "--format", "openai", "--toolset", "data"}, []string{`unknown toolset "data": the toolsets are data_analysis_set`}},
		{[]string{"list", "--format", "anthropic", "--agent", "analyzer"}, []string{`unknown agent "analyzer": the agents are analyst`}},
	} {
		for _, prefix := range [][]string{{"--tools", "tools"}, {"--server", s.url}} {
			r := u.wield(append(prefix, c.args...)...)
			if r.code != 2 || r.stdout != "" {
				t.Errorf("want exit 2 and no output:\n%s", r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r)
				}
			}
		}
	}
}
