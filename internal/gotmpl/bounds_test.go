package gotmpl

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestExecuteBounded holds a template to a bounded run: one that would
// loop for ages, recurse without end, or grow its output or a variable
// without bound stops with an error saying so, in little time.
func TestExecuteBounded(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"range over a big number", `{{range 1000000000000}}{{end}}`, "steps"},
		{"nested ranges over the data", `{{range .items}}{{range $.items}}{{range $.items}}{{range $.items}}.{{end}}{{end}}{{end}}{{end}}`, "template stopped"},
		{"recursion without end", `{{define "x"}}{{template "x" .}}{{template "x" .}}{{end}}{{template "x" .}}`, "depth"},
		{"a block that calls itself", `{{block "b" .}}{{template "b" .}}{{end}}`, "exceeded maximum template depth (1000)"},
		{"templates that call each other", `{{define "a"}}{{template "b" .}}{{end}}{{define "b"}}{{template "a" .}}{{end}}{{template "a"}}`, "exceeded maximum template depth (1000)"},
		{"recursion that branches", `{{define "x"}}{{if .}}{{template "x" (slice . 1)}}{{template "x" (slice . 1)}}{{end}}{{end}}{{template "x" (slice .items 900)}}`, "steps"},
		{"output that doubles", `{{define "x"}}{{if .}}{{printf "%0100d" 1}}{{template "x" (slice . 1)}}{{template "x" (slice . 1)}}{{end}}{{end}}{{template "x" (slice .items 900)}}`, "past"},
		{"a variable that doubles", `{{$x := "ab"}}{{range 80}}{{$x = printf "%s%s" $x $x}}{{end}}{{len $x}}`, "past"},
		{"a printf that pads", `{{range 100}}{{printf "%999999d" 1}}{{end}}`, "past"},
	}
	items := make([]any, 1000)
	for i := range items {
		items[i] = i
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Parse("t", c.text, nil)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- tpl.Execute(io.Discard, map[string]any{"items": items}) }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("the template ran to its end")
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Errorf("error %q does not say %q", err, c.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the template still runs after 10 s")
			}
		})
	}
}

// TestExecuteWithinBounds: what a prompt or content item reasonably does
// (a range over a thousand items, a few KiB of output) runs as before.
func TestExecuteWithinBounds(t *testing.T) {
	items := make([]any, 1000)
	for i := range items {
		items[i] = map[string]any{"name": "item", "n": i}
	}
	tpl, err := Parse("t", `{{range $i, $e := .items}}{{if $i}}, {{end}}{{$e.name}} {{$e.n}}{{end}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tpl.Execute(&b, map[string]any{"items": items}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "item 0, item 1, ") || !strings.HasSuffix(b.String(), "item 999") {
		t.Errorf("got %.60q...", b.String())
	}
}
