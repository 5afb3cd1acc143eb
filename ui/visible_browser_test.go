package ui_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// The console shows control characters and bidirectional overrides from the
// API as visible escapes, in text h puts on the page and in titles, so an
// argument "…/\u202etxt.sdrawkcab" never reads as "…/backwards.txt".
func TestConsoleShowsControlsVisibly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	c := newConsole(t, nil)
	b := newBrowser(t, 2*time.Minute)
	b.open(t, c.URL+"/#/tools")
	b.wait(t, "the tool list", `document.querySelectorAll(".tool-item").length > 0`, wait)

	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`import("./dom.js").then(({ h, visible }) => {
		const hostile = "Reads \u001b]0;pwned\u0007 files\rEVIL /tmp/\u202etxt.sdrawkcab\n\t\u009b31m \u2066x\u2069 ünï";
		const el = h("p", { title: hostile }, hostile);
		return [visible(hostile), el.textContent, el.title];
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	want := `Reads \x1b]0;pwned\x07 files\rEVIL /tmp/\u202etxt.sdrawkcab` + "\n\t" + `\u009b31m \u2066x\u2069 ünï`
	if diff := cmp.Diff([]string{want, want, want}, got); diff != "" {
		t.Errorf("visible, text and title (-want +got):\n%s", diff)
	}
}
