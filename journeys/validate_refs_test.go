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
