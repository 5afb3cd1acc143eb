package toolfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
	"github.com/wieldhq/wield/internal/procgroup"
	"github.com/wieldhq/wield/internal/safetext"
	"go.yaml.in/yaml/v3"
)

// DefaultMaxOutput bounds what a command tool keeps of stdout and of stderr
// when its entry does not say.
const DefaultMaxOutput = 64 << 10

// Command is the entry of a command tool:
//
//	entry:
//	  type: command
//	  command: ["grep", "-n", "{pattern}", "{path}"]
//	  timeout: 5s
//	  max_output: 65536
//
// The program runs without a shell. Each element of Command is a template
// filled on its own, so an argument can never become two: "{name}" is
// replaced by the argument's value (a string as is, anything else as JSON),
// an element that is exactly "{name}" is dropped when the argument is absent
// and expands to one element per item when it is a list. Write "{{" and "}}"
// for literal braces.
//
// # What the model's values can do
//
// A value is one argument, but what the program does with it is the
// program's business. Two things wield checks:
//
//   - Code. A placeholder inside the code a shell or an interpreter runs
//     (["sh", "-c", "echo {msg}"], python -c, node -e, perl -e, ruby -e,
//     php -r, deno eval, osascript -e, awk's program text, cmd /c,
//     powershell -Command) lets a value such as "hi; touch /tmp/x" run
//     anything: loading the file warns at that element, as no check of the
//     value can make it safe. Pass the value as an argument of its own after
//     the code instead: ["sh", "-c", "echo \"$1\"", "sh", "{msg}"].
//   - Options. A value that starts with "-" in an element that starts with
//     a placeholder (["ls", "{path}"] with path "-la") would be read as an
//     option: the call is refused (validation_error naming the parameter),
//     unless the element comes after a literal "--" (or after a shell's
//     script or Python's -c code, whose arguments are never options), or
//     the parameter is listed in AllowLeadingDash (allow_leading_dash:
//     [name, ...], or true for every parameter, in the entry).
type Command struct {
	Argv      []string
	Dir       string
	Timeout   time.Duration
	MaxOutput int
	// AllowLeadingDash names the parameters whose values may start with
	// "-" where the program would read them as options.
	AllowLeadingDash []string
}

var placeholder = regexp.MustCompile(`\{\{|\}\}|\{([A-Za-z0-9_.\-]*)\}`)

func (d *decoder) command(fs []field, def *Def, entry *yaml.Node) *Command {
	c := &Command{MaxOutput: DefaultMaxOutput}
	at := entry
	var argvAt *yaml.Node
	for _, f := range fs {
		switch f.name {
		case "command":
			at, argvAt = f.val, f.val
			c.Argv = d.strings(f)
			for _, a := range c.Argv {
				for _, m := range placeholder.FindAllStringSubmatch(a, -1) {
					if m[0] == "{{" || m[0] == "}}" {
						continue
					}
					if !hasParam(def.Parameters, m[1]) {
						d.errorf(f.val, "entry: command refers to {%s}, which is not a parameter", m[1])
					}
				}
			}
		case "allow_leading_dash":
			if b, ok := boolValue(f.val); ok {
				if b {
					for _, p := range def.Parameters {
						c.AllowLeadingDash = append(c.AllowLeadingDash, p.Name)
					}
				}
				continue
			}
			if _, ok := seq(f.val); !ok {
				d.errorf(f.val, "allow_leading_dash: expected true, false or a list of parameter names, got %s", kindName(f.val))
				continue
			}
			c.AllowLeadingDash = d.strings(f)
			for _, name := range c.AllowLeadingDash {
				if !hasParam(def.Parameters, name) {
					d.errorf(f.val, "entry: allow_leading_dash names %q, which is not a parameter", name)
				}
			}
		case "dir":
			c.Dir = d.str(f)
		case "timeout":
			c.Timeout = d.duration(f)
		case "max_output":
			if n := d.count(f); n != nil {
				c.MaxOutput = *n
			}
		default:
			d.unknown(f, "command entry")
		}
	}
	if len(c.Argv) == 0 {
		d.errorf(at, "entry: command entry without command")
		return nil
	}
	if strings.Contains(c.Argv[0], "{") {
		d.errorf(at, "entry: the program name must not be a template")
	}
	d.codeWarnings(argvAt)
	return c
}

// codeWarnings warns at each element of a command that a shell or an
// interpreter runs as code and that holds a placeholder: whatever the model
// puts there runs.
func (d *decoder) codeWarnings(list *yaml.Node) {
	nodes, ok := seq(list)
	if !ok {
		return
	}
	argv := make([]string, len(nodes))
	for i, n := range nodes {
		if n = unwrap(n); n != nil && n.Kind == yaml.ScalarNode {
			argv[i] = n.Value
		}
	}
	for _, ca := range shapeOf(argv).code {
		end := ca.index + 1
		if ca.rest {
			end = len(argv)
		}
		for i := ca.index; i < end; i++ {
			names := placeholdersIn(argv[i])
			if len(names) == 0 {
				continue
			}
			hint := "pass the value as an argument of its own after the code, and read it there (sys.argv, process.argv, ARGV...)"
			if ca.shell {
				hint = fmt.Sprintf(`pass it as an argument of its own after the script and quote it there: [%s, -c, 'echo "$1"', %s, '{%s}']`, argv[0], argv[0], names[0])
			}
			d.warnf(nodes[i], "entry: command runs {%s} as code (%s): whatever the model puts in %s runs as a program (a value like \"x; touch /tmp/owned\" runs touch); %s",
				strings.Join(names, "}, {"), ca.how, strings.Join(names, ", "), hint)
		}
	}
}

// argv fills the templates with the call's arguments. A value that would
// be read as an option is a validation_error: see [Command].
func (c *Command) argv(args map[string]any) ([]string, error) {
	out := make([]string, 0, len(c.Argv))
	optionsEnd := shapeOf(c.Argv).optionsEnd
	for i, a := range c.Argv {
		// An element that starts with a placeholder starts with its value.
		lead := ""
		if loc := placeholder.FindStringSubmatchIndex(a); loc != nil && loc[0] == 0 && loc[2] >= 0 && loc[3] > loc[2] {
			lead = a[loc[2]:loc[3]]
		}
		if i >= optionsEnd || slices.Contains(c.AllowLeadingDash, lead) {
			lead = ""
		}
		if m := placeholder.FindStringSubmatch(a); m != nil && m[0] == a && m[1] != "" {
			v, ok := args[m[1]]
			if !ok || v == nil {
				continue
			}
			if list, ok := v.([]any); ok {
				for _, x := range list {
					s := argText(x)
					if lead != "" && strings.HasPrefix(s, "-") {
						return nil, c.optionRefused(lead, s)
					}
					out = append(out, s)
				}
				continue
			}
		}
		s := placeholder.ReplaceAllStringFunc(a, func(m string) string {
			switch m {
			case "{{":
				return "{"
			case "}}":
				return "}"
			}
			v, ok := args[m[1:len(m)-1]]
			if !ok || v == nil {
				return ""
			}
			return argText(v)
		})
		if lead != "" && strings.HasPrefix(s, "-") {
			return nil, c.optionRefused(lead, s)
		}
		out = append(out, s)
	}
	return out, nil
}

// optionRefused is the validation_error of a value that the program would
// read as an option, worded for the model that sent it.
func (c *Command) optionRefused(param, value string) error {
	value = safetext.Clip(value, 40)
	return &wield.Error{Type: wield.ErrValidation, Message: fmt.Sprintf(
		"parameter %q: the value %q starts with \"-\", so %s would read it as an option, not as %s; send a value that does not start with \"-\" (a file whose name starts with \"-\" can be written \"./%s\")",
		param, value, programName(c.Argv[0]), param, strings.TrimPrefix(value, "./"))}
}

func argText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// limitBuffer keeps the first max bytes and counts the rest.
type limitBuffer struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (l *limitBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room < len(p) {
		l.truncated = true
		if room > 0 {
			l.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return l.buf.Write(p)
}

type commandOutput struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Handle runs the program. A non-zero exit is an execution_error quoting the
// start of stderr; a program that cannot start is one too.
func (c *Command) Handle(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	args := map[string]any{}
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return nil, &wield.Error{Type: wield.ErrValidation, Message: "arguments are not a JSON object", Err: err}
		}
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	argv, err := c.argv(args)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	// A call that times out or is canceled ends the program with what it
	// started (a script's children, a wrapper's program): on Unix it runs
	// in a process group of its own, killed whole. What a program that
	// exits leaves running in the background is its own; its output
	// pipes are given up a second after it exits.
	procgroup.Own(cmd)
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process, os.Kill) }
	cmd.WaitDelay = time.Second
	max := c.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	stdout, stderr := &limitBuffer{max: max}, &limitBuffer{max: max}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("run %s: %w", argv[0], ctx.Err())
	}
	out := commandOutput{Stdout: stdout.buf.String(), Stderr: stderr.buf.String(), Truncated: stdout.truncated || stderr.truncated}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		out.ExitCode = exit.ExitCode()
		return nil, &wield.Error{Type: wield.ErrExecution, Message: fmt.Sprintf("%s exited with status %d: %s", argv[0], out.ExitCode, excerpt(out.Stderr)), Err: err}
	case err != nil:
		return nil, &wield.Error{Type: wield.ErrExecution, Message: fmt.Sprintf("cannot run %s", argv[0]), Err: err}
	}
	return jsonenc.Marshal(out) // <, > and & as they are: a model reads it
}

func excerpt(s string) string {
	s = safetext.Clip(strings.TrimSpace(s), 500)
	if s == "" {
		return "(no error output)"
	}
	return s
}
