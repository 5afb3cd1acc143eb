package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/limit"
)

// gate is a tool that holds its calls until the test opens it, so that
// the limiter has calls in flight and queued to show. Every wait on it is
// bounded by the call's context.
type gate struct{ open chan struct{} }

func (g *gate) tool() *wield.Tool {
	t := wield.Func("hold", "Hold until the test lets go.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-g.open:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	t.Category = "slow"
	return t
}

// request sends a request to the console's API with a key and returns the
// status and body (status 0 and the error's text when it failed). It may
// be called from any goroutine.
func request(_ *testing.T, ctx context.Context, method, url, key, body string) (int, string) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestConsolePagesInBrowser walks the pages an operator expects beside the
// tools and calls: toolsets and agents, the limiter live, API keys (made,
// shown once, revoked), who asked for a pending call and whether they
// wait, the approval as its own segment of a call, the live feed's filter
// and pause, and a read-only key that sees Try it off and why.
func TestConsolePagesInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	file := filepath.Join(t.TempDir(), "keys.json")
	admin, adminKey, err := httpapi.CreateKey(file, "admin", httpapi.RightCall, nil, httpapi.RightApprove, httpapi.RightKeys)
	if err != nil {
		t.Fatal(err)
	}
	reader, _, err := httpapi.CreateKey(file, "dashboard", httpapi.RightRead, []string{"basics"})
	if err != nil {
		t.Fatal(err)
	}
	reviewer, _, err := httpapi.CreateKey(file, "reviewer", httpapi.RightApprove, nil)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := httpapi.NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{open: make(chan struct{})}
	lim, err := limit.New(limit.Config{MaxConcurrent: 4, QueueSize: 10, Buckets: map[string]limit.Bucket{"slow": {Limit: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	c := newConsoleWith(t, consoleOptions{keys: ring, limiter: lim, agents: []string{"helper"}, setup: func(reg *wield.Registry) {
		reg.MustRegister(g.tool())
		for _, ts := range []wield.Toolset{
			{Name: "basics", Description: "Everyday tools", Tools: []string{"echo", "calculator", "current_time"}},
			{Name: "danger", Description: "Needs a person \u001b[31m\u202eon purpose", Tools: []string{"purge_rows"}},
		} {
			if err := reg.DefineToolset(ts); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := reg.CreateToolkit("helper", "echo", "flaky"); err != nil {
			t.Fatal(err)
		}
	}})
	b := newBrowser(t, 4*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	b.open(t, c.URL+"/#/toolsets")
	b.wait(t, "the key dialog", `document.querySelector("#key-dialog").open`, wait)
	b.do(t, "the admin key", chromedp.SendKeys(chromedp.CSS("#key-input"), admin), chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)))

	t.Run("toolsets and agents", func(t *testing.T) {
		b.wait(t, "the toolsets", `document.querySelectorAll("article.toolset").length === 2 && document.querySelectorAll("article.agent").length === 1`, wait)
		if got := b.text(t, `article.toolset[data-name="basics"]`); !strings.Contains(got, "/mcp/basics") || !strings.Contains(got, "calculator") || !strings.Contains(got, "3 tools") {
			t.Errorf("the basics toolset reads %q; want its endpoint and its three tools", got)
		}
		// Text from the server is text, its controls made visible.
		if got := b.text(t, `article.toolset[data-name="danger"] p`); got != `Needs a person \x1b[31m\u202eon purpose` {
			t.Errorf("a description with controls reads %q; want them escaped", got)
		}
		if n := mustEval[float64](t, b, `document.querySelectorAll("article.toolset *:not(a):not(span):not(h3):not(p):not(header):not(code):not(ul):not(li)").length`); n != 0 {
			t.Errorf("%v unexpected elements in the toolsets' cards", n)
		}
		if got := b.text(t, `article.agent[data-name="helper"]`); !strings.Contains(got, "echo") || !strings.Contains(got, "flaky") || strings.Contains(got, "calculator") {
			t.Errorf("the helper agent reads %q; want echo and flaky only", got)
		}
		if got := b.text(t, "#who"); got != "admin" {
			t.Errorf("the header names the key %q; want admin", got)
		}
		b.shot(t, "toolsets")
	})

	t.Run("limiter live", func(t *testing.T) {
		b.route(t, "#/limiter")
		b.wait(t, "the limiter", `!!document.querySelector(".stat-cards .lim-current")`, wait)
		done := make(chan struct{}, 3)
		for range 3 {
			go func() {
				defer func() { done <- struct{}{} }()
				_, _ = c.eng.Call(ctx, wield.Call{Tool: "hold", Arguments: json.RawMessage(`{}`)})
			}()
		}
		// No reload: the page reads the limiter every second.
		b.wait(t, "one in flight and two queued in the slow bucket", `(() => {
			const row = document.querySelector('tr[data-bucket="slow"]');
			return !!row && row.cells[1].textContent.includes("1 / 1") && row.cells[2].textContent === "2" })()`, wait)
		if got := b.text(t, ".lim-queue .stat-value"); got != "2" {
			t.Errorf("queued card = %q, want 2", got)
		}
		b.wait(t, "the lines drawn", `document.querySelector("svg.lim-lines path.lim-q-line")?.getAttribute("d")?.includes("L")`, wait)
		b.shot(t, "limiter")
		close(g.open)
		for range 3 {
			select {
			case <-done:
			case <-ctx.Done():
				t.Fatal("the held calls did not end")
			}
		}
		b.wait(t, "the bucket empty again", `(() => { const row = document.querySelector('tr[data-bucket="slow"]');
			return row.cells[2].textContent === "0" && row.cells[4].textContent === "3" })()`, wait)
	})

	t.Run("keys", func(t *testing.T) {
		b.route(t, "#/keys")
		b.wait(t, "the keys", `document.querySelectorAll("table.keys tbody tr").length === 3`, wait)
		// The admin key lacks workflow and metrics: it cannot grant them.
		got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]bool](`["call","workflow","metrics","keys"].map((r) => document.querySelector("#right-" + r).disabled)`))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != "[false true true false]" {
			t.Errorf("rights disabled (call, workflow, metrics, keys) = %v; want only those the key lacks", got)
		}
		if body := b.text(t, "main"); strings.Contains(body, "sha256") || strings.Contains(body, admin) {
			t.Error("the keys page shows a hash or a secret")
		}
		b.do(t, "make a key", chromedp.SendKeys(chromedp.CSS("#key-name"), "ci-bot"), chromedp.Click(chromedp.CSS("#right-call")),
			chromedp.Click(chromedp.CSS("#ts-basics")), chromedp.Click(chromedp.CSS("#key-create")))
		b.wait(t, "the secret, once", `/wield_[A-Za-z0-9_-]{20,}/.test(document.querySelector(".secret-box pre")?.textContent || "")`, wait)
		b.wait(t, "the new key listed", `document.querySelectorAll("table.keys tbody tr").length === 4`, wait)
		secret := strings.TrimSpace(b.text(t, ".secret-box pre"))
		status, body := request(t, ctx, "GET", c.URL+"/v1/whoami", secret, "")
		if status != 200 || !strings.Contains(body, `"rights":["read","call"],"toolsets":["basics"]`) {
			t.Errorf("whoami with the key made in the console: %d %s", status, body)
		}
		b.shot(t, "keys-created")
		b.route(t, "#/tools")
		b.route(t, "#/keys")
		b.wait(t, "the keys again, without the secret", `document.querySelectorAll("table.keys tbody tr").length === 4 && !document.querySelector(".secret-box")`, wait)
		sel := `tr:has(td:first-child:not(:empty)) button[aria-label="Revoke ci-bot"]`
		b.do(t, "arm the revoke", chromedp.Click(chromedp.CSS(sel)))
		b.wait(t, "the revoke armed", fmt.Sprintf(`document.querySelector(%q).dataset.armed === "1"`, sel), wait)
		b.do(t, "revoke", chromedp.Click(chromedp.CSS(sel)))
		b.wait(t, "the key revoked", `[...document.querySelectorAll("table.keys tbody tr.revoked")].some((r) => r.textContent.includes("ci-bot"))`, wait)
		if status, body := request(t, ctx, "GET", c.URL+"/v1/whoami", secret, ""); status != 401 {
			t.Errorf("the revoked key: %d %s; want 401", status, body)
		}
		b.shot(t, "keys")
	})

	var callID string
	t.Run("who asked and who waits", func(t *testing.T) {
		b.route(t, "#/approvals")
		b.wait(t, "the empty inbox", `document.querySelector(".approvals .empty") !== null`, wait)
		// A caller that names only its user, with the admin key; and one
		// that leaves while it waits.
		answer := make(chan string, 1)
		go func() {
			_, body := request(t, ctx, "POST", c.URL+"/v1/tools/purge_rows/call", admin, `{"arguments":{"table":"sessions"},"caller":{"user_id":"ada"}}`)
			answer <- body
		}()
		lctx, leave := context.WithCancel(ctx)
		go request(t, lctx, "POST", c.URL+"/v1/tools/purge_rows/call", admin, `{"arguments":{"table":"audit"},"caller":{"id":"agent-9","type":"conversation_agent"}}`)
		b.wait(t, "two cards", `document.querySelectorAll("article.approval").length === 2`, wait)
		leave()
		b.wait(t, "who waits on each", `(() => { const w = [...document.querySelectorAll("article.approval .waits")].map((p) => p.dataset.waits).sort().join();
			return w === "here,none" })()`, wait)
		card := `article.approval:has(.waits[data-waits="here"])`
		if got := b.text(t, card+" .asked-user"); got != "ada" {
			t.Errorf("the user shown = %q, want ada", got)
		}
		if got := b.text(t, card+" .asked-api-key"); got != "key:"+adminKey.ID+" (admin)" {
			t.Errorf("the key shown = %q, want key:%s (admin)", got, adminKey.ID)
		}
		if strings.Contains(b.text(t, card+" dl"), "—") {
			t.Errorf("the card says %q: a caller shown as —", b.text(t, card+" dl"))
		}
		// The admin key asked for both: it may not decide them, and is told why.
		b.wait(t, "its own calls off", `[...document.querySelectorAll("article.approval")].every((a) =>
			a.querySelector("button.approve").disabled && (a.querySelector(".decide-off")?.textContent || "").includes("This key asked for this call"))`, wait)
		b.shot(t, "approvals-who")
		// The admin key asked: the reviewer decides, with a note.
		var list struct {
			Approvals []wield.Approval `json:"approvals"`
		}
		_, body := request(t, ctx, "GET", c.URL+"/v1/approvals", reviewer, "")
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		for _, a := range list.Approvals {
			verb := "deny"
			if strings.Contains(string(a.Arguments), "sessions") {
				verb, callID = "approve", a.CallID
			}
			if status, body := request(t, ctx, "POST", c.URL+"/v1/approvals/"+a.ID+"/"+verb, reviewer, `{"digest":"`+a.Digest+`","note":"checked with ops"}`); status != 200 {
				t.Fatalf("%s: %d %s", verb, status, body)
			}
		}
		select {
		case body := <-answer:
			if !strings.Contains(body, `"ok":true`) {
				t.Fatalf("the approved call: %s", body)
			}
		case <-ctx.Done():
			t.Fatal("the approved call did not return")
		}
		b.wait(t, "the inbox empty", `document.querySelector(".approvals .empty") !== null`, wait)
	})

	t.Run("approval in the call", func(t *testing.T) {
		c.flush(t)
		b.route(t, "#/calls/"+callID)
		b.wait(t, "the approval segment", `!!document.querySelector(".timeline .tl-approval") && !!document.querySelector(".approval-facts")`, wait)
		if got := b.text(t, ".approval-facts .decided-by"); !strings.Contains(got, "(reviewer)") {
			t.Errorf("approved by %q; want the reviewer key", got)
		}
		if got := b.text(t, ".approval-facts .decided-note"); got != "checked with ops" {
			t.Errorf("note %q", got)
		}
		if got := b.text(t, ".timeline-legend"); !strings.Contains(got, "waiting for approval (approved)") {
			t.Errorf("legend %q; want the approval wait named", got)
		}
		b.shot(t, "call-approval")
	})

	t.Run("live filter and pause", func(t *testing.T) {
		for i := range 4 {
			if _, err := c.eng.Call(ctx, wield.Call{Tool: "flaky", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}); err != nil {
				t.Fatal(err)
			}
		}
		b.route(t, "#/live")
		b.wait(t, "the feed", `document.querySelectorAll("table.live tbody tr").length >= 6`, wait)
		b.do(t, "filter on flaky errors", chromedp.SendKeys(chromedp.CSS("#l-tool"), "flaky"),
			chromedp.SetValue(chromedp.CSS("#l-status"), "error"))
		b.eval(t, `document.querySelector("#l-status").dispatchEvent(new Event("change"))`)
		b.wait(t, "two failed flaky calls", `(() => { const rows = [...document.querySelectorAll("table.live tbody tr")];
			return rows.length === 2 && rows.every((r) => r.textContent.includes("flaky") && r.querySelector(".pill.err")) })()`, wait)
		if !strings.Contains(mustEval[string](t, b, `location.hash`), "status=error") {
			t.Errorf("the filter is not in the address: %s", mustEval[string](t, b, `location.hash`))
		}
		b.shot(t, "live-filtered")
		b.do(t, "pause", chromedp.Click(chromedp.CSS("#live-pause")))
		for i := range 3 {
			if _, err := c.eng.Call(ctx, wield.Call{Tool: "flaky", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, 11+2*i))}); err != nil {
				t.Fatal(err)
			}
		}
		// Each call is two events (started, failed): six arrived, none shown.
		b.wait(t, "the count of what arrived", `Number(document.querySelector(".pause-state").dataset.arrived) >= 6`, wait)
		if n := mustEval[float64](t, b, `document.querySelectorAll("table.live tbody tr").length`); n != 2 {
			t.Errorf("paused, the feed shows %v rows; want the 2 it showed", n)
		}
		b.shot(t, "live-paused")
		b.do(t, "resume", chromedp.Click(chromedp.CSS("#live-pause")))
		b.wait(t, "the new calls shown", `document.querySelectorAll("table.live tbody tr").length === 5`, wait)
	})

	t.Run("phone and dark", func(t *testing.T) {
		b.do(t, "phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		b.route(t, "#/limiter")
		b.wait(t, "the limiter on a phone", `!!document.querySelector('tr[data-bucket="slow"]')`, wait)
		if w := mustEval[float64](t, b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("the limiter is %v px wide on a 390 px phone", w)
		}
		b.shot(t, "phone-limiter")
		b.route(t, "#/keys")
		b.wait(t, "the keys on a phone", `document.querySelectorAll("table.keys tbody tr").length === 4`, wait)
		b.shot(t, "phone-keys")
		b.do(t, "desktop viewport", chromedp.ResetViewport())
		b.do(t, "dark", darkScheme("dark"))
		defer b.do(t, "light", darkScheme("light"))
		b.route(t, "#/toolsets")
		b.wait(t, "the toolsets", `document.querySelectorAll("article.toolset").length === 2`, wait)
		b.shot(t, "dark-toolsets")
		b.route(t, "#/limiter")
		b.wait(t, "the limiter", `!!document.querySelector('tr[data-bucket="slow"]')`, wait)
		b.shot(t, "dark-limiter")
	})

	t.Run("read-only key", func(t *testing.T) {
		b.eval(t, fmt.Sprintf(`sessionStorage.setItem("wield.apiKey", %q); location.hash = "#/tools/echo"`, reader))
		b.do(t, "reload", chromedp.Reload())
		b.wait(t, "the echo form", `!!document.querySelector('.schema-form [name="message"]')`, wait)
		b.wait(t, "Try it off, and why", `document.querySelector("#try-it").disabled && !document.querySelector("#try-off").hidden`, wait)
		if got := b.text(t, "#try-off"); !strings.Contains(got, "dashboard") || !strings.Contains(got, "“call” right") {
			t.Errorf("the reason reads %q; want the key and the call right", got)
		}
		b.shot(t, "tool-read-only")
		b.route(t, "#/keys")
		b.wait(t, "the keys refused, and why", `(document.querySelector(".notice")?.textContent || "").includes("“keys” right")`, wait)
		b.route(t, "#/toolsets")
		b.wait(t, "its own toolset only", `document.querySelectorAll("article.toolset").length === 1 && !!document.querySelector('article.toolset[data-name="basics"]')`, wait)
	})

	t.Run("keys on a server without keys", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "keys.json")
		ring, err := httpapi.NewKeyring(empty)
		if err != nil {
			t.Fatal(err)
		}
		open := newConsole(t, ring)
		b.eval(t, `sessionStorage.clear()`)
		b.open(t, open.URL+"/#/keys")
		b.wait(t, "the note", `(document.querySelector(".keyless")?.textContent || "").includes("without API keys") && !document.querySelector(".key-form")`, wait)
		if got := b.text(t, ".keyless pre"); !strings.Contains(got, "wield keys create") {
			t.Errorf("the note's command = %q", got)
		}
		b.shot(t, "keys-keyless")
	})
}

// darkScheme emulates the prefers-color-scheme of the page.
func darkScheme(v string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
		return err
	})
}

// mustEval evaluates a JavaScript expression for its value.
func mustEval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("eval %s: %v", js, err)
	}
	return v
}
