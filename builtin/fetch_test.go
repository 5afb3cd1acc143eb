package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
)

const articleMarkdown = `# Rate limits explained

By Ada, 2025-03-01

A **rate limit** caps how many requests a client may send. See [the limits page](%s/docs/limits).

## Token buckets

- Each client has a bucket.
- Requests take tokens.

| Plan | Requests per minute |
|------|---------------------|
| Free | 60                  |`

const articleText = `Rate limits explained
By Ada, 2025-03-01
A rate limit caps how many requests a client may send. See the limits page.
Token buckets
Each client has a bucket.
Requests take tokens.
Plan	Requests per minute
Free	60`

func TestWebFetch(t *testing.T) {
	pdfBytes := fixture(t, "fetch", "hello.pdf")
	serve := func(contentType string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			w.Write(body)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/article", serve("text/html; charset=utf-8", fixture(t, "fetch", "article.html")))
	mux.Handle("/gbk", serve("text/html", fixture(t, "fetch", "gbk.html")))
	mux.Handle("/doc.pdf", serve("application/pdf", pdfBytes))
	mux.Handle("/unlabelled", serve("application/octet-stream", pdfBytes))
	mux.Handle("/data.json", serve("application/json", []byte(`{"k": [1, 2]}`)))
	mux.Handle("/notes.txt", serve("text/plain; charset=utf-8", []byte("line one\nline two\n")))
	mux.Handle("/image.png", serve("image/png", []byte("\x89PNG\r\n\x1a\n\x00\x00")))
	mux.Handle("/broken.pdf", serve("application/pdf", []byte("%PDF-1.4\nthis is not really a pdf")))
	mux.Handle("/big.html", serve("text/html", []byte("<html><body><main><p>"+strings.Repeat("word ", 2000)+"</p></main></body></html>")))
	mux.Handle("/big.pdf", serve("application/pdf", append(pdfBytes, make([]byte, 20000)...)))
	mux.Handle("/gone", http.NotFoundHandler())
	mux.Handle("/down", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := netEngine(t, builtin.WebFetch(builtin.NetOptions{Guard: loopback(), MaxResponseBytes: 8 << 10}))

	tests := []struct {
		name    string
		args    map[string]any
		want    builtin.WebFetchOutput
		errType wield.ErrorType
		errText string
	}{
		{name: "article as markdown", args: map[string]any{"url": srv.URL + "/article"},
			want: builtin.WebFetchOutput{URL: srv.URL + "/article", Status: 200, ContentType: "text/html", Title: "Rate limits explained | Example Blog", Format: "markdown",
				Content: strings.ReplaceAll(articleMarkdown, "%s", srv.URL)}},
		{name: "article as text", args: map[string]any{"url": srv.URL + "/article", "format": "text"},
			want: builtin.WebFetchOutput{URL: srv.URL + "/article", Status: 200, ContentType: "text/html", Title: "Rate limits explained | Example Blog", Format: "text", Content: articleText}},
		{name: "gbk page", args: map[string]any{"url": srv.URL + "/gbk"},
			want: builtin.WebFetchOutput{URL: srv.URL + "/gbk", Status: 200, ContentType: "text/html", Title: "工具引擎", Format: "markdown", Content: "# 工具引擎\n\n智能体调用工具。"}},
		{name: "gbk page as html", args: map[string]any{"url": srv.URL + "/gbk", "format": "html"},
			want: builtin.WebFetchOutput{URL: srv.URL + "/gbk", Status: 200, ContentType: "text/html", Title: "工具引擎", Format: "html", Content: "<article><h1>工具引擎</h1><p>智能体调用工具。</p></article>"}},
		{name: "pdf", args: map[string]any{"url": srv.URL + "/doc.pdf"},
			want: builtin.WebFetchOutput{URL: srv.URL + "/doc.pdf", Status: 200, ContentType: "application/pdf", Format: "text", Content: "Hello from wield\nSecond line of the PDF"}},
		{name: "unlabelled pdf", args: map[string]any{"url": srv.URL + "/unlabelled"},
			want: builtin.WebFetchOutput{URL: srv.URL + "/unlabelled", Status: 200, ContentType: "application/pdf", Format: "text", Content: "Hello from wield\nSecond line of the PDF"}},
		{name: "json raw", args: map[string]any{"url": srv.URL + "/data.json"},
			want: builtin.WebFetchOutput{URL: srv.URL + "/data.json", Status: 200, ContentType: "application/json", Format: "raw", Content: `{"k": [1, 2]}`}},
		{name: "text raw", args: map[string]any{"url": srv.URL + "/notes.txt"},
			want: builtin.WebFetchOutput{URL: srv.URL + "/notes.txt", Status: 200, ContentType: "text/plain", Format: "raw", Content: "line one\nline two\n"}},
		{name: "big page cut", args: map[string]any{"url": srv.URL + "/big.html", "format": "text"},
			want: builtin.WebFetchOutput{URL: srv.URL + "/big.html", Status: 200, ContentType: "text/html", Format: "text", Truncated: true,
				Content: strings.TrimSpace(strings.Repeat("word ", 2000)[:8<<10-len("<html><body><main><p>")])}},
		{name: "image refused", args: map[string]any{"url": srv.URL + "/image.png"}, errType: wield.ErrExecution,
			errText: "GET " + srv.URL + "/image.png: the content type is image/png, which web_fetch does not read"},
		{name: "broken pdf", args: map[string]any{"url": srv.URL + "/broken.pdf"}, errType: wield.ErrExecution,
			errText: "GET " + srv.URL + "/broken.pdf: cannot read the PDF"},
		{name: "big pdf refused", args: map[string]any{"url": srv.URL + "/big.pdf"}, errType: wield.ErrExecution,
			errText: "the PDF is larger than the 8192-byte limit, and a cut PDF cannot be read"},
		{name: "404", args: map[string]any{"url": srv.URL + "/gone"}, errType: wield.ErrExecution, errText: "GET " + srv.URL + "/gone: HTTP 404 Not Found"},
		{name: "502", args: map[string]any{"url": srv.URL + "/down"}, errType: wield.ErrExecution, errText: "HTTP 502 Bad Gateway"},
		{name: "bad format", args: map[string]any{"url": srv.URL + "/article", "format": "pdf"}, errType: wield.ErrValidation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := netCall(t, e, "web_fetch", tt.args)
			if tt.errType != "" {
				if res.OK || res.ErrorType != tt.errType || !strings.Contains(res.Error, tt.errText) {
					t.Fatalf("got ok=%v %s %q, want %s containing %q", res.OK, res.ErrorType, res.Error, tt.errType, tt.errText)
				}
				return
			}
			if !res.OK {
				t.Fatalf("failed: %s %s", res.ErrorType, res.Error)
			}
			var out builtin.WebFetchOutput
			if err := json.Unmarshal(res.Output, &out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestWebFetchKeepsContentOnly checks the parts of the article fixture that
// must not reach the model, whatever the format.
func TestWebFetchKeepsContentOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(fixture(t, "fetch", "article.html"))
	}))
	t.Cleanup(srv.Close)
	e := netEngine(t, builtin.WebFetch(builtin.NetOptions{Guard: loopback()}))
	for _, format := range []string{"markdown", "text", "html"} {
		res := netCall(t, e, "web_fetch", map[string]any{"url": srv.URL, "format": format})
		var out builtin.WebFetchOutput
		if !res.OK || json.Unmarshal(res.Output, &out) != nil {
			t.Fatalf("%s: %s %s", format, res.ErrorType, res.Error)
		}
		for _, noise := range []string{"Archive", "Sidebar link", "Popular posts", "Copyright", "Subscribe", "Share this", "analytics", "track(", "font-family"} {
			if strings.Contains(out.Content, noise) {
				t.Errorf("%s: content holds %q:\n%s", format, noise, out.Content)
			}
		}
		if !strings.Contains(out.Content, "Token buckets") {
			t.Errorf("%s: content lost the article:\n%s", format, out.Content)
		}
	}
}

func TestWebFetchBodyLimitReadsNoMore(t *testing.T) {
	// A server that would send forever: the limit must stop the read.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := []byte(strings.Repeat("x", 1024))
		for i := 0; i < 1<<16; i++ { // 64 MiB at most
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	e := netEngine(t, builtin.WebFetch(builtin.NetOptions{Guard: loopback(), MaxResponseBytes: 4096}))
	res := netCall(t, e, "web_fetch", map[string]any{"url": srv.URL})
	var out builtin.WebFetchOutput
	if !res.OK || json.Unmarshal(res.Output, &out) != nil {
		t.Fatalf("%s %s", res.ErrorType, res.Error)
	}
	if diff := cmp.Diff(builtin.WebFetchOutput{URL: srv.URL, Status: 200, ContentType: "text/plain", Format: "raw", Content: strings.Repeat("x", 4096), Truncated: true}, out); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// ExampleWebFetch reads a page's main content as Markdown: the navigation
// and the footer are left out.
func ExampleWebFetch() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><head><title>Notes</title></head><body>
			<nav><a href="/">Home</a></nav>
			<main><h1>Notes</h1><p>Tools run <em>under limits</em>.</p></main>
			<footer>© Example</footer></body></html>`)
	}))
	defer srv.Close()
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.WebFetch(builtin.NetOptions{Guard: loopback()})) // nil Guard in production
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	args, _ := json.Marshal(map[string]string{"url": srv.URL})
	res, _ := e.Call(context.Background(), wield.Call{Tool: "web_fetch", Arguments: args})
	var out builtin.WebFetchOutput
	json.Unmarshal(res.Output, &out)
	fmt.Println(out.Title)
	fmt.Println(out.Content)
	// Output:
	// Notes
	// # Notes
	//
	// Tools run *under limits*.
}
