//go:build unix

package journeys

// A hostile page on the same machine: the user runs `wield serve` without
// keys (so on loopback only) and, in the same browser, opens a page served
// from another loopback port (a dev server, a notebook, a page some tool
// started). That page is another origin, but Chrome marks its requests
// Sec-Fetch-Site: same-site, and a loopback Origin once passed the guard.
// Every request the page can make without a CORS preflight, and the JSON
// one that needs it, must change nothing.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// touchTool writes its message to ran.txt in the server's folder, with no
// approval: the tool a page would like to run.
const touchTool = `name: touch
description: Append a line to ran.txt
parameters:
  - name: message
    type: string
entry:
  type: command
  command: ["sh", "-c", "echo \"$0\" >> ran.txt", "{message}"]
`

// hostilePage tries every way a page has to send a POST to target, for
// each of the given paths and JSON bodies, and sets the title to "done"
// when every attempt has settled.
const hostilePage = `<!doctype html><html><body><script>
const target = %q;
const attempts = %s;
const settle = [];
let n = 0;
function form(path, enctype, name, value) {
  const frame = document.createElement("iframe");
  frame.name = "f" + (n++);
  document.body.appendChild(frame);
  const f = document.createElement("form");
  f.method = "POST"; f.action = target + path; f.enctype = enctype; f.target = frame.name;
  const i = document.createElement("input");
  i.type = "hidden"; i.name = name; i.value = value;
  f.appendChild(i); document.body.appendChild(f);
  settle.push(new Promise(r => { frame.onload = r; setTimeout(r, 3000); }));
  f.submit();
}
for (const [path, body] of attempts) {
  const url = target + path;
  const swallow = p => settle.push(p.catch(() => {}));
  swallow(fetch(url, {method: "POST", mode: "no-cors", body}));
  swallow(fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}));
  swallow(fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body}));
  swallow(fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": "multipart/form-data; boundary=x"}, body}));
  swallow(fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body}));
  navigator.sendBeacon(url, body);
  navigator.sendBeacon(url, new Blob([body], {type: "text/plain"}));
  // A text/plain form sends name=value: the JSON is cut at its last '"'.
  const cut = body.lastIndexOf('"');
  form(path, "text/plain", body.slice(0, cut), body.slice(cut));
  form(path, "application/x-www-form-urlencoded", body, "");
}
Promise.all(settle).then(() => setTimeout(() => { document.title = "done"; }, 500));
</script></body></html>`

func TestJourneyAttackBrowserOtherLoopbackPort(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	chrome := journeyChromium(t)
	u := newUser(t)
	u.write("tools/touch.yaml", touchTool)
	u.write("tools/mark.yaml", markTool)
	s := u.serve("--tools", "tools")

	// A call of mark waits for a person; the page knows its ID and digest.
	abandon(t, s, "mark", `{"message":"held"}`)
	id := pendingIDs(t, u, 1)[0]
	code, body := s.do("GET", "/v1/approvals/"+id, "")
	var pending struct {
		Digest string `json:"digest"`
	}
	if code != 200 || json.Unmarshal(body, &pending) != nil || pending.Digest == "" {
		t.Fatalf("GET /v1/approvals/%s: %d %s", id, code, body)
	}

	attempts, _ := json.Marshal([][2]string{
		{"/v1/tools/touch/call", `{"arguments":{"message":"page"}}`},
		{"/v1/batch", `{"calls":[{"tool":"touch","arguments":{"message":"batch"}}]}`},
		{"/v1/artifacts", `{"id":"planted","content":"from a page"}`},
		{"/v1/approvals/" + id + "/approve", `{"digest":"` + pending.Digest + `"}`},
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"touch","arguments":{"message":"mcp"}}}`},
	})
	page := fmt.Sprintf(hostilePage, s.url, attempts)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	defer evil.Close()
	_, port, _ := strings.Cut(strings.TrimPrefix(evil.URL, "http://"), ":")

	ctx := journeyBrowser(t, chrome)
	for _, origin := range []string{evil.URL, "http://localhost:" + port} {
		if err := chromedp.Do(ctx, chromedp.Navigate(origin+"/")); err != nil {
			t.Fatalf("open the page at %s: %v", origin, err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.title === "done"`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("the page at %s did not finish: %v", origin, err)
		}
	}
	// Beacons are sent after the page is done with them: give them time.
	time.Sleep(time.Second)

	if got := ranLines(t, u); got != "" {
		t.Errorf("a page of another loopback port ran tools; ran.txt:\n%s", got)
	}
	var after struct {
		Status string `json:"status"`
	}
	if code, body := s.do("GET", "/v1/approvals/"+id, ""); code != 200 || json.Unmarshal(body, &after) != nil || after.Status != "pending" {
		t.Errorf("the approval after the page: %d %s; want still pending", code, body)
	}
	if code, body := s.do("GET", "/v1/artifacts/planted", ""); code != http.StatusNotFound {
		t.Errorf("the page planted an artifact: %d %s", code, body)
	}

	// The console's own origin still works from the same browser: the
	// same JSON fetch, made by a page of the server, runs the tool.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/")); err != nil {
		t.Fatalf("open the console: %v", err)
	}
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/v1/tools/touch/call", {method: "POST", headers: {"Content-Type": "application/json"}, body: '{"arguments":{"message":"console"}}'}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil || status != 200 {
		t.Fatalf("a fetch from the server's own page: %d %v", status, err)
	}
	if got := ranLines(t, u); got != "console\n" {
		t.Errorf("ran.txt after the console's call: %q, want only the console's line", got)
	}
}

// journeyChromium is Debian's chromium, installed by scripts/chromium-up
// when it is missing.
func journeyChromium(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(wd), "scripts", "chromium-up"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/chromium-up: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// journeyBrowser starts a headless chromium for one journey (within two
// minutes) and closes it at the journey's end.
func journeyBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.Flag("disable-gpu", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	return bctx
}

// TestJourneyAttackDecisionUnderAnotherName: a key holder with the approve
// right decides a call and names someone else as the decider. The body's
// by is refused with a 400 that says why; the decision records the key
// (its ID and name) as by, and the holder's text only as note, which is
// what `wield approvals list` then shows.
func TestJourneyAttackDecisionUnderAnotherName(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	agent, _ := makeKey(t, u, "--rights", "call", "--name", "agent")
	reviewer, reviewerID := makeKey(t, u, "--rights", "approve", "--name", "reviewer")
	s := u.serve("--tools", "tools")

	done := make(chan struct{})
	go func() {
		defer close(done)
		postJSON(s.url+"/v1/tools/mark/call", `{"arguments":{"message":"one"}}`, agent)
	}()
	var list struct {
		Approvals []struct {
			ID     string `json:"id"`
			Digest string `json:"digest"`
		} `json:"approvals"`
	}
	if !eventually(5*time.Second, func() bool {
		_, b := s.do("GET", "/v1/approvals", "", bearer(reviewer))
		return json.Unmarshal(b, &list) == nil && len(list.Approvals) == 1
	}) {
		t.Fatalf("no pending approval: %+v", list)
	}
	a := list.Approvals[0]
	code, b := s.do("POST", "/v1/approvals/"+a.ID+"/approve", `{"digest":"`+a.Digest+`","by":"the CEO"}`, bearer(reviewer))
	if code != 400 || !strings.Contains(string(b), "by is not taken") || !strings.Contains(string(b), "note") {
		t.Errorf("a decision under another name: %d %s; want 400 pointing to note", code, b)
	}
	if got := ranLines(t, u); got != "" {
		t.Fatalf("mark ran after a refused decision: %q", got)
	}
	code, b = s.do("POST", "/v1/approvals/"+a.ID+"/approve", `{"digest":"`+a.Digest+`","note":"the CEO said so"}`, bearer(reviewer))
	if code != 200 {
		t.Fatalf("approve with a note: %d %s", code, b)
	}
	select {
	case <-done:
	case <-time.After(commandLimit):
		t.Fatal("the approved call did not answer")
	}
	var shown []struct {
		Decision *struct {
			By   string `json:"by"`
			Note string `json:"note"`
		} `json:"decision"`
	}
	u.must("approvals", "list", "--status", "all", "--json").json(t, &shown)
	want := "key:" + reviewerID + " (reviewer)"
	if len(shown) != 1 || shown[0].Decision == nil || shown[0].Decision.By != want || shown[0].Decision.Note != "the CEO said so" {
		t.Errorf("approvals list shows %+v; want by %q and the note apart", shown, want)
	}
	if got := ranLines(t, u); got != "one\n" {
		t.Errorf("ran.txt = %q, want the one approved call", got)
	}
}
