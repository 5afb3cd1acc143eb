package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/sqlite"
	"github.com/wieldhq/wield/ui"
)

// repoRoot is the module's root, found from this file's place.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find the test's own file")
	}
	return filepath.Dir(filepath.Dir(file))
}

// chromium returns the path of Debian's chromium, installed by
// scripts/chromium-up when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "chromium-up"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/chromium-up: %v\n%s", err, stderr.String())
	}
	path := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(path, '\n'); i >= 0 {
		path = path[i+1:]
	}
	return path
}

// screenshots is where the pages' pictures go: $WIELD_ARTIFACTS/ui, or
// ui/testdata/screenshots.
func screenshots(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "ui", "testdata", "screenshots")
	if a := os.Getenv("WIELD_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "ui")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// PurgeInput is the input of the test's tool that needs approval; its
// fields cover the kinds the form draws.
type PurgeInput struct {
	Table     string   `json:"table" description:"Which table to purge" enum:"sessions,events,audit"`
	OlderThan int      `json:"older_than_days,omitempty" description:"Only rows older than this many days" minimum:"1" maximum:"3650" default:"30"`
	DryRun    bool     `json:"dry_run,omitempty" description:"Count the rows without deleting them"`
	Keep      []string `json:"keep,omitempty" description:"IDs of rows to keep"`
}

// purgeTool needs a person's approval before it runs.
func purgeTool() *wield.Tool {
	t := wield.Func("purge_rows", "Delete old rows from a table. Destructive: a person must approve each call.",
		func(_ context.Context, in PurgeInput) (map[string]any, error) {
			return map[string]any{"table": in.Table, "deleted": 42, "dry_run": in.DryRun}, nil
		})
	t.Category = wield.CategoryDatabase
	t.Tags = []string{"admin"}
	t.Annotations = wield.Annotations{Destructive: true}
	t.Permission = wield.PermissionConfirm
	return t
}

// flakyTool fails on odd numbers, so the statistics have errors to show.
func flakyTool() *wield.Tool {
	type in struct {
		N int `json:"n" description:"A number; odd ones fail"`
	}
	t := wield.Func("flaky", "Fail on odd numbers, for the statistics.", func(_ context.Context, x in) (int, error) {
		if x.N%2 == 1 {
			return 0, errors.New("odd number")
		}
		return x.N, nil
	})
	t.Category = wield.CategoryCustom
	t.Tags = []string{"test"}
	t.Examples = []json.RawMessage{json.RawMessage(`{"n":2}`), json.RawMessage(`{"n":7}`)}
	return t
}

// console is one server with the API and the console, as cmd/wield would
// compose them.
type console struct {
	URL   string
	store *sqlite.Store
	eng   *engine.Engine
	inbox *approval.Inbox
}

func newConsole(t *testing.T, keys *httpapi.Keyring) *console {
	t.Helper()
	return newConsoleWith(t, consoleOptions{keys: keys})
}

// consoleOptions shape a console beyond its keys: more tools, toolsets
// and agents (setup), a limiter of the test's own, agents to list.
type consoleOptions struct {
	keys    *httpapi.Keyring
	setup   func(*wield.Registry)
	limiter limit.Limiter
	agents  []string
	policy  wield.Policy
}

func newConsoleWith(t *testing.T, o consoleOptions) *console {
	t.Helper()
	keys := o.keys
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	tools, err := builtin.All(builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(tools...)
	reg.MustRegister(purgeTool(), flakyTool())
	if o.setup != nil {
		o.setup(reg)
	}
	inbox := approval.New(store, &approval.Options{Poll: 100 * time.Millisecond})
	t.Cleanup(func() { inbox.Close() })
	eng := engine.New(reg, &engine.Options{Store: store, Approver: inbox, Limiter: o.limiter, Policy: o.policy})
	t.Cleanup(func() { eng.Close(context.Background()) })
	ictx, stopResume := context.WithCancel(context.Background())
	t.Cleanup(stopResume)
	if _, err := inbox.Resume(ictx, eng); err != nil { // as wield serve does: callers that left are known
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Options{Engine: eng, Store: store, Approvals: inbox, Keys: keys, Heartbeat: time.Second, Agents: o.agents})
	if err != nil {
		t.Fatal(err)
	}
	api := srv.Handler()
	mux := http.NewServeMux()
	mux.Handle("/v1/", api)
	mux.Handle("/openapi.json", api)
	mux.Handle("/healthz", api)
	mux.Handle("/", ui.Handler())
	hs := httptest.NewUnstartedServer(mux)
	hs.Start() // httptest listens on 127.0.0.1
	t.Cleanup(hs.Close)
	t.Cleanup(func() { srv.Close() }) // ends the event streams before hs.Close waits for them
	return &console{URL: hs.URL, store: store, eng: eng, inbox: inbox}
}

// seed makes calls so that history and statistics have something to show.
func (c *console) seed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	calls := []wield.Call{
		{Tool: "echo", Arguments: json.RawMessage(`{"message":"hello"}`), Caller: wield.ForConversation("agent-1", "conv-1")},
		{Tool: "calculator", Arguments: json.RawMessage(`{"expression":"(2 + 3) * 4"}`), Caller: wield.ForConversation("agent-1", "conv-1")},
		{Tool: "calculator", Arguments: json.RawMessage(`{"expression":"2 +"}`), Caller: wield.ForConversation("agent-1", "conv-1")},
		{Tool: "echo", Arguments: json.RawMessage(`{}`), Caller: wield.ForConversation("agent-2", "conv-2")},
	}
	for i := range 12 {
		calls = append(calls, wield.Call{Tool: "flaky", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Caller: wield.ForConversation("agent-2", "conv-2")})
	}
	for _, call := range calls {
		if _, err := c.eng.Call(ctx, call); err != nil {
			t.Fatal(err)
		}
	}
	c.flush(t)
}

func (c *console) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// browser is one headless chromium tab, with the page's uncaught
// exceptions and console errors collected.
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	errs []string
	dir  string
}

func newBrowser(t *testing.T, timeout time.Duration) *browser {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.WindowSize(1366, 900),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("lang", "en-US"),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	b := &browser{ctx: bctx, dir: screenshots(t)}
	// Start the browser, then follow its console.
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	msgs := chromedp.Console(bctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			// A refused request is logged by the browser itself (source
			// "network"); the key test causes some on purpose.
			if m.IsException() || (m.Type == chromedp.ConsoleError && m.Source != "network") {
				b.mu.Lock()
				b.errs = append(b.errs, m.String())
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, e := range b.errs {
			t.Errorf("browser console: %s", e)
		}
	})
	return b
}

// do runs actions, failing the test with what step failed.
func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.shot(t, "failed-"+strings.ReplaceAll(what, " ", "-"))
		t.Fatalf("%s: %v", what, err)
	}
}

// wait waits, at most d, for a JavaScript expression to be true.
func (b *browser) wait(t *testing.T, what, expr string, d time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		b.shot(t, "failed-"+strings.ReplaceAll(what, " ", "-"))
		t.Fatalf("wait for %s: %v", what, err)
	}
}

// text returns the text of the first element a selector finds ("" if none).
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// shot saves a screenshot of the whole page as NAME.png.
func (b *browser) shot(t *testing.T, name string) {
	t.Helper()
	// Let the last frame settle (fonts, a transition) before the picture.
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	b.do(t, "open "+url, chromedp.Navigate(url))
}

// route goes to a route of the loaded console without reloading it.
func (b *browser) route(t *testing.T, hash string) {
	t.Helper()
	b.eval(t, fmt.Sprintf(`location.hash = %q`, hash))
}

// eval runs JavaScript for its effect.
func (b *browser) eval(t *testing.T, js string) {
	t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](js)); err != nil {
		t.Fatalf("eval %s: %v", js, err)
	}
}

const wait = 15 * time.Second

func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	c := newConsole(t, nil)
	c.seed(t)
	b := newBrowser(t, 3*time.Minute)

	t.Run("tools", func(t *testing.T) {
		b.open(t, c.URL+"/#/tools")
		b.wait(t, "the tool list", `document.querySelectorAll(".tool-item").length > 10`, wait)
		b.wait(t, "the stream", `document.querySelector("#stream-state").dataset.state === "live"`, wait)
		b.shot(t, "tools")

		// The search narrows the list.
		b.do(t, "search", chromedp.SendKeys(chromedp.CSS(`input[type="search"]`), "calcul"))
		b.wait(t, "the search's result", `document.querySelectorAll(".tool-item").length === 1`, wait)
		if got := b.text(t, ".tool-item .tool-name"); !strings.Contains(got, "calculator") {
			t.Errorf("search for calcul lists %q, want calculator", got)
		}
		b.eval(t, `(() => { const s = document.querySelector('input[type="search"]'); s.value = ""; return s.dispatchEvent(new Event("input")) })()`)
		b.wait(t, "the whole list", `document.querySelectorAll(".tool-item").length > 10`, wait)
		// A tag filter keeps the tools that have it.
		b.do(t, "tag filter", chromedp.Click(chromedp.CSS(`.tags .chip[aria-pressed="false"]`)))
		b.wait(t, "the tag filter", `(() => { const tag = document.querySelector('.tags .chip[aria-pressed="true"]').textContent;
			const n = document.querySelectorAll(".tool-item").length; return n > 0 && n < 10 && !!tag })()`, wait)
		b.do(t, "clear the tag", chromedp.Click(chromedp.CSS(`.tags .chip[aria-pressed="true"]`)))
	})

	t.Run("try echo", func(t *testing.T) {
		b.route(t, "#/tools/echo")
		b.wait(t, "the echo form", `!!document.querySelector('.schema-form [name="message"]')`, wait)
		b.do(t, "fill the message", chromedp.SendKeys(chromedp.CSS(`.schema-form [name="message"]`), "hello from the console"))
		b.do(t, "click Try it", chromedp.Click(chromedp.CSS("#try-it")))
		b.wait(t, "the result", `!!document.querySelector(".result-box")`, wait)
		if ok := b.text(t, ".result-box .pill"); ok != "ok" {
			t.Fatalf("result status = %q, want ok (result: %s)", ok, b.text(t, ".result-box"))
		}
		if out := b.text(t, ".result-box pre.code"); !strings.Contains(out, `"message": "hello from the console"`) {
			t.Errorf("output = %s, want the message echoed and pretty-printed", out)
		}
		b.shot(t, "tool-echo-result")
	})

	t.Run("validation errors beside their fields", func(t *testing.T) {
		b.route(t, "#/tools/calculator")
		b.wait(t, "the calculator form", `!!document.querySelector('.schema-form [name="expression"]')`, wait)
		b.do(t, "click Try it with nothing", chromedp.Click(chromedp.CSS("#try-it")))
		b.wait(t, "the failed result", `document.querySelector(".result-box")?.dataset.ok === "false"`, wait)
		if got := b.text(t, ".result-box .pill"); got != "validation_error" {
			t.Errorf("error type shown = %q, want validation_error", got)
		}
		b.wait(t, "the field's error", `(() => { const i = document.querySelector('.schema-form [name="expression"]');
			const e = i.closest(".field").querySelector(".field-error");
			return i.getAttribute("aria-invalid") === "true" && !e.hidden && e.textContent.length > 0 })()`, wait)
		b.shot(t, "tool-calculator-validation")
	})

	t.Run("purge form", func(t *testing.T) {
		b.route(t, "#/tools/purge_rows")
		b.wait(t, "the purge form", `!!document.querySelector('.schema-form select[name="table"]')`, wait)
		// The default is filled in, the array is JSON text, the boolean a checkbox.
		if v := b.text(t, `.field-number .field-desc`); !strings.Contains(v, "≥ 1 · ≤ 3650") || !strings.Contains(strings.ToLower(v), "default: 30") {
			t.Errorf("number description = %q, want its bounds and default", v)
		}
		got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[
			document.querySelector('[name="older_than_days"]').value,
			document.querySelector('[name="keep"]').tagName,
			document.querySelector('[name="dry_run"]').type,
			String(document.querySelectorAll('[name="table"] option').length)]`))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"30", "TEXTAREA", "checkbox", "4"}; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("purge form fields = %v, want %v", got, want)
		}
		b.shot(t, "tool-purge-form")
	})

	t.Run("approve from the inbox", func(t *testing.T) {
		b.route(t, "#/approvals")
		b.wait(t, "the empty inbox", `document.querySelector(".approvals .empty") !== null`, wait)
		b.shot(t, "approvals-empty")

		type answer struct {
			res wield.Result
			err error
		}
		done := make(chan answer, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		go func() {
			body := `{"arguments":{"table":"sessions","older_than_days":90},"caller":{"id":"agent-7","type":"conversation_agent","conversation_id":"conv-9"}}`
			req, err := http.NewRequestWithContext(ctx, "POST", c.URL+"/v1/tools/purge_rows/call", strings.NewReader(body))
			if err != nil {
				done <- answer{err: err}
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			var a answer
			if resp.StatusCode != http.StatusOK {
				a.err = fmt.Errorf("status %d", resp.StatusCode)
			} else {
				a.err = json.NewDecoder(resp.Body).Decode(&a.res)
			}
			done <- a
		}()

		// No reload: the page hears of the request on the event stream.
		b.wait(t, "the approval to appear live", `document.querySelectorAll("article.approval").length === 1`, wait)
		b.wait(t, "the header's badge", `document.querySelector("#pending-badge").textContent === "1"`, wait)
		if args := b.text(t, "article.approval pre.code"); !strings.Contains(args, `"table": "sessions"`) {
			t.Errorf("approval arguments = %s, want the call's", args)
		}
		b.shot(t, "approvals-pending")
		select {
		case a := <-done:
			t.Fatalf("the call returned before approval: %+v %v", a.res, a.err)
		default:
		}
		b.do(t, "click Approve", chromedp.Click(chromedp.CSS("article.approval button.approve")))
		select {
		case a := <-done:
			if a.err != nil {
				t.Fatalf("call: %v", a.err)
			}
			if !a.res.OK {
				t.Fatalf("approved call failed: %s %s", a.res.ErrorType, a.res.Error)
			}
		case <-ctx.Done():
			t.Fatal("the approved call did not return")
		}
		b.wait(t, "the inbox to empty", `document.querySelector(".approvals .empty") !== null && document.querySelector("#pending-badge").hidden`, wait)
		b.wait(t, "the decision listed", `[...document.querySelectorAll("table .pill")].some((p) => p.textContent === "approved")`, wait)
		// The decider is who the server knows (the console, on a server
		// without keys), not a name the page chose.
		b.wait(t, "the decision by the console", `[...document.querySelectorAll("table td")].some((td) => td.textContent === "console")`, wait)

		// Deny, with a reason, which the caller gets.
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", c.URL+"/v1/tools/purge_rows/call", strings.NewReader(`{"arguments":{"table":"audit"}}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			var a answer
			a.err = json.NewDecoder(resp.Body).Decode(&a.res)
			done <- a
		}()
		b.wait(t, "the second approval", `document.querySelectorAll("article.approval").length === 1`, wait)
		b.do(t, "deny with a reason", chromedp.SendKeys(chromedp.CSS("article.approval input[data-reason]"), "not the audit table"),
			chromedp.Click(chromedp.CSS("article.approval button.deny")))
		select {
		case a := <-done:
			if a.err != nil {
				t.Fatalf("call: %v", a.err)
			}
			if a.res.OK || a.res.ErrorType != wield.ErrApprovalDenied || !strings.Contains(a.res.Error, "not the audit table") {
				t.Fatalf("denied call = ok %v, %s: %s; want approval_denied with the reason", a.res.OK, a.res.ErrorType, a.res.Error)
			}
		case <-ctx.Done():
			t.Fatal("the denied call did not return")
		}
		b.wait(t, "both decisions listed", `[...document.querySelectorAll("table .pill")].some((p) => p.textContent === "denied")`, wait)
		b.shot(t, "approvals-decided")
	})

	t.Run("live", func(t *testing.T) {
		b.route(t, "#/live")
		// The calls made in this page's life: echo, calculator, purge_rows.
		b.wait(t, "the live feed", `(() => { const t = document.querySelector("main table")?.textContent || "";
			return t.includes("purge_rows") && t.includes("echo") && t.includes("validation_error") })()`, wait)
		b.shot(t, "live")
	})

	t.Run("history and a call", func(t *testing.T) {
		c.flush(t)
		b.route(t, "#/calls")
		b.wait(t, "the history", `document.querySelectorAll("table.calls tbody tr").length >= 10`, wait)
		b.shot(t, "history")

		b.route(t, "#/calls?status=error&tool=flaky")
		b.wait(t, "the filtered history", `(() => { const rows = [...document.querySelectorAll("table.calls tbody tr")];
			return rows.length === 6 && rows.every((r) => r.textContent.includes("flaky") && r.querySelector(".pill.err")) })()`, wait)

		b.route(t, "#/calls")
		b.wait(t, "the history again", `document.querySelectorAll("table.calls tbody tr").length >= 10`, wait)
		b.do(t, "open a call", chromedp.Click(chromedp.CSS(`table.calls tbody tr:first-child td:last-child a`)))
		b.wait(t, "the call's page", `location.hash.startsWith("#/calls/") && !!document.querySelector(".stat-cards") && !!document.querySelector(".timeline")`, wait)
		if got := b.text(t, "main h1"); !strings.Contains(got, "purge_rows") {
			t.Errorf("newest call is %q, want purge_rows", got)
		}
		b.shot(t, "call-detail")

		// The record's arguments go back to the form (the newest call is the
		// denied one, on table audit; the other field gets its default).
		b.do(t, "try again", chromedp.Click(chromedp.CSS(`a.button[href="#/tools/purge_rows"]`)))
		b.wait(t, "the form filled from the record", `(() => { const s = document.querySelector('.schema-form select[name="table"]');
			return !!s && s.options[s.selectedIndex].textContent === "audit" && document.querySelector('[name="older_than_days"]').value === "30" })()`, wait)
	})

	t.Run("paging", func(t *testing.T) {
		// 50 a page: more calls make a second page.
		for i := range 50 {
			if _, err := c.eng.Call(context.Background(), wield.Call{Tool: "echo", Arguments: json.RawMessage(fmt.Sprintf(`{"message":"m%d"}`, i))}); err != nil {
				t.Fatal(err)
			}
		}
		c.flush(t)
		b.route(t, "#/calls?tool=echo")
		b.wait(t, "the first page", `document.querySelectorAll("table.calls tbody tr").length === 50`, wait)
		b.do(t, "older", chromedp.Click(chromedp.CSS(`.pager a:last-child`)))
		b.wait(t, "the second page", `(() => { const n = document.querySelectorAll("table.calls tbody tr").length;
			return location.hash.includes("cursor=") && n > 0 && n < 50 })()`, wait)
		b.do(t, "newer", chromedp.Click(chromedp.CSS(`.pager a:first-child`)))
		b.wait(t, "the first page again", `!location.hash.includes("cursor=") && document.querySelectorAll("table.calls tbody tr").length === 50`, wait)
	})

	t.Run("statistics", func(t *testing.T) {
		b.route(t, "#/stats")
		b.wait(t, "the charts", `document.querySelectorAll("svg.chart").length === 3 && document.querySelectorAll("svg.chart rect.bar-ok").length > 0`, wait)
		b.wait(t, "the error bars", `document.querySelectorAll("svg.chart rect.bar-err").length > 0`, wait)
		if got := b.text(t, ".stat-cards .stat:first-child .stat-value"); got == "" || got == "0" {
			t.Errorf("calls card = %q", got)
		}
		b.shot(t, "stats")
	})

	t.Run("dark scheme", func(t *testing.T) {
		scheme := func(v string) chromedp.Action[chromedp.Void] {
			return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
				return err
			})
		}
		b.do(t, "dark", scheme("dark"))
		defer b.do(t, "light", scheme("light"))
		b.wait(t, "the dark colours", `matchMedia("(prefers-color-scheme: dark)").matches`, wait)
		b.route(t, "#/calls")
		b.wait(t, "the history", `document.querySelectorAll("table.calls tbody tr").length >= 10`, wait)
		b.shot(t, "dark-history")
		b.route(t, "#/tools/echo")
		b.wait(t, "the echo form", `!!document.querySelector('.schema-form [name="message"]')`, wait)
		b.shot(t, "dark-tool")
	})

	t.Run("narrow screen", func(t *testing.T) {
		b.do(t, "phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		b.route(t, "#/tools/purge_rows")
		b.wait(t, "the tool on a phone", `!!document.querySelector('.schema-form select[name="table"]') && getComputedStyle(document.querySelector(".tool-side")).display === "none"`, wait)
		b.shot(t, "phone-tool")
		b.route(t, "#/stats")
		b.wait(t, "the charts on a phone", `document.querySelectorAll("svg.chart").length === 3`, wait)
		b.shot(t, "phone-stats")
		b.do(t, "desktop viewport", chromedp.ResetViewport())
	})
}

func TestConsoleAsksForKey(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	ring, err := httpapi.NewKeyring("", httpapi.ConfigKey(0, "s3cret-key"))
	if err != nil {
		t.Fatal(err)
	}
	c := newConsole(t, ring)
	b := newBrowser(t, 2*time.Minute)
	b.open(t, c.URL+"/#/tools")
	b.wait(t, "the key dialog", `document.querySelector("#key-dialog").open`, wait)
	b.shot(t, "key-dialog")
	b.do(t, "a wrong key", chromedp.SendKeys(chromedp.CSS("#key-input"), "nope"), chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)))
	b.wait(t, "the refusal", `document.querySelector("#key-dialog").open && !document.querySelector("#key-error").hidden`, wait)
	b.do(t, "the right key", chromedp.SendKeys(chromedp.CSS("#key-input"), "s3cret-key"), chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)))
	b.wait(t, "the tools", `!document.querySelector("#key-dialog").open && document.querySelectorAll(".tool-item").length > 10`, wait)
	// With a key the stream is read with fetch, which can send it.
	b.wait(t, "the stream with the key", `document.querySelector("#stream-state").dataset.state === "live"`, wait)
	if _, err := c.eng.Call(context.Background(), wield.Call{Tool: "echo", Arguments: json.RawMessage(`{"message":"keyed"}`)}); err != nil {
		t.Fatal(err)
	}
	b.route(t, "#/live")
	b.wait(t, "a live call through the keyed stream", `(document.querySelector("main table")?.textContent || "").includes("echo")`, wait)
	if k, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`sessionStorage.getItem("wield.apiKey")`)); err != nil || k != "s3cret-key" {
		t.Errorf("session key = %q, %v", k, err)
	}
}
