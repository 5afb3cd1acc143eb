package toolfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/wieldhq/wield"
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
// for literal braces. Note that a value may still start with "-": put "--"
// before such arguments when the program supports it.
type Command struct {
	Argv      []string
	Dir       string
	Timeout   time.Duration
	MaxOutput int
}

var placeholder = regexp.MustCompile(`\{\{|\}\}|\{([A-Za-z0-9_.\-]*)\}`)

func (d *decoder) command(fs []field, def *Def, entry *yaml.Node) *Command {
	c := &Command{MaxOutput: DefaultMaxOutput}
	at := entry
	for _, f := range fs {
		switch f.name {
		case "command":
			at = f.val
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
	return c
}

// argv fills the templates with the call's arguments.
func (c *Command) argv(args map[string]any) []string {
	out := make([]string, 0, len(c.Argv))
	for _, a := range c.Argv {
		if m := placeholder.FindStringSubmatch(a); m != nil && m[0] == a && m[1] != "" {
			v, ok := args[m[1]]
			if !ok || v == nil {
				continue
			}
			if list, ok := v.([]any); ok {
				for _, x := range list {
					out = append(out, argText(x))
				}
				continue
			}
		}
		out = append(out, placeholder.ReplaceAllStringFunc(a, func(m string) string {
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
		}))
	}
	return out
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
	argv := c.argv(args)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	cmd.WaitDelay = time.Second
	max := c.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	stdout, stderr := &limitBuffer{max: max}, &limitBuffer{max: max}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
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
	return json.Marshal(out)
}

func excerpt(s string) string {
	s = strings.TrimSpace(s)
	const n = 500
	if len(s) > n {
		s = s[:n] + "…"
	}
	if s == "" {
		return "(no error output)"
	}
	return s
}
