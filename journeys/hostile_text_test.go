//go:build unix

package journeys

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileDescription sets the terminal title, returns the carriage to write
// over the line and reverses a file name with U+202E.
const hostileDescription = `Reads \u001b]0;pwned\u0007 files\rEVIL \u202etxt.sdrawkcab`

// A tool file whose description holds escape sequences: `wield list` shows
// them as visible escapes, the table keeps one line per tool, and --json
// keeps the exact text.
func TestJourneyHostileDescription(t *testing.T) {
	u := newUser(t)
	u.write("tools/hostile.json", `{"name":"hostile","description":"`+hostileDescription+`","parameters":[{"name":"message","type":"string"}],"entry":{"type":"builtin","handler":"echo"}}`+"\n")

	r := u.must("--tools", "tools", "list")
	for _, raw := range []string{"\x1b", "\r", "\u202e", "\x07"} {
		if strings.Contains(r.stdout, raw) {
			t.Errorf("wield list prints %q raw:\n%q", raw, r.stdout)
		}
	}
	line := lineOf(r.stdout, "hostile")
	if want := `Reads \x1b]0;pwned\x07 files\rEVIL \u202etxt.sdrawkcab`; !strings.Contains(line, want) {
		t.Errorf("hostile row = %q, want it to show %q", line, want)
	}

	j := u.must("--tools", "tools", "list", "--json")
	if !strings.Contains(j.stdout, `\u001b]0;pwned\u0007 files\rEVIL`) {
		t.Errorf("--json does not keep the description exactly:\n%s", j.stdout)
	}
}

// A tool file whose input_schema refers round in a loop (A → B → A) is
// refused by `wield validate` naming the loop, and `wield call` of it ends at
// once with the same error instead of spinning a core; a tree that recurses
// through items still loads and validates deep arguments.
func TestJourneyReferenceCycle(t *testing.T) {
	u := newUser(t)
	u.write("tools/loop.json", `{"name":"loop","description":"cycle","input_schema":{"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}},"$ref":"#/$defs/A"},"entry":{"type":"builtin","handler":"echo"}}`+"\n")

	v := u.wield("validate", "tools")
	if v.code == 0 || !strings.Contains(v.stdout, "tools/loop.json") || !strings.Contains(v.stdout, "reference cycle #/$defs/A → #/$defs/B → #/$defs/A") {
		t.Errorf("validate: want a failure naming the loop:\n%s", v)
	}

	c := u.wield("--tools", "tools", "call", "loop", "--timeout", "2s", "message=hi")
	if c.code == 0 || !strings.Contains(c.stderr, "reference cycle") || c.took > 10*time.Second {
		t.Errorf("call: want a prompt failure naming the cycle, took %v:\n%s", c.took, c)
	}

	// The same call started in the background ends on SIGTERM at once
	// whatever state it is in.
	cmd := exec.Command(bin, "--tools", "tools", "call", "loop", "message=hi")
	cmd.Dir, cmd.Env = u.dir, u.env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let it reach loading the files
	start := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("SIGTERM: exit took %v", took)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("wield call still running 10s after SIGTERM:\n%s", errb.String())
	}

	u.write("tools/loop.json", `{"name":"tree","description":"a tree","input_schema":{"type":"object","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"properties":{"data":{"$ref":"#/$defs/node"}}},"entry":{"type":"builtin","handler":"json_stringify"}}`+"\n")
	u.must("validate", "tools")
	deep := `{"name":"leaf"}`
	for range 30 {
		deep = `{"name":"n","children":[` + deep + `]}`
	}
	ok := u.must("--tools", "tools", "call", "tree", "data:="+deep)
	if !strings.Contains(ok.stdout, `\"leaf\"`) || !strings.Contains(ok.stdout, `"ok": true`) {
		t.Errorf("tree call: want the echoed tree:\n%s", ok)
	}
}
