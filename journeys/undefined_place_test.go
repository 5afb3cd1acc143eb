//go:build unix

package journeys

import (
	"strings"
	"testing"
)

// TestJourneyUndefinedNamePlace: a toolset naming a tool nobody defines,
// and an agent naming that toolset, stop `wield list` with an error at
// each name's own line:col, in the form of every load problem (once, no
// "wield: not found"); `wield validate` points at the toolset's name; with
// the tool defined, and with an agent naming the programs toolset under
// --programs, list exits 0 without a warning; `wield chat --agent FILE`
// tells an undefined tool of the file in the same form.
func TestJourneyUndefinedNamePlace(t *testing.T) {
	u := newUser(t)
	u.write("tools/ts.yaml", "kind: toolset\nname: ts\ntools:\n  - echo\n  - tally\n")
	u.write("tools/coder.yaml", "kind: agent\nname: coder\ntool_sets: [ts, programs]\n")
	r := u.wield("list", "--programs", "--tools", "tools")
	want := "wield: load tool files:\n" +
		`tools/coder.yaml:3:13: agent "coder": toolset "ts" is not defined` + "\n" +
		`tools/ts.yaml:5:5: toolset "ts": tool "tally" is not defined` + "\n"
	if r.code != 1 || r.stderr != want {
		t.Errorf("want exit 1 and stderr\n%s\ngot:\n%s", want, r)
	}
	if r := u.wield("validate", "--programs", "tools"); r.code != 1 || !strings.Contains(r.stdout, `tools/ts.yaml:5:5: toolset "ts": tool "tally" is not defined`) || strings.Contains(r.stdout, "programs") {
		t.Errorf("validate: want exit 1 at tools/ts.yaml:5:5, nothing about programs:\n%s", r)
	}
	u.write("tools/tally.yaml", "name: tally\ndescription: Count\nentry: {type: builtin, handler: echo}\n")
	if r := u.must("list", "--programs", "--tools", "tools", "--agent", "coder"); strings.Contains(r.stderr, "warning") || !strings.Contains(r.stdout, "run_program") || !strings.Contains(r.stdout, "tally") {
		t.Errorf("list --agent coder: want run_program and tally, no warning:\n%s", r)
	}
	// wield chat --agent FILE naming a tool nobody loaded: the same
	// located form, before any model is asked.
	u.write("helper.yaml", "kind: agent\nname: helper\ntools:\n  - echo\n  - nosuch\n")
	u.setenv("OPENAI_API_KEY", "k")
	r = u.wieldIn("hi\n", "chat", "--agent", "helper.yaml", "--model", "http://127.0.0.1:9/v1/m")
	if r.code == 0 || !strings.Contains(r.stderr, `helper.yaml:5:5: agent "helper": tool "nosuch" is not defined`) ||
		strings.Count(r.stderr, "nosuch") != 1 || strings.Contains(r.stderr, "not found") {
		t.Errorf("chat --agent helper.yaml: want exit 1 at helper.yaml:5:5, once:\n%s", r)
	}
}
