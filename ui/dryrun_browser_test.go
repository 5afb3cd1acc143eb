package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wieldhq/wield"
)

// TestConsoleDryRun: the try-it form's "Dry run" button shows what a call
// would do (approval needed and from whom, the limiter, the timeout; a
// validation error beside its field) and leaves no record and no approval.
func TestConsoleDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	c := newConsole(t, nil)
	b := newBrowser(t, 2*time.Minute)
	b.open(t, c.URL+"/#/tools/purge_rows")
	b.wait(t, "the purge form", `!!document.querySelector('.schema-form select[name="table"]')`, wait)
	b.eval(t, `(() => { const s = document.querySelector('select[name="table"]'); s.value = "0"; return s.dispatchEvent(new Event("change")) })()`)
	b.do(t, "click Dry run", chromedp.Click(chromedp.CSS("#dry-run")))
	b.wait(t, "the dry run", `!!document.querySelector(".result-box.dry")`, wait)
	if got := b.text(t, ".result-box.dry .dry-verdict"); got != "Would run once a person approves it" {
		t.Errorf("verdict = %q", got)
	}
	report := b.text(t, ".result-box.dry")
	for _, want := range []string{"needed, from a person, through the approval inbox", "would run now", "30.0 s (default)", `"older_than_days": 30`} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	b.shot(t, "tool-purge-dry-run")

	b.route(t, "#/tools/calculator")
	b.wait(t, "the calculator form", `!!document.querySelector('.schema-form [name="expression"]')`, wait)
	b.do(t, "dry run with nothing", chromedp.Click(chromedp.CSS("#dry-run")))
	b.wait(t, "the refused dry run", `document.querySelector(".result-box.dry")?.dataset.wouldRun === "false"`, wait)
	if got := b.text(t, ".result-box.dry .pill.err"); got != "validation_error" {
		t.Errorf("error type shown = %q, want validation_error", got)
	}
	b.wait(t, "the field's error", `(() => { const i = document.querySelector('.schema-form [name="expression"]');
		return i.getAttribute("aria-invalid") === "true" })()`, wait)

	ctx := context.Background()
	c.flush(t)
	if page, err := c.store.Calls(ctx, wield.CallQuery{}); err != nil || len(page.Records) != 0 {
		t.Errorf("records after dry runs: %d, %v", len(page.Records), err)
	}
	if p, err := c.store.Approvals(ctx, wield.ApprovalPending); err != nil || len(p) != 0 {
		t.Errorf("pending approvals after a dry run: %d, %v", len(p), err)
	}
}
