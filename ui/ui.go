// Package ui is wield's web console: a single page, embedded in the binary,
// that lists the tools and tries them from forms drawn from their input
// schemas, follows calls live, searches the history, charts the statistics,
// decides approvals, and shows the toolsets and agents, the limiter and the
// API keys. It speaks only to the REST API of package httpapi
// on the same origin, and needs no network beyond it: no CDN, no fonts, no
// build step.
//
// # Serving
//
// Mount [Handler] at "/" beside the API:
//
//	api := srv.Handler()
//	mux := http.NewServeMux()
//	mux.Handle("/v1/", api)
//	mux.Handle("/openapi.json", api)
//	mux.Handle("/healthz", api)
//	mux.Handle("/", ui.Handler())
//
// The console routes by URL hash (#/tools, #/tools/NAME, #/live, #/calls,
// #/calls/ID, #/stats, #/approvals, #/toolsets, #/limiter, #/keys), so the
// server serves one page. When the API asks for a key (401), the console
// asks the person for one, keeps it in the tab's sessionStorage and sends
// it as "Authorization: Bearer". It asks GET /v1/whoami what the key may
// do, and turns off, saying why, what the key lacks the right for (Try it
// without call, Approve and Deny without approve, the Keys page without
// keys).
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// files is the console's root: static/ itself.
var files = func() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic("ui: embedded static directory is missing: " + err.Error())
	}
	return sub
}()

// csp allows the page its own scripts, styles and API and nothing else:
// the console must work offline, and a tool's output shown in it must not
// be able to load or run anything.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// Handler serves the console: index.html at "/" and its scripts and styles
// beside it, for GET and HEAD. Other methods get 405, unknown files 404.
// The files are revalidated on every load (Cache-Control: no-cache), so a
// new binary's console replaces the old one at once.
func Handler() http.Handler {
	fileServer := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		if name == "index.html" && r.URL.Path != "/" {
			// FileServer redirects /index.html to /; say so plainly.
			http.Redirect(w, r, "/", http.StatusMovedPermanently)
			return
		}
		if st, err := fs.Stat(files, name); err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	})
}
