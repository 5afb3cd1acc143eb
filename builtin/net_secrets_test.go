package builtin_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/httptool"
)

// TestNetOutputRedactsSecrets: the output of http_get, http_request and
// web_fetch keeps no credential: response headers that carry one
// (Set-Cookie, Authorization, X-Api-Key) and keys in the final URL's
// query are [REDACTED]; the server still gets the real values.
func TestNetOutputRedactsSecrets(t *testing.T) {
	var gotKey, gotQuery string
	mux := http.NewServeMux()
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/data?"+r.URL.RawQuery, http.StatusFound)
	})
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		gotKey, gotQuery = r.Header.Get("X-Api-Key"), r.URL.Query().Get("api_key")
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc"})
		w.Header().Set("X-Api-Key", "s3cret")
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("rows"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	opts := builtin.NetOptions{Guard: loopback()}
	e := netEngine(t, append(builtin.NetTools(opts), builtin.WebFetch(opts))...)
	for _, tool := range []string{"http_get", "http_request", "web_fetch"} {
		gotKey, gotQuery = "", ""
		res := netCall(t, e, tool, map[string]any{"url": srv.URL + "/hop?api_key=s3cret&page=2", "headers": map[string]string{"X-Api-Key": "s3cret"}})
		if tool == "web_fetch" {
			res = netCall(t, e, tool, map[string]any{"url": srv.URL + "/hop?api_key=s3cret&page=2"})
		}
		if !res.OK {
			t.Fatalf("%s: %s", tool, res.Error)
		}
		if gotQuery != "s3cret" || tool != "web_fetch" && gotKey != "s3cret" {
			t.Errorf("%s: the server got key %q, query %q", tool, gotKey, gotQuery)
		}
		var out struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		}
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(res.Output), "s3cret") || strings.Contains(string(res.Output), "sid=abc") {
			t.Errorf("%s: the output holds a secret: %s", tool, res.Output)
		}
		if !strings.HasSuffix(out.URL, "/data?api_key=[REDACTED]&page=2") {
			t.Errorf("%s: url %q", tool, out.URL)
		}
		if tool != "web_fetch" && (out.Headers["Set-Cookie"] != "[REDACTED]" || out.Headers["X-Api-Key"] != "[REDACTED]" || out.Headers["Content-Type"] != "text/plain") {
			t.Errorf("%s: headers %v", tool, out.Headers)
		}
	}
}

// TestNetRefusesOwnServer: the built-in network tools cannot reach wield's
// own listening address, even with loopback allowed.
func TestNetRefusesOwnServer(t *testing.T) {
	self := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("wield")) }))
	defer self.Close()
	defer httptool.Listening(self.Listener.Addr())()
	_, port, _ := net.SplitHostPort(self.Listener.Addr().String())
	opts := builtin.NetOptions{Guard: loopback()}
	e := netEngine(t, append(builtin.NetTools(opts), builtin.WebFetch(opts))...)
	for _, tool := range []string{"http_get", "http_post", "http_request", "web_fetch"} {
		for _, u := range []string{self.URL + "/v1/calls", "http://0.0.0.0:" + port + "/v1/calls"} {
			res := netCall(t, e, tool, map[string]any{"url": u})
			if res.OK || res.ErrorType != "permission_denied" || !strings.Contains(res.Error, "wield's own server") {
				t.Errorf("%s %s: %+v", tool, u, res)
			}
		}
	}
}

// TestNetOutputSecretNames: the configuration's secret names are kept out
// of the HTTP tools' outputs as well as the default ones: a response header
// and a query parameter of those names are [REDACTED], the defaults still are.
func TestNetOutputSecretNames(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Goog-Pin", "p1n-value")
		w.Header().Set("Set-Cookie", "sid=abc")
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	opts := builtin.NetOptions{Guard: loopback(), SecretNames: []string{"pin"}}
	e := netEngine(t, append(builtin.NetTools(opts), builtin.WebFetch(opts))...)
	for _, tool := range []string{"http_get", "web_fetch"} {
		res := netCall(t, e, tool, map[string]any{"url": srv.URL + "/x?user_pin=1234&page=2"})
		if !res.OK {
			t.Fatalf("%s: %s", tool, res.Error)
		}
		for _, leak := range []string{"p1n-value", "1234", "sid=abc"} {
			if strings.Contains(string(res.Output), leak) {
				t.Errorf("%s: the output holds %q: %s", tool, leak, res.Output)
			}
		}
		if !strings.Contains(string(res.Output), "user_pin=[REDACTED]&page=2") {
			t.Errorf("%s: url not redacted: %s", tool, res.Output)
		}
	}
}
