//go:build unix

package journeys

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// failTool fails, saying why on stderr.
const failTool = `name: broken
description: Fail, always
entry:
  type: command
  command: ["sh", "-c", "echo out of order >&2; exit 3"]
`

// endlessStream is an event stream without its calls' end events
// (execution_completed, execution_failed), as a stream that fell behind
// (": lost N", which EventSource does not show) loses them.
type endlessStream struct {
	r        io.ReadCloser
	buf, out []byte
}

func (d *endlessStream) Read(p []byte) (int, error) {
	for len(d.out) == 0 {
		if i := bytes.Index(d.buf, []byte("\n\n")); i >= 0 {
			frame := d.buf[:i+2]
			d.buf = d.buf[i+2:]
			if !bytes.Contains(frame, []byte("\nevent: execution_completed\n")) && !bytes.Contains(frame, []byte("\nevent: execution_failed\n")) {
				d.out = append(d.out, frame...)
			}
			continue
		}
		chunk := make([]byte, 32<<10)
		n, err := d.r.Read(chunk)
		d.buf = append(d.buf, chunk[:n]...)
		if err != nil && n == 0 {
			return 0, err
		}
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}

func (d *endlessStream) Close() error { return d.r.Close() }

// TestJourneyConsoleLostEnds: the console of `wield serve`, reached
// through a proxy whose event stream loses the calls' end events. Two
// calls (one ok, one failing) show running on the live page; some 15 s on
// the console looks them up and moves them to the finished calls with
// their recorded status and error, where they once stayed running for
// ever.
func TestJourneyConsoleLostEnds(t *testing.T) {
	t.Parallel() // waits on the console's lookups for seconds: see waitBound
	chrome := journeyChromium(t)
	u := newUser(t)
	u.write("tools/echo.yaml", echoTool)
	u.write("tools/broken.yaml", failTool)
	s := u.serve("--tools", "tools")
	target, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(&httputil.ReverseProxy{ // on 127.0.0.1
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Header.Del("Origin") // the proxy's page is the server's
		},
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.URL.Path == "/v1/events" {
				resp.Body = &endlessStream{r: resp.Body}
			}
			return nil
		},
	})
	t.Cleanup(proxy.Close) // after the browser's end (cleanups run last first): its stream holds the proxy

	ctx := journeyBrowser(t, chrome)
	poll := func(what, expr string, limit time.Duration) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(limit), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main")?.innerText || ""`))
			t.Fatalf("%s: %v; the page shows:\n%s", what, err, text)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(proxy.URL+"/#/live")); err != nil {
		t.Fatalf("open the console: %v", err)
	}
	poll("the event stream", `document.querySelector("#stream-state")?.dataset.state === "live"`, 20*time.Second)
	if code, b := s.do("POST", "/v1/tools/echo/call", `{"arguments":{"message":"hello"}}`); code != 200 {
		t.Fatalf("call echo: %d %s", code, b)
	}
	if code, b := s.do("POST", "/v1/tools/broken/call", `{"arguments":{}}`); code != 200 {
		t.Fatalf("call broken: %d %s", code, b)
	}
	poll("both calls shown running (their ends lost)", `document.querySelectorAll(".feed-item.running").length === 2`, 20*time.Second)
	start := time.Now()
	poll("both calls moved to the finished ones", `(() => {
		const rows = [...document.querySelectorAll("main table.live tbody tr")];
		return !document.querySelector(".feed-item.running") && rows.length === 2 &&
			rows.some((r) => r.textContent.includes("echo") && r.querySelector(".pill.ok")) &&
			rows.some((r) => r.textContent.includes("broken") && r.querySelector(".pill.err") && r.textContent.includes("out of order")) })()`, 50*time.Second)
	t.Logf("the calls whose ends were lost moved %v after they showed running", time.Since(start))
}
