package ui_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleToolExamples: a tool's page shows who may call it and its
// own examples, each of which fills the try-it form.
func TestConsoleToolExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	c := newConsole(t, nil)
	b := newBrowser(t, 2*time.Minute)
	b.open(t, c.URL+"/#/tools/flaky")
	b.wait(t, "the flaky form", `!!document.querySelector('.schema-form [name="n"]')`, wait)
	if got := b.text(t, "#tool-callers"); got != "direct, program" {
		t.Errorf("callers = %q, want direct, program", got)
	}
	b.do(t, "click Example 2", chromedp.Click(chromedp.CSS(`#tool-examples [data-example="1"]`)))
	b.wait(t, "the example in the form", `document.querySelector('.schema-form [name="n"]').value === "7"`, wait)
	b.route(t, "#/tools/purge_rows")
	b.wait(t, "the purge form", `!!document.querySelector('.schema-form select[name="table"]')`, wait)
	if got := b.text(t, "#tool-callers"); got != "direct" {
		t.Errorf("callers of a confirm tool = %q, want direct", got)
	}
	b.wait(t, "no examples for a tool without", `!document.querySelector("#tool-examples")`, wait)
}
