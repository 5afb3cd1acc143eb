//go:build unix

package journeys

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestJourneyTemplates: a content tool's Go template (if/else, range,
// printf, json, index, a missing and a null argument) answers as
// text/template would, through the binary, whose templates run without
// text/template's executor (internal/gotmpl); a template that does not
// parse is refused at load saying which file and where, and one that
// fails as it runs fails the call with the template's message.
func TestJourneyTemplates(t *testing.T) {
	u := newUser(t)
	u.write("tools/greet.yaml", `name: greet
description: Greets
parameters:
  - {name: name, type: string}
  - {name: tags, type: array, required: false, validation: {items: string}}
  - {name: n, type: number, required: false}
  - {name: note, type: string, required: false}
entry:
  type: content
  text: >-
    {{if eq .name "Ada"}}Dear {{.name}}{{else}}Hi {{.name}}{{end}};
    {{range $i, $t := .tags}}{{if $i}}, {{end}}{{$t | printf "%q"}}{{else}}no tags{{end}};
    n={{.n}} note=[{{.note}}] {{json .tags}} {{len .name}} {{index . "name" | html}}
`)
	r := u.must("call", "greet", "--tools", "tools", "name=Ada", `tags:=["x","y<z"]`, "n:=2.5")
	if got, want := contentText(t, r), `Dear Ada; "x", "y<z"; n=2.5 note=[] ["x","y\u003cz"] 3 Ada`; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	r = u.must("call", "greet", "--tools", "tools", "name=<Bob>", "note:=null")
	if got, want := contentText(t, r), `Hi <Bob>; no tags; n= note=[] null 5 &lt;Bob&gt;`; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}

	u.write("tools/fails.yaml", "name: fails\ndescription: Fails\nparameters:\n  - {name: n, type: number}\nentry: {type: content, text: \"{{if eq .n 1}}one{{end}}\"}\n")
	r = u.wield("call", "fails", "--tools", "tools", "n:=1")
	if r.code == 0 || !strings.Contains(r.stdout, "incompatible types for comparison") {
		t.Errorf("a template failing as it runs:\n%s", r)
	}

	u.write("tools/bad.yaml", "name: bad\ndescription: Bad\nentry: {type: content, text: \"{{if .x}}\"}\n")
	r = u.wield("call", "greet", "--tools", "tools", "name=x")
	out := r.stdout + r.stderr
	if r.code == 0 || !strings.Contains(out, "bad.yaml") || !strings.Contains(out, "unexpected EOF") {
		t.Errorf("a template that does not parse:\n%s", r)
	}
}

// TestJourneyBinarySize: the binary `go build ./cmd/wield` makes is at most
// 60 MB (issue 15), and does not link text/template's executor, whose
// look-up of methods by name would keep every exported method of every
// linked type (13 MB; templates run through internal/gotmpl instead), nor
// httpsnoop, which otelhttp linked for its wrappers of every combination of
// a ResponseWriter's interfaces (2.3 MB with otelhttp).
func TestJourneyBinarySize(t *testing.T) {
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 60_000_000 {
		t.Errorf("the binary is %d bytes, more than 60 MB: go tool nm -size -sort size shows what grew", fi.Size())
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	if strings.Contains(string(out), "text/template.(*state).evalField") {
		t.Errorf("the binary links text/template's executor (Template.Execute): run templates through internal/gotmpl; go build -ldflags=-dumpdep shows the path to it")
	}
	if strings.Contains(string(out), "github.com/felixge/httpsnoop.") {
		t.Errorf("the binary links httpsnoop (otelhttp's handler): requests' spans come from cmd/wield's own handler (tracehttp.go); go build -ldflags=-dumpdep shows the path to it")
	}
}

// TestJourneyTemplateBounded: a content tool whose template ranges over
// its arguments within ranges over them (100 items: 10^8 steps) stops at
// the template's bounds with a message saying so, in a moment, instead of
// running on past the call's end; a template within them answers.
func TestJourneyTemplateBounded(t *testing.T) {
	u := newUser(t)
	u.write("tools/cross.yaml", `name: cross
description: Crosses items
parameters:
  - {name: items, type: array, validation: {items: string}}
entry:
  type: content
  text: '{{range .items}}{{range $.items}}{{range $.items}}{{range $.items}}.{{end}}{{end}}{{end}}{{end}}'
`)
	items := make([]string, 100)
	for i := range items {
		items[i] = `"x"`
	}
	start := time.Now()
	r := u.wield("call", "cross", "--tools", "tools", "items:=["+strings.Join(items, ",")+"]")
	if r.code == 0 || !strings.Contains(r.stdout, "template stopped after 1000000 steps") {
		t.Errorf("a template past its bounds:\n%s", r)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the call took %v", d)
	}
	r = u.must("call", "cross", "--tools", "tools", `items:=["a","b"]`)
	if got := contentText(t, r); got != strings.Repeat(".", 16) {
		t.Errorf("text = %q, want 16 dots", got)
	}
}
