//go:build unix

package journeys

import (
	"strings"
	"testing"
	"time"
)

// TestJourneyAttackProgramDeep: a program (model output) cannot end the
// server or hold a core past its call through values nested deeply.
// json.decode of text two million brackets deep overflowed the stack in
// Starlark's recursive decoder, a fatal error that ended `wield serve`; str
// and json.encode of a list 200,000 deep ran for many seconds in one step,
// past the call's timeout. Both are now an execution_error at once, and the
// server answers after.
func TestJourneyAttackProgramDeep(t *testing.T) {
	u := newUser(t)
	u.write("tools/steps.yaml", programTools())
	s := u.serve("--programs", "--tools", "tools")
	const deep = "x = []\nfor i in range(200000):\n    x = [x]\n"
	for _, c := range []struct{ name, code, errHas string }{
		{"json.decode of deep text", "n = 2000000\nv = json.decode('[' * n + ']' * n)\n", "the JSON text: nested deeper than 1000 levels"},
		{"str of a deep list", deep + "s = str(x)\n", "the argument of str: nested deeper than 1000 levels"},
		{"json.encode of a deep list", deep + "s = json.encode(x)\n", "nested deeper than 1000 levels"},
		{"a deep result", deep + "result = x\n", "the program's result is nested deeper than 1000 levels"},
	} {
		r, took := runProgram(t, s, c.code, 0)
		if r.OK || r.ErrorType != "execution_error" || !strings.Contains(r.Error, c.errHas) {
			t.Errorf("%s: ok=%v %s %q, want an execution_error containing %q", c.name, r.OK, r.ErrorType, r.Error, c.errHas)
		}
		if took > 10*time.Second {
			t.Errorf("%s: took %s", c.name, took)
		}
		if code, _ := s.do("GET", "/healthz", ""); code != 200 {
			t.Fatalf("after %s the server answers /healthz with %d:\n%s", c.name, code, s.stderr)
		}
	}
}
