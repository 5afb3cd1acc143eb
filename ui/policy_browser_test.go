package ui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wieldhq/wield/policy"
)

// TestConsolePolicies: with Cedar policies, the console lists only the
// tools the policies let its caller call, and a dry run shows the
// decision with the policy that made it.
func TestConsolePolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	src := `@id("everyone") permit(principal, action, resource);
@id("no-calculator") forbid(principal, action, resource == Tool::"calculator");`
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		t.Fatal(err)
	}
	c := newConsoleWith(t, consoleOptions{policy: set})
	b := newBrowser(t, 2*time.Minute)
	b.open(t, c.URL+"/#/tools")
	b.wait(t, "the tool list", `document.querySelectorAll(".tool-item").length > 10`, wait)
	names := b.text(t, "main")
	if strings.Contains(names, "calculator") || !strings.Contains(names, "echo") {
		t.Errorf("the tool list shows calculator %v, echo %v; want echo only", strings.Contains(names, "calculator"), strings.Contains(names, "echo"))
	}
	b.route(t, "#/tools/echo")
	b.wait(t, "the echo form", `!!document.querySelector('.schema-form [name="message"]')`, wait)
	b.do(t, "type", chromedp.SendKeys(chromedp.CSS(`.schema-form [name="message"]`), "hi"))
	b.do(t, "click Dry run", chromedp.Click(chromedp.CSS("#dry-run")))
	b.wait(t, "the dry run", `!!document.querySelector(".result-box.dry")`, wait)
	if report := b.text(t, ".result-box.dry"); !strings.Contains(report, "allow, by everyone") {
		t.Errorf("the dry run lacks the policy decision:\n%s", report)
	}
}
