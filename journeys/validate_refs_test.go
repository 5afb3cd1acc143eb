//go:build unix

package journeys

import (
	"strings"
	"testing"
)

// TestJourneyValidateForetellsList: the requirements' data_analysis_set,
// alone in configs/tool_sets/, names three tools no file defines. `wield
// list` and `wield call` stop on it (exit 1); `wield validate` says so too,
// at each name's line and column, exit 1, where it printed "ok" and exited 0.
// With the tools defined beside it, all three exit 0.
func TestJourneyValidateForetellsList(t *testing.T) {
	u := newUser(t)
	u.copy("seeds/002/data_analysis_set.yaml", "configs/tool_sets/data_analysis_set.yaml")
	v := u.wield("validate", "configs/tool_sets")
	for _, want := range []string{
		`configs/tool_sets/data_analysis_set.yaml:4:5: toolset "data_analysis_set": tool "sql_tool" is not defined: no tool file, built-in tool or MCP server of the configuration defines it`,
		`configs/tool_sets/data_analysis_set.yaml:6:5: toolset "data_analysis_set": tool "plot_tool" is not defined`,
	} {
		if !strings.Contains(v.stdout, want) {
			t.Errorf("validate lacks %q:\n%s", want, v)
		}
	}
	if v.code != 1 || strings.Contains(v.stdout, "\nok\n") || !strings.Contains(v.stderr, "3 errors") {
		t.Errorf("validate: want exit 1 and 3 errors, no ok:\n%s", v)
	}
	if r := u.wield("list", "--tools", "configs/tool_sets"); r.code != 1 {
		t.Errorf("list: want exit 1, as validate foretells:\n%s", r)
	}
	u.write("configs/tool_sets/analysis_tools.yaml", `tools:
  - name: sql_tool
    description: Run a read-only SQL query
    parameters: [{name: query, type: string}]
    entry: {type: command, command: ["echo", "{query}"]}
  - name: excel_tool
    description: Read a sheet of a workbook
    parameters: [{name: path, type: string}]
    entry: {type: command, command: ["echo", "{path}"]}
  - name: plot_tool
    description: Draw a chart of some columns
    parameters: [{name: columns, type: array, validation: {items: string}}]
    entry: {type: command, command: ["echo", "{columns}"]}
`)
	if v := u.wield("validate", "configs/tool_sets"); v.code != 0 || strings.Contains(v.stdout, "not defined") {
		t.Errorf("validate with the tools defined: want exit 0, nothing undefined:\n%s", v)
	}
	u.must("list", "--tools", "configs/tool_sets", "--toolset", "data_analysis_set")
}

// TestJourneyOffBuiltinNamed: docs/toolsets-and-agents.md's seed 000 agents
// name web_search, which exists once wield.yaml's web_search has its key.
// With BRAVE_KEY unset, validate and list refuse the agents saying the
// built-in web_search is off and what turns it on (they said "no tool file,
// built-in tool or MCP server of the configuration defines it", of a tool
// wield has); with the key, validate says ok and list shows the lead's
// toolkit.
func TestJourneyOffBuiltinNamed(t *testing.T) {
	u := newUser(t)
	u.write("tools/seed000.yaml", seed000Agents)
	u.write("wield.yaml", "tool_dirs: [tools]\nweb_search: {provider: brave, api_key: \"${BRAVE_KEY}\"}\n")
	want := `tools/seed000.yaml:4:24: agent "lead": tool "web_search" is not defined: the built-in tool web_search is off (set web_search: {provider, api_key} in wield.yaml)`
	v := u.wield("validate", "--config", "wield.yaml", "tools")
	if v.code != 1 || !strings.Contains(v.stdout, want) || strings.Contains(v.stdout, "no tool file, built-in tool") ||
		!strings.Contains(v.stdout, "wield.yaml:2:41: warning: web_search is off: environment variable BRAVE_KEY is not set") || v.stderr != "2 errors, 1 warning\n" {
		t.Errorf("validate without BRAVE_KEY: want exit 1, %s, and the warning naming BRAVE_KEY:\n%s", want, v)
	}
	if r := u.wield("list", "--config", "wield.yaml", "--agent", "lead"); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("list without BRAVE_KEY: want exit 1 and %s:\n%s", want, r)
	}
	u.setenv("BRAVE_KEY", "k")
	if v := u.wield("validate", "--config", "wield.yaml", "tools"); v.code != 0 || !strings.Contains(v.stdout, "ok") {
		t.Errorf("validate with BRAVE_KEY: want ok:\n%s", v)
	}
	r := u.must("list", "--config", "wield.yaml", "--agent", "lead")
	for _, name := range []string{"call_subagent", "web_search", "web_fetch"} {
		if !strings.Contains(r.stdout, name) {
			t.Errorf("list --agent lead lacks %s:\n%s", name, r)
		}
	}
}

// TestJourneyValidateEngineYAML: docs/configuration.md's engine.yaml,
// checked with `wield validate engine.yaml` as a newcomer would, is checked
// as configuration: ok, exit 0 (it was read as a tool file, "tool: unknown
// field" nine times, exit 1), and a wrong value in it is the
// configuration's error at its line; the engine keys then work with
// --config, strict_validation refusing a number for a string.
func TestJourneyValidateEngineYAML(t *testing.T) {
	u := newUser(t)
	body := `# engine.yaml
tools_directory: ./tools
auto_reload: true
reload_interval: 5
watch_for_changes: true
strict_validation: true
concurrency:
  max_concurrent: 10
  default_timeout: 30
  bucket_limits: {http: 5, ai: 3}
  strategy: priority
`
	u.write("engine.yaml", body)
	if v := u.wield("validate", "engine.yaml"); v.code != 0 || v.stdout != "ok\n" {
		t.Errorf("validate engine.yaml: want exit 0 and ok:\n%s", v)
	}
	u.write("engine.yaml", strings.Replace(body, "max_concurrent: 10", "max_concurrent: ten", 1))
	if v := u.wield("validate", "engine.yaml"); v.code != 1 || !strings.Contains(v.stdout, "engine.yaml:8:19:") || strings.Contains(v.stdout, "tool:") {
		t.Errorf("validate engine.yaml with max_concurrent: ten: want exit 1 and the configuration's error at 8:19:\n%s", v)
	}
	u.write("engine.yaml", body)
	u.write("tools/.keep", "")
	r := u.wield("call", "calculator", "--config", "engine.yaml", "--args", `{"expression": 5}`)
	if !strings.Contains(r.stdout, `"error": "invalid arguments for tool 'calculator': expression: expected string, got number 5"`) {
		t.Errorf("strict_validation of engine.yaml: want the number refused:\n%s", r)
	}
}
