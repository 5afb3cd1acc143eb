package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestConsoleRouteAsMux checks that withConsole answers every path as its
// mux alone does: the API's paths it hands on directly, and the others
// (the console's, and paths the mux cleans and redirects).
func TestConsoleRouteAsMux(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Api", r.URL.Path)
		w.WriteHeader(http.StatusTeapot)
	})
	direct, mux := withConsole(api), consoleMux(api)
	for _, tc := range []struct{ method, target string }{
		{"POST", "/v1/tools/echo/call"},
		{"GET", "/v1/tools"},
		{"GET", "/v1/"},
		{"GET", "/v1"},
		{"GET", "/v1/tools/"},
		{"GET", "/v1/../"},
		{"GET", "/v1/./tools"},
		{"GET", "/v1//tools"},
		{"GET", "/v1/tools/.."},
		{"POST", "/v1/tools/%65cho/call"},
		{"POST", "/v1/tools/a%2Fb/call"},
		{"GET", "/"},
		{"GET", "/index.html"},
		{"GET", "/healthz"},
		{"GET", "/mcp"},
		{"POST", "/mcp"},
		{"POST", "/mcp/math"},
		{"POST", "/mcp/"},
		{"POST", "/mcp/../v1/tools"},
		{"POST", "/mcp//math"},
		{"POST", "/mcpx"},
		{"GET", "/nope"},
	} {
		var got, want *httptest.ResponseRecorder
		for _, h := range []struct {
			h   http.Handler
			out **httptest.ResponseRecorder
		}{{direct, &got}, {mux, &want}} {
			w := httptest.NewRecorder()
			h.h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.target, nil))
			*h.out = w
		}
		if got.Code != want.Code || got.Header().Get("X-Api") != want.Header().Get("X-Api") || got.Header().Get("Location") != want.Header().Get("Location") || got.Body.String() != want.Body.String() {
			t.Errorf("%s %s: withConsole answers %d api=%q location=%q, the mux %d api=%q location=%q", tc.method, tc.target,
				got.Code, got.Header().Get("X-Api"), got.Header().Get("Location"), want.Code, want.Header().Get("X-Api"), want.Header().Get("Location"))
		}
	}
}
