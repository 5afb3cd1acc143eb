package toolfile

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// TestCommandShape reads which elements of a command run as code and where
// options end.
func TestCommandShape(t *testing.T) {
	tests := []struct {
		argv       []string
		code       []int // the elements that are code (cmd /c and -Command: the first of the rest)
		optionsEnd int   // -1: len(argv)
	}{
		{[]string{"ls", "{path}"}, nil, -1},
		{[]string{"ls", "-l", "--", "{path}"}, nil, 2},
		{[]string{"sh", "-c", "echo {msg}"}, []int{2}, 3},
		{[]string{"/bin/bash", "-lc", "echo {msg}"}, []int{2}, 3},
		{[]string{"bash", "-e", "-o", "pipefail", "-c", "x {msg}"}, []int{5}, 6},
		{[]string{"sh", "-c", `echo "$1"`, "sh", "{msg}"}, []int{2}, 3},
		{[]string{"sh", "script.sh", "{msg}"}, nil, -1},
		{[]string{"env", "LANG=C", "zsh", "-c", "{cmd}"}, []int{4}, 5},
		{[]string{"fish", "--command=echo {x}"}, []int{1}, 2},
		{[]string{"dash", "-c", "{x}"}, []int{2}, 3},
		{[]string{"ksh", "-c", "{x}"}, []int{2}, 3},
		{[]string{"cmd", "/C", "echo", "{x}"}, []int{2}, -1},
		{[]string{"cmd.exe", "/c", "dir {x}"}, []int{2}, -1},
		{[]string{"powershell", "-NoProfile", "-Command", "Get-Item {x}"}, []int{3}, -1},
		{[]string{"pwsh", "-c", "{x}"}, []int{2}, -1},
		{[]string{"python3", "-c", "print({x})"}, []int{2}, 3},
		{[]string{"python3.12", "-Bc", "print({x})"}, []int{2}, 3},
		{[]string{"python", "script.py", "{x}"}, nil, -1},
		{[]string{"node", "-e", "console.log({x})"}, []int{2}, -1},
		{[]string{"node", "--eval={x}"}, []int{1}, -1},
		{[]string{"perl", "-ne", "print if /{x}/", "file"}, []int{2}, -1},
		{[]string{"perl", "-E", "say {x}"}, []int{2}, -1},
		{[]string{"ruby", "-e", "puts {x}"}, []int{2}, -1},
		{[]string{"php", "-r", "echo {x};"}, []int{2}, -1},
		{[]string{"deno", "eval", "console.log({x})"}, []int{2}, -1},
		{[]string{"osascript", "-e", "say {x}"}, []int{2}, -1},
		{[]string{"awk", "-F", ",", "{print ${col}}", "f.csv"}, []int{3}, -1},
		{[]string{"awk", "-f", "prog.awk", "{file}"}, nil, -1},
		{[]string{"grep", "-e", "{pattern}", "{file}"}, nil, -1},
	}
	for _, tt := range tests {
		s := shapeOf(tt.argv)
		var code []int
		for _, c := range s.code {
			code = append(code, c.index)
		}
		end := tt.optionsEnd
		if end < 0 {
			end = len(tt.argv)
		}
		if diff := cmp.Diff(tt.code, code); diff != "" || s.optionsEnd != end {
			t.Errorf("%q: code %v (want %v), options end at %d (want %d)", tt.argv, code, tt.code, s.optionsEnd, end)
		}
	}
}

// TestCommandCodeWarnings wants a warning at each element that runs a
// placeholder as code, at that element's line and column, and none for
// the safe way of passing values to a shell.
func TestCommandCodeWarnings(t *testing.T) {
	const head = "name: a\nparameters: [{name: msg, type: string}]\n"
	tests := []struct {
		name, entry string
		want        []string
	}{
		{"sh -c", "entry:\n  type: command\n  command: [sh, -c, 'echo {msg}']\n",
			[]string{`f.yaml:5:21: entry: command runs {msg} as code (sh -c): whatever the model puts in msg runs as a program (a value like "x; touch /tmp/owned" runs touch); pass it as an argument of its own after the script and quote it there: [sh, -c, 'echo "$1"', sh, '{msg}']`}},
		{"block list", "entry:\n  type: command\n  command:\n    - bash\n    - -c\n    - |\n      echo {msg}\n",
			[]string{`f.yaml:8:7: entry: command runs {msg} as code (bash -c): whatever the model puts in msg runs as a program (a value like "x; touch /tmp/owned" runs touch); pass it as an argument of its own after the script and quote it there: [bash, -c, 'echo "$1"', bash, '{msg}']`}},
		{"python -c", "entry: {type: command, command: [python3, -c, 'print(\"{msg}\")']}\n",
			[]string{`f.yaml:3:47: entry: command runs {msg} as code (python3 -c): whatever the model puts in msg runs as a program (a value like "x; touch /tmp/owned" runs touch); pass the value as an argument of its own after the code, and read it there (sys.argv, process.argv, ARGV...)`}},
		{"the safe way", "entry: {type: command, command: [sh, -c, 'echo \"$1\"', sh, '{msg}']}\n", nil},
		{"no shell", "entry: {type: command, command: [echo, '{msg}']}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Loader
			set, _ := l.Load(context.Background(), "f.yaml", []byte(head+tt.entry))
			var got []string
			for _, p := range set.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			for _, p := range set.Problems {
				if !p.Warning {
					t.Errorf("%s: an error, want a warning", p)
				}
			}
			if len(set.Tools) != 1 {
				t.Errorf("the tool is loaded despite the warning: got %d tools", len(set.Tools))
			}
		})
	}
}

// TestCommandLeadingDash refuses a value that the program would read as an
// option, with a message naming the parameter; a literal "--" before it,
// allow_leading_dash, or a place after a shell's script let it through.
func TestCommandLeadingDash(t *testing.T) {
	tests := []struct {
		name    string
		cmd     Command
		args    map[string]any
		want    []string
		refused string // the parameter named, when refused
	}{
		{"option", Command{Argv: []string{"ls", "{path}"}}, map[string]any{"path": "-la"}, nil, "path"},
		{"option in a list", Command{Argv: []string{"ls", "{paths}"}}, map[string]any{"paths": []any{"a", "--all"}}, nil, "paths"},
		{"option glued", Command{Argv: []string{"grep", "{pattern}x"}}, map[string]any{"pattern": "-r"}, nil, "pattern"},
		{"negative number", Command{Argv: []string{"head", "{n}", "f"}}, map[string]any{"n": json.Number("-5")}, nil, "n"},
		{"plain", Command{Argv: []string{"ls", "{path}"}}, map[string]any{"path": "a-b"}, []string{"ls", "a-b"}, ""},
		{"inside an element", Command{Argv: []string{"grep", "--regexp={pattern}"}}, map[string]any{"pattern": "-r"}, []string{"grep", "--regexp=-r"}, ""},
		{"after --", Command{Argv: []string{"ls", "--", "{path}"}}, map[string]any{"path": "-la"}, []string{"ls", "--", "-la"}, ""},
		{"allowed", Command{Argv: []string{"ls", "{path}"}, AllowLeadingDash: []string{"path"}}, map[string]any{"path": "-la"}, []string{"ls", "-la"}, ""},
		{"another allowed", Command{Argv: []string{"ls", "{path}"}, AllowLeadingDash: []string{"other"}}, map[string]any{"path": "-la"}, nil, "path"},
		{"a shell's argument", Command{Argv: []string{"sh", "-c", `echo "$1"`, "sh", "{msg}"}}, map[string]any{"msg": "-n"}, []string{"sh", "-c", `echo "$1"`, "sh", "-n"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cmd.argv(tt.args)
			if tt.refused == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("argv (-want +got):\n%s", diff)
				}
				return
			}
			var we *wield.Error
			if !errors.As(err, &we) || we.Type != wield.ErrValidation || !strings.Contains(we.Message, `parameter "`+tt.refused+`"`) || !strings.Contains(we.Message, "option") {
				t.Errorf("argv = %q, %v; want a validation_error naming %q", got, err, tt.refused)
			}
		})
	}
}

// TestCommandLeadingDashFile reads allow_leading_dash from a tool file:
// true for every parameter, or a list of names, each a parameter.
func TestCommandLeadingDashFile(t *testing.T) {
	const head = "name: a\nparameters: [{name: path, type: string}, {name: n, type: integer}]\n"
	tests := []struct {
		entry string
		want  []string
		err   string
	}{
		{"entry: {type: command, command: [ls, '{path}']}\n", nil, ""},
		{"entry: {type: command, command: [ls, '{path}'], allow_leading_dash: true}\n", []string{"path", "n"}, ""},
		{"entry: {type: command, command: [ls, '{path}'], allow_leading_dash: [n]}\n", []string{"n"}, ""},
		{"entry: {type: command, command: [ls, '{path}'], allow_leading_dash: [x]}\n", nil, `f.yaml:3:69: entry: allow_leading_dash names "x", which is not a parameter`},
		{"entry: {type: command, command: [ls, '{path}'], allow_leading_dash: yes}\n", nil, `f.yaml:3:69: allow_leading_dash: expected true, false or a list of parameter names, got string`},
	}
	for _, tt := range tests {
		var l Loader
		set, _ := l.Load(context.Background(), "f.yaml", []byte(head+tt.entry))
		if tt.err != "" {
			if len(set.Problems) != 1 || set.Problems[0].String() != tt.err {
				t.Errorf("%q: problems %v, want %s", tt.entry, set.Problems, tt.err)
			}
			continue
		}
		if len(set.Problems) != 0 || len(set.Tools) != 1 {
			t.Fatalf("%q: problems %v", tt.entry, set.Problems)
		}
		c := set.Defs[0].Entry.Command
		if diff := cmp.Diff(tt.want, c.AllowLeadingDash); diff != "" {
			t.Errorf("%q: allow_leading_dash (-want +got):\n%s", tt.entry, diff)
		}
	}
}
