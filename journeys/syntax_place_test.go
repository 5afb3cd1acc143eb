//go:build unix

package journeys

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneySyntaxErrorPlace: a YAML syntax error is placed on the line
// where it is, the same way by `wield validate`, by serve at start and by
// serve's hot reload, where yaml.v3 itself names the line where the
// enclosing mapping began, counted from 0 (the line before it), or no line
// at all (1:1) for a control character.
func TestJourneySyntaxErrorPlace(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "tool_dirs: [tools]\nreload: {watch: true}\n")
	u.write("tools/good.yaml", "name: greet\ndescription: Greeting\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	const (
		indented = "name: shout\ndescription: Say it loud\nannotations:\n  read_only: true\n  idempotent: true\n open_world: true\nentry: {type: builtin, handler: echo}\n"
		control  = "name: hush\ndescription: Say it low\nentry: {type: builtin, handler: echo}\ntags: [\"a\x01\"]\n"
	)
	wants := []string{
		"tools/indented.yaml:6:2: syntax error: did not find expected key",
		"tools/control.yaml:4:10: syntax error: control characters are not allowed",
	}
	s := u.serve("--config", "wield.yaml")
	u.write("tools/indented.yaml", indented)
	u.write("tools/control.yaml", control)
	if !eventually(10*time.Second, func() bool {
		e := s.stderr.String()
		return strings.Contains(e, `at=tools/indented.yaml:`) && strings.Contains(e, `at=tools/control.yaml:`)
	}) {
		t.Fatalf("the reload did not report both broken files within 10 s:\n%s", s.stderr)
	}
	for _, w := range wants {
		file, msg, _ := strings.Cut(w, ": ")
		if want := "msg=\"" + msg + "\" at=" + file; !strings.Contains(s.stderr.String(), want) {
			t.Errorf("the reload's log lacks %q:\n%s", want, s.stderr)
		}
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}

	// At start, and in validate, the same places.
	s = u.serve("--config", "wield.yaml")
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}
	r := u.wield("validate", "--config", "wield.yaml")
	for _, w := range wants {
		file, msg, _ := strings.Cut(w, ": ")
		if want := "msg=\"" + msg + "\" at=" + file; !strings.Contains(s.stderr.String(), want) {
			t.Errorf("serve's start lacks %q:\n%s", want, s.stderr)
		}
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Errorf("validate lacks %q:\n%s", w, r)
		}
	}

	// The configuration file: serve refuses to start, naming the line.
	u.write("wield.yaml", "tool_dirs: [tools]\nserver:\n  addr: 127.0.0.1:0\n  body_timeout: 30s\n keys: []\n")
	for _, args := range [][]string{{"validate", "--config", "wield.yaml"}, {"serve", "--config", "wield.yaml", "--addr", "127.0.0.1:0"}} {
		r := u.wield(args...)
		// validate tells it among its own problems, on stdout.
		if want := "wield.yaml:5:2: syntax error: did not find expected key"; r.code == 0 || !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("wield %s: exit %d, want the error %q:\n%s", args[0], r.code, want, r)
		}
	}
}
