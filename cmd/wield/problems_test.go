package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProblemsOneWay: `wield validate` and `wield list` tell the problems
// of the same files the same way (one line form, escaped) and in the same
// order, sorted by file, line and column; validate adds the dialects'
// warnings in that order too, and only of the tools a command would have
// (not the shadowed second of a name, which no dialect would see).
func TestProblemsOneWay(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		// A name the dialects refuse, in the first file.
		"a.yaml": "name: Bad-Name.x\ndescription: refused by the dialects\nentry: {type: builtin, handler: echo}\n",
		// Shadows a built-in, in a later file.
		"b.yaml": "name: sleep\ndescription: mine\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n",
		// Two of a name; the second one's file sorts first.
		"c.yaml": "name: greet\ndescription: first\nentry: {type: builtin, handler: echo}\n",
		"d.yaml": "name: greet\ndescription: second\nentry: {type: builtin, handler: echo}\n",
		// A file whose name would write to the terminal.
		"e\x1b[2J.yaml": "name: calculator\ndescription: mine\nentry: {type: builtin, handler: echo}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, vout, _ := run(t, "validate", "--tools", dir)
	code, _, lerr := run(t, "list", "--tools", dir)
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, lerr)
	}
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, dir) {
				out = append(out, strings.TrimPrefix(l, dir+string(filepath.Separator)))
			}
		}
		return out
	}
	v, l := lines(vout), lines(lerr)
	if len(l) == 0 {
		t.Fatalf("list told no problems:\n%s", lerr)
	}
	// What list tells, validate tells the same way and in the same order.
	var common []string
	for _, x := range v {
		if slices.Contains(l, x) {
			common = append(common, x)
		}
	}
	if diff := cmp.Diff(l, common); diff != "" {
		t.Errorf("list's problems, as validate tells them (-list +validate):\n%s\nvalidate:\n%s", diff, vout)
	}
	place := func(s string) string { f, _, _ := strings.Cut(s, ": "); return f }
	if !slices.IsSortedFunc(v, func(a, b string) int { return strings.Compare(place(a), place(b)) }) {
		t.Errorf("validate's problems are not sorted by place:\n%s", strings.Join(v, "\n"))
	}
	for _, x := range append(v, l...) {
		if strings.ContainsAny(x, "\x1b") {
			t.Errorf("a problem writes an escape sequence: %q", x)
		}
		if strings.Contains(x, "comes earlier in the list") {
			t.Errorf("validate warns of a duplicate that no dialect sees: %s", x)
		}
	}
}

// TestProblemsThatStopEscaped: problems that stop a command (a file that
// does not load) are told escaped too, as writeProblems tells them: a file
// name or a quoted key cannot write to the terminal, whichever command
// loaded the files.
func TestProblemsThatStopEscaped(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"bad\x1b[2J.yaml": "name: [\n",
		"key.yaml":        "name: k\ndescription: d\n\u202ekey: 1\nentry: {type: builtin, handler: echo}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"list", "--tools", dir},
		{"call", "--tools", dir, "echo", "message=hi"},
		{"keys", "create", "--keys", filepath.Join(t.TempDir(), "keys.json"), "--tools", dir, "--toolset", "x"},
	} {
		code, _, stderr := run(t, args...)
		if code == 0 {
			t.Errorf("%v: exit 0, want the problems to stop it\n%s", args[0], stderr)
		}
		if !strings.Contains(stderr, "bad") || !strings.Contains(stderr, "key.yaml") {
			t.Errorf("%v: the problems are not told:\n%s", args[0], stderr)
		}
		if strings.ContainsAny(stderr, "\x1b\u202e") {
			t.Errorf("%v: a problem writes to the terminal: %q", args[0], stderr)
		}
	}
}

// TestUndefinedNamesLocated: a toolset or an agent naming a tool or a
// toolset that nothing defines stops list where the name is written, in
// the load problems' one form, once (not a warning and then the error),
// each name on its own line,
// without the engine's package prefix; validate tells the same places.
func TestUndefinedNamesLocated(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"ts.yaml": "kind: toolset\nname: ts\ntools:\n  - echo\n  - nosuch\n",
		"ag.yaml": "kind: agent\nname: ag\ntools: [echo, missing]\ntool_sets: [ts, nowhere]\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ag, ts := filepath.Join(dir, "ag.yaml"), filepath.Join(dir, "ts.yaml")
	code, out, errs := run(t, "list", "--tools", dir)
	want := "wield: load tool files:\n" +
		ag + `:3:15: agent "ag": tool "missing" is not defined` + "\n" +
		ag + `:4:13: agent "ag": toolset "ts" is not defined` + "\n" + // ts could not be
		ag + `:4:17: agent "ag": toolset "nowhere" is not defined` + "\n" +
		ts + `:5:5: toolset "ts": tool "nosuch" is not defined` + "\n"
	if code != 1 || out != "" {
		t.Errorf("list: exit %d, stdout %q; want 1 and nothing", code, out)
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("list stderr (-want +got):\n%s", diff)
	}
	_, vout, _ := run(t, "validate", "--tools", dir)
	for _, at := range []string{ag + ":3:15: ", ag + ":4:17: ", ts + ":5:5: "} {
		if !strings.Contains(vout, at) {
			t.Errorf("validate does not tell %s:\n%s", at, vout)
		}
	}
}

// TestProgramsToolsetKnown: with --programs, an agent may name the
// programs toolset that serve offers: list and validate load it without a
// warning that it is not defined; without --programs it still is one.
func TestProgramsToolsetKnown(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "coder.yaml"), []byte("kind: agent\nname: coder\ntool_sets: [programs]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"validate"}} {
		code, out, errs := run(t, append(args, "--programs", "--tools", dir)...)
		if code != 0 || strings.Contains(out+errs, "not defined") || strings.Contains(out+errs, "warning") {
			t.Errorf("%s --programs: exit %d\n%s%s", args[0], code, out, errs)
		}
	}
	if code, out, errs := run(t, "validate", "--tools", dir); code != 1 || !strings.Contains(out, `toolset "programs" is not defined`) {
		t.Errorf("validate without --programs: exit %d\n%s%s", code, out, errs)
	}
}
