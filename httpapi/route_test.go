package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// answer is what a client sees of an answer, less what differs from call to
// call (the call's ID and times).
type answer struct {
	Status          int
	Location, Code  string
	Tool, ErrorType string
	OK              bool
	Pattern         string
}

func answerOf(h http.Handler, method, target, body string) answer {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	a := answer{Status: w.Code, Location: w.Header().Get("Location"), Code: errorCode(w.Body.Bytes()),
		Pattern: r.Pattern}
	var res struct {
		Tool      string `json:"tool"`
		ErrorType string `json:"error_type"`
		OK        bool   `json:"ok"`
	}
	if json.Unmarshal(w.Body.Bytes(), &res) == nil {
		a.Tool, a.ErrorType, a.OK = res.Tool, res.ErrorType, res.OK
	}
	return a
}

// TestCallRouteAsMux checks that the direct route of tool calls answers
// every path exactly as the mux alone does: the calls it takes, and the
// paths it must leave to the mux (to be cleaned, redirected, unescaped or
// refused).
func TestCallRouteAsMux(t *testing.T) {
	s, _ := newTestServer(t, nil)
	body := `{"arguments":{"message":"hi"}}`
	for _, tc := range []struct{ method, target string }{
		{"POST", "/v1/tools/echo/call"},
		{"POST", "/v1/tools/echo/call?x=1"},
		{"POST", "/v1/tools/nope/call"},
		{"POST", "/v1/tools/%65cho/call"},
		{"POST", "/v1/tools/ec%2Fho/call"},
		{"POST", "/v1/tools/ec%20ho/call"},
		{"POST", "/v1/tools/./call"},
		{"POST", "/v1/tools/../call"},
		{"POST", "/v1/tools//call"},
		{"POST", "/v1/tools/a/b/call"},
		{"POST", "/v1/tools/echo/call/"},
		{"POST", "/v1/tools/echo/../echo/call"},
		{"POST", "/v1/tools/call"},
		{"POST", "/v1/tools/echo/calls"},
		{"POST", "/v1//tools/echo/call"},
		{"GET", "/v1/tools/echo/call"},
		{"PUT", "/v1/tools/echo/call"},
		{"GET", "/v1/tools/echo"},
	} {
		want := answerOf(s.mux, tc.method, tc.target, body)
		got := answerOf(s.Handler(), tc.method, tc.target, body)
		if got != want {
			t.Errorf("%s %s: the server answers %+v, the mux %+v", tc.method, tc.target, got, want)
		}
	}
	// The direct route did take the plain call.
	if a := answerOf(s.Handler(), "POST", "/v1/tools/echo/call", body); !a.OK || a.Tool != "echo" || a.Pattern != callPattern {
		t.Errorf("POST /v1/tools/echo/call: %+v", a)
	}
}

// BenchmarkRouteCall measures what finding the route of a tool call costs:
// through a mux of the API's routes, and directly (callName), each to a
// handler that only reads the tool's name.
func BenchmarkRouteCall(b *testing.B) {
	s, _ := newTestServer(b, nil)
	nop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _ = toolOf(r) })
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.Handle(rt.method+" "+rt.path, nop)
	}
	mux.Handle("/mcp", nop)
	mux.Handle("/mcp/", nop)
	mux.Handle("/", nop)
	direct := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := callName(r.URL.Path); ok && r.Method == http.MethodPost && r.URL.RawPath == "" {
			r.Pattern = callPattern
			nop(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
	req := httptest.NewRequest("POST", "/v1/tools/echo/call", nil)
	w := httptest.NewRecorder()
	for _, h := range []struct {
		name string
		h    http.Handler
	}{{"mux", mux}, {"direct", direct}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h.h.ServeHTTP(w, req)
			}
		})
	}
}
