package ui_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wieldhq/wield/ui"
)

func TestHandler(t *testing.T) {
	h := ui.Handler()
	tests := []struct {
		method, path string
		status       int
		ctype        string // prefix
		body         string // substring
	}{
		{"GET", "/", 200, "text/html", `<script type="module" src="app.js">`},
		{"HEAD", "/", 200, "text/html", ""},
		{"GET", "/app.js", 200, "text/javascript", "import"},
		{"GET", "/app.css", 200, "text/css", ":root"},
		{"GET", "/favicon.svg", 200, "image/svg+xml", "<svg"},
		{"GET", "/index.html", 301, "", ""},
		{"GET", "/nope.js", 404, "text/plain", ""},
		{"GET", "/../ui.go", 404, "text/plain", ""},
		{"POST", "/", 405, "text/plain", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "http://console.test"+tt.path, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.ctype) {
				t.Errorf("Content-Type = %q, want %q…", ct, tt.ctype)
			}
			if !strings.Contains(rec.Body.String(), tt.body) {
				t.Errorf("body does not hold %q", tt.body)
			}
			if tt.status == 200 {
				csp := rec.Header().Get("Content-Security-Policy")
				if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
					t.Errorf("Content-Security-Policy = %q", csp)
				}
				if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
					t.Errorf("X-Content-Type-Options = %q", got)
				}
			}
			if tt.status == 405 && rec.Header().Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q", rec.Header().Get("Allow"))
			}
		})
	}
}

// TestOffline checks that the console loads nothing from elsewhere: no
// URL in any file but the SVG namespace, and that every module it imports
// and every file index.html names is served.
func TestOffline(t *testing.T) {
	dir := "static"
	remote := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	imports := regexp.MustCompile(`(?m)^import .* from "([^"]+)";|\b(?:src|href)="([^"#][^"]*)"`)
	srv := httptest.NewServer(ui.Handler())
	defer srv.Close()
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			return err
		}
		for _, m := range remote.FindAllString(string(b), -1) {
			if m != "http://www.w3.org" && m != "//www.w3.org" {
				t.Errorf("%s names a remote address: %s", p, m)
			}
		}
		for _, m := range imports.FindAllStringSubmatch(string(b), -1) {
			ref := m[1] + m[2]
			resp, err := http.Get(srv.URL + "/" + strings.TrimPrefix(ref, "./"))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("%s refers to %s, which answers %d", p, ref, resp.StatusCode)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
