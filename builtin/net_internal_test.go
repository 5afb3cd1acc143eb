package builtin

import (
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestUnwrapDDG(t *testing.T) {
	tests := []struct{ href, want string }{
		{"//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1&rut=x", "https://example.com/a?b=1"},
		{"https://duckduckgo.com/l/?uddg=http%3A%2F%2Fexample.org%2F", "http://example.org/"},
		{"https://duckduckgo.com/y.js?ad_domain=ads.example&u3=x", ""},
		{"https://example.net/direct", "https://example.net/direct"},
		{"javascript:alert(1)", ""},
		{"%zz", ""},
	}
	for _, tt := range tests {
		if got := unwrapDDG(tt.href); got != tt.want {
			t.Errorf("unwrapDDG(%q) = %q, want %q", tt.href, got, tt.want)
		}
	}
}

func TestTrimPartialRune(t *testing.T) {
	s := "aé中😀"
	var got []string
	for i := 0; i <= len(s); i++ {
		got = append(got, string(trimPartialRune([]byte(s[:i]))))
	}
	want := []string{"", "a", "a", "aé", "aé", "aé", "aé中", "aé中", "aé中", "aé中", "aé中😀"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestBodyJSON(t *testing.T) {
	tests := []struct {
		contentType string
		body        string
		truncated   bool
		want, enc   string
	}{
		{"application/json", ` {"a":1} `, false, `{"a":1}`, ""},
		{"application/problem+json", `{"a":1}`, false, `{"a":1}`, ""},
		{"application/json", `{"a":1}`, true, `"{\"a\":1}"`, ""},
		{"text/plain", "a\xffb", false, "\"a\ufffdb\"", ""},
		{"", "plain words", false, `"plain words"`, ""},
		{"application/octet-stream", "\x00\x01\x02", false, `"AAEC"`, "base64"},
		{"image/gif", "GIF89a", false, `"R0lGODlh"`, "base64"},
		{"application/xml", "<a/>", false, `"<a/>"`, ""},
	}
	for _, tt := range tests {
		got, enc := bodyJSON(tt.contentType, []byte(tt.body), tt.truncated)
		if string(got) != tt.want || enc != tt.enc {
			t.Errorf("bodyJSON(%q, %q) = %s %q, want %s %q", tt.contentType, tt.body, got, enc, tt.want, tt.enc)
		}
	}
}

func FuzzParseDuckDuckGo(f *testing.F) {
	for _, name := range []string{"duckduckgo.html", "duckduckgo_noresults.html", "duckduckgo_botcheck.html"} {
		b, err := os.ReadFile("testdata/search/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=">x</a></div>`)
	f.Fuzz(func(t *testing.T, page string) {
		res, err := parseDuckDuckGo(page)
		if err == nil && res == nil {
			t.Fatal("no error and no result list")
		}
		for _, r := range res {
			if r.URL == "" {
				t.Fatalf("result without URL: %+v", r)
			}
		}
	})
}

func FuzzReadablePage(f *testing.F) {
	for _, name := range []string{"article.html", "gbk.html"} {
		b, err := os.ReadFile("testdata/fetch/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), "markdown")
	}
	f.Add("<main><article><header>x</header></article></main><article>y</article>", "text")
	f.Add("<table><tr><td>a<td>b</table>", "html")
	f.Fuzz(func(t *testing.T, page, format string) {
		_, content, err := readablePage(page, format, "https://example.com/")
		if err == nil && !utf8.ValidString(content) {
			t.Fatalf("content is not UTF-8: %q", content)
		}
	})
}

func FuzzPDFText(f *testing.F) {
	b, err := os.ReadFile("testdata/fetch/hello.pdf")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte("%PDF-1.4\n"))
	// A file the library spins on ends as an error, not a hang; keep the
	// fuzzer going at a good pace (slots are released as readings end).
	pdfTimeout = 300 * time.Millisecond
	pdfSlots = make(chan struct{}, 64)
	f.Fuzz(func(t *testing.T, data []byte) {
		text, err := pdfText(data) // must not panic
		if err == nil && strings.TrimSpace(text) == "" {
			t.Fatal("no error and no text")
		}
	})
}

func BenchmarkReadablePage(b *testing.B) {
	page, err := os.ReadFile("testdata/fetch/article.html")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := readablePage(string(page), "markdown", "https://example.com/"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDuckDuckGo(b *testing.B) {
	page, err := os.ReadFile("testdata/search/duckduckgo.html")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseDuckDuckGo(string(page)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPDFText(b *testing.B) {
	data, err := os.ReadFile("testdata/fetch/hello.pdf")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pdfText(data); err != nil {
			b.Fatal(err)
		}
	}
}
