//go:build unix

package journeys

import (
	"strings"
	"testing"
)

// TestJourneyProgramBounds: wield.yaml's programs: {max_print, max_steps}
// bound run_program's sandbox for users of the binary (program.Options,
// which only Go code could set): a program printing past max_print and one
// looping past max_steps fail saying so, and a bound of 0 is refused by
// `wield validate` at its line.
func TestJourneyProgramBounds(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "programs: {enabled: true, max_print: 100, max_steps: 100000}\n")
	for _, c := range []struct{ code, want string }{
		{`for i in range(50):\n    print(\"0123456789\")\n`, "printed more than 100 bytes"},
		{`while True:\n    pass\n`, "more than 100000 steps"},
	} {
		r := u.wield("call", "--config", "wield.yaml", "run_program", "--args", `{"code":"`+c.code+`"}`)
		if r.code != 1 || !strings.Contains(r.stdout, c.want) {
			t.Errorf("want exit 1 and %q:\n%s", c.want, r)
		}
	}
	u.write("bad.yaml", "programs: {enabled: true, max_steps: 0}\n")
	if r := u.wield("validate", "--config", "bad.yaml"); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "bad.yaml:1:38: programs.max_steps: must be at least 1") {
		t.Errorf("validate of max_steps: 0:\n%s", r)
	}
}
