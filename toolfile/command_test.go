package toolfile

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/procgroup"
)

func TestCommandArgv(t *testing.T) {
	c := &Command{Argv: []string{"grep", "-n", "{pattern}", "--", "{paths}", "x={n}", "{{literal}}", "{missing}"}}
	args := map[string]any{
		"pattern": "a; rm -rf / $(id)",
		"paths":   []any{"a b.txt", "c.txt"},
		"n":       json.Number("3"),
	}
	want := []string{"grep", "-n", "a; rm -rf / $(id)", "--", "a b.txt", "c.txt", "x=3", "{literal}"}
	got, err := c.argv(args)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
}

func needs(t *testing.T, progs ...string) {
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not found", p)
		}
	}
}

func TestCommandRun(t *testing.T) {
	needs(t, "echo", "sh")
	tests := []struct {
		name    string
		cmd     Command
		args    string
		want    *commandOutput
		errType wield.ErrorType
		errText string
	}{
		{"echo", Command{Argv: []string{"echo", "{msg}"}}, `{"msg":"$(id) ; ls"}`,
			&commandOutput{Stdout: "$(id) ; ls\n"}, "", ""},
		{"truncated", Command{Argv: []string{"echo", "{msg}"}, MaxOutput: 4}, `{"msg":"hello world"}`,
			&commandOutput{Stdout: "hell", Truncated: true}, "", ""},
		{"exit status", Command{Argv: []string{"sh", "-c", "echo oops >&2; exit 3"}}, `{}`,
			nil, wield.ErrExecution, "sh exited with status 3: oops"},
		{"no program", Command{Argv: []string{"/nonexistent/prog"}}, `{}`,
			nil, wield.ErrExecution, "cannot run /nonexistent/prog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.cmd.Handle(context.Background(), json.RawMessage(tt.args))
			if tt.want != nil {
				if err != nil {
					t.Fatal(err)
				}
				var got commandOutput
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(*tt.want, got); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
				return
			}
			var we *wield.Error
			if !errors.As(err, &we) || we.Type != tt.errType || we.Message != tt.errText {
				t.Errorf("error = %#v, want %s %q", err, tt.errType, tt.errText)
			}
		})
	}
}

func TestCommandTimeout(t *testing.T) {
	needs(t, "sleep")
	c := &Command{Argv: []string{"sleep", "10"}, Timeout: 50 * time.Millisecond}
	start := time.Now()
	_, err := c.Handle(context.Background(), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestDecodeProblems(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"command refers to unknown parameter",
			"name: a\nparameters: [{name: x, type: string}]\nentry: {type: command, command: [ls, '{y}']}\n",
			[]string{`f.yaml:3:33: entry: command refers to {y}, which is not a parameter`}},
		{"rule for another type",
			"name: a\nparameters:\n  - name: x\n    type: integer\n    validation: {pattern: 'a'}\nentry: {type: builtin, handler: b}\n",
			[]string{`f.yaml:5:18: parameter "x": pattern applies to string parameters, not integer`}},
		{"bad type",
			"name: a\nparameters:\n  - {name: x, type: text}\nentry: {type: builtin, handler: b}\n",
			[]string{`f.yaml:3:21: parameter "x": type "text" is not string, number, integer, boolean, array or object`}},
		{"nested unknown field",
			"name: a\nparameters:\n  - name: x\n    type: object\n    validation:\n      properties:\n        y: {type: string, colour: red}\nentry: {type: builtin, handler: b}\n",
			[]string{`f.yaml:7:27: property "y": unknown field "colour"`}},
		{"agent unknown strategy",
			"kind: agent\nname: a\noutput_strategy: {streaming: true}\n",
			[]string{`f.yaml:3:19: output_strategy: unknown field "streaming"`}},
		{"bad timeout",
			"name: a\ntimeout: soon\nentry: {type: builtin, handler: b}\n",
			[]string{`f.yaml:2:10: timeout: "soon" is not a duration like "30s"`}},
		{"enum of another type",
			"name: a\nparameters:\n  - {name: x, type: integer, required: false, validation: {enum: [1, two]}}\nentry: {type: builtin, handler: b}\n",
			[]string{`f.yaml:3:70: parameter "x": enum value "two" is not of type integer`}},
		{"missing entry", "name: a\n", []string{`f.yaml:1:1: tool "a": missing entry`}},
		{"bad name", "name: 'a b'\nentry: {type: builtin, handler: b}\n",
			[]string{`f.yaml:1:1: tool "a b": name "a b" must be 1-128 characters of letters, digits, _ . -`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Loader
			set, _ := l.Load(context.Background(), "f.yaml", []byte(tt.src))
			var got []string
			for _, p := range set.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNestedSchema(t *testing.T) {
	src := `
name: a
parameters:
  - name: filter
    type: object
    required: false
    validation:
      properties:
        field: {type: string}
        values: {type: array, validation: {items: {type: integer, validation: {min: 0}}}}
      required: [field]
entry: {type: builtin, handler: b}
`
	var l Loader
	set, err := l.Load(context.Background(), "f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(set.Tools[0].InputSchema)
	want := `{"type":"object","properties":{"filter":{"type":"object","properties":{"field":{"type":"string"},"values":{"type":"array","items":{"type":"integer","minimum":0}}},"required":["field"],"additionalProperties":false}},"additionalProperties":false}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

func TestPluginKind(t *testing.T) {
	var got *Def
	l := Loader{Kinds: map[string]Kind{"http": KindFunc(func(_ context.Context, def *Def) (wield.Handler, error) {
		got = def
		return wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`"ok"`), nil
		}), nil
	})}}
	src := "name: a\nentry:\n  type: http\n  url: https://example.com/{x}\n  headers: {Accept: text/plain}\n"
	set, err := l.Load(context.Background(), "f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"url": "https://example.com/{x}", "headers": map[string]any{"Accept": "text/plain"}}
	if diff := cmp.Diff(want, got.Entry.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if got.Entry.Line != 3 || got.Entry.Col != 3 || set.Tools[0].Handler == nil {
		t.Errorf("entry at %d:%d, handler %v", got.Entry.Line, got.Entry.Col, set.Tools[0].Handler)
	}
}

func TestEntryProblems(t *testing.T) {
	tests := []struct{ src, want string }{
		{"name: a\nentry:\n  handler: x\n", "f.yaml:3:3: entry: missing type"},
		{"name: a\nentry:\n  type: builtin\n", "f.yaml:3:3: entry: builtin entry without handler"},
		{"name: a\nentry:\n  type: command\n  timeout: 1s\n", "f.yaml:3:3: entry: command entry without command"},
		{"name: a\nentry:\n  type: command\n  command: ['{x}']\nparameters: [{name: x, type: string}]\n", "f.yaml:4:12: entry: the program name must not be a template"},
		{"name: a\nentry: {type: builtin, handler: b}\nparameters:\n  - name: x\n    type: number\n    validation:\n      min: 2\n      max: 1\n", "f.yaml:7:7: parameter \"x\": min 2 is greater than max 1"},
	}
	for _, tt := range tests {
		var l Loader
		set, _ := l.Load(context.Background(), "f.yaml", []byte(tt.src))
		if len(set.Problems) != 1 || set.Problems[0].String() != tt.want {
			t.Errorf("%q: problems = %v, want %s", tt.src, set.Problems, tt.want)
		}
	}
}

// TestCommandTimeoutEndsChildren: a program that times out is ended with
// what it started: the child a shell started in the background is gone
// too (before, it ran on, orphaned, after the call's timeout).
func TestCommandTimeoutEndsChildren(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process groups are Unix's")
	}
	needs(t, "sh")
	needs(t, "sleep")
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := &Command{Argv: []string{"sh", "-c", `sleep 300 & echo $! > "$0"; wait`, pidFile}, Timeout: 500 * time.Millisecond}
	if _, err := c.Handle(context.Background(), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want deadline exceeded", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := os.FindProcess(child)
	t.Cleanup(func() { _ = p.Kill() })
	deadline := time.Now().Add(10 * time.Second)
	for procgroup.Running(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the program's child %d still runs after the call timed out", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCommandMessagesClipOnCharacter cuts the value a refusal quotes (40
// bytes) and the program's error output a failure quotes (500 bytes) at
// the last whole character, with "…". Both cuts used to fall inside a "€",
// and the message the model read held "\xe2\x82".
func TestCommandMessagesClipOnCharacter(t *testing.T) {
	// "-x", then "€"s of 3 bytes: the 13th is bytes 38 to 40.
	c := &Command{Argv: []string{"ls", "{path}"}}
	_, err := c.argv(map[string]any{"path": "-x" + strings.Repeat("€", 20)})
	var we *wield.Error
	if !errors.As(err, &we) || we.Type != wield.ErrValidation {
		t.Fatalf("argv of a value with a leading dash: %v, want a validation_error", err)
	}
	if want := `the value "-x` + strings.Repeat("€", 12) + `…" starts with`; !utf8.ValidString(we.Message) || !strings.Contains(we.Message, want) {
		t.Errorf("refusal %q: want valid UTF-8 holding %q", we.Message, want)
	}

	needs(t, "sh")
	// 200 "€"s: byte 500 is inside the 167th.
	c = &Command{Argv: []string{"sh", "-c", "printf '%s' '" + strings.Repeat("€", 200) + "' >&2; exit 1"}}
	_, err = c.Handle(context.Background(), json.RawMessage(`{}`))
	if !errors.As(err, &we) || we.Type != wield.ErrExecution {
		t.Fatalf("a command that fails: %v, want an execution_error", err)
	}
	if want := "sh exited with status 1: " + strings.Repeat("€", 166) + "…"; we.Message != want || !utf8.ValidString(we.Message) {
		t.Errorf("failure %q, want %q", we.Message, want)
	}
}
