package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httptool"
)

// loopback is the guard of the tests that talk to local test servers: it
// opens 127.0.0.0/8, and only in these tests.
func loopback() *httptool.Guard {
	return &httptool.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
}

// netEngine is an engine over tools that does not retry, so that hit counts
// are exact.
func netEngine(t *testing.T, tools ...*wield.Tool) *engine.Engine {
	t.Helper()
	reg := wield.NewRegistry(nil)
	reg.MustRegister(tools...)
	e := engine.New(reg, &engine.Options{Retry: engine.RetryPolicy{MaxAttempts: 1}})
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func netCall(t *testing.T, e *engine.Engine, tool string, args any) *wield.Result {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Call(context.Background(), wield.Call{Tool: tool, Arguments: b})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// httpResult is what the tests compare of an HTTPOutput: the headers they
// set, not the ones the server adds (Date).
type httpResult struct {
	Status, StatusCode int
	Path               string
	ContentType        string
	Body               string
	BodyEncoding       string
	Truncated          bool
	Note               string
}

func TestHTTPTools(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, "{\"a\": 1, \"b\": [true, null]}\n")
	})
	mux.HandleFunc("/badjson", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{not json")
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "héllo")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"method": r.Method, "query": r.URL.RawQuery, "x_test": r.Header.Get("X-Test"),
			"content_type": r.Header.Get("Content-Type"), "body": string(body),
		})
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte{0x89, 'P', 'N', 'G', 0, 1, 2})
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("é", 200)) // 400 bytes: the cut at 257 falls inside a rune
	})
	mux.HandleFunc("/bigjson", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"data":%q}`, strings.Repeat("x", 300))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/json", http.StatusFound)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such thing", http.StatusNotFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	e := netEngine(t, builtin.NetTools(builtin.NetOptions{Guard: loopback(), MaxResponseBytes: 257, Timeout: 300 * time.Millisecond})...)

	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		want    httpResult
		errType wield.ErrorType
		errText string
	}{
		{name: "get json", tool: "http_get", args: map[string]any{"url": srv.URL + "/json"},
			want: httpResult{200, 200, "/json", "application/json; charset=utf-8", `{"a":1,"b":[true,null]}`, "", false, ""}},
		{name: "json that does not parse is text", tool: "http_get", args: map[string]any{"url": srv.URL + "/badjson"},
			want: httpResult{200, 200, "/badjson", "application/json", `"{not json"`, "", false, ""}},
		{name: "get text", tool: "http_get", args: map[string]any{"url": srv.URL + "/text"},
			want: httpResult{200, 200, "/text", "text/plain; charset=utf-8", `"héllo"`, "", false, ""}},
		{name: "binary as base64", tool: "http_get", args: map[string]any{"url": srv.URL + "/png"},
			want: httpResult{200, 200, "/png", "image/png", `"iVBORwABAg=="`, "base64", false, ""}},
		{name: "redirect followed", tool: "http_get", args: map[string]any{"url": srv.URL + "/redirect"},
			want: httpResult{200, 200, "/json", "application/json; charset=utf-8", `{"a":1,"b":[true,null]}`, "", false, ""}},
		{name: "404 is output", tool: "http_get", args: map[string]any{"url": srv.URL + "/missing"},
			want: httpResult{404, 404, "/missing", "text/plain; charset=utf-8", `"no such thing\n"`, "", false, ""}},
		{name: "cut at the limit on a rune boundary", tool: "http_get", args: map[string]any{"url": srv.URL + "/big"},
			want: httpResult{200, 200, "/big", "text/plain", `"` + strings.Repeat("é", 128) + `"`, "", true, "the body was cut at the 257-byte limit; the response is longer"}},
		{name: "cut JSON is text", tool: "http_get", args: map[string]any{"url": srv.URL + "/bigjson"},
			want: httpResult{200, 200, "/bigjson", "application/json", `"{\"data\":\"` + strings.Repeat("x", 248) + `"`, "", true, "the body was cut at the 257-byte limit; the response is longer"}},
		{name: "post string body", tool: "http_post", args: map[string]any{"url": srv.URL + "/echo", "body": "a=1", "headers": map[string]string{"X-Test": "yes"}},
			want: httpResult{200, 200, "/echo", "application/json", `{"body":"a=1","content_type":"text/plain; charset=utf-8","method":"POST","query":"","x_test":"yes"}`, "", false, ""}},
		{name: "post object body", tool: "http_post", args: map[string]any{"url": srv.URL + "/echo", "body": map[string]int{"n": 1}},
			want: httpResult{200, 200, "/echo", "application/json", `{"body":"{\"n\":1}","content_type":"application/json","method":"POST","query":"","x_test":""}`, "", false, ""}},
		{name: "post JSON written as a string", tool: "http_post", args: map[string]any{"url": srv.URL + "/echo", "body": `{"n": 2}`},
			want: httpResult{200, 200, "/echo", "application/json", `{"body":"{\"n\": 2}","content_type":"application/json","method":"POST","query":"","x_test":""}`, "", false, ""}},
		{name: "request with query and header content type", tool: "http_request",
			args: map[string]any{"method": "PUT", "url": srv.URL + "/echo?k=v", "query": map[string]string{"q": "a b"}, "body": "<x/>", "headers": map[string]string{"Content-Type": "application/xml"}},
			want: httpResult{200, 200, "/echo", "application/json", `{"body":"<x/>","content_type":"application/xml","method":"PUT","query":"k=v&q=a+b","x_test":""}`, "", false, ""}},
		{name: "request defaults to GET", tool: "http_request", args: map[string]any{"url": srv.URL + "/echo"},
			want: httpResult{200, 200, "/echo", "application/json", `{"body":"","content_type":"","method":"GET","query":"","x_test":""}`, "", false, ""}},
		{name: "scheme refused", tool: "http_get", args: map[string]any{"url": "file:///etc/passwd"}, errType: wield.ErrValidation},
		{name: "bad header name", tool: "http_get", args: map[string]any{"url": srv.URL + "/json", "headers": map[string]string{"Bad Header": "x"}},
			errType: wield.ErrValidation, errText: `headers: "Bad Header" is not a valid header name`},
		{name: "header injection", tool: "http_get", args: map[string]any{"url": srv.URL + "/json", "headers": map[string]string{"X-A": "1\r\nX-B: 2"}},
			errType: wield.ErrValidation, errText: "the value of X-A holds characters a header cannot carry"},
		{name: "unknown method", tool: "http_request", args: map[string]any{"method": "TRACE", "url": srv.URL + "/echo"}, errType: wield.ErrValidation},
		{name: "timeout", tool: "http_get", args: map[string]any{"url": srv.URL + "/slow"},
			errType: wield.ErrTimeout, errText: "GET " + srv.URL + "/slow: no complete answer within 300ms"},
		{name: "timeout argument", tool: "http_request", args: map[string]any{"url": srv.URL + "/slow", "timeout": 1},
			errType: wield.ErrTimeout, errText: "GET " + srv.URL + "/slow: no complete answer within 1s"},
		{name: "timeout argument out of range", tool: "http_request", args: map[string]any{"url": srv.URL + "/slow", "timeout": 301}, errType: wield.ErrValidation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := netCall(t, e, tt.tool, tt.args)
			if tt.errType != "" {
				if res.OK || res.ErrorType != tt.errType || !strings.Contains(res.Error, tt.errText) {
					t.Fatalf("got ok=%v %s %q, want %s containing %q", res.OK, res.ErrorType, res.Error, tt.errType, tt.errText)
				}
				return
			}
			if !res.OK {
				t.Fatalf("failed: %s %s", res.ErrorType, res.Error)
			}
			var out builtin.HTTPOutput
			if err := json.Unmarshal(res.Output, &out); err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(out.URL)
			if err != nil {
				t.Fatal(err)
			}
			got := httpResult{out.Status, out.StatusCode, u.Path, out.Headers["Content-Type"], string(out.Body), out.BodyEncoding, out.Truncated, out.Note}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestNetToolsDescribed(t *testing.T) {
	type desc struct {
		Category    wield.Category
		Annotations wield.Annotations
	}
	got := map[string]desc{}
	for _, tl := range builtin.NetTools(builtin.NetOptions{}) {
		got[tl.Name] = desc{tl.Category, tl.Annotations}
		if tl.Description == "" || tl.Timeout == 0 || tl.Version == "" {
			t.Errorf("%s: description %q, timeout %s, version %q", tl.Name, tl.Description, tl.Timeout, tl.Version)
		}
	}
	want := map[string]desc{
		"http_get":     {wield.CategoryNetwork, wield.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}},
		"http_post":    {wield.CategoryNetwork, wield.Annotations{OpenWorld: true}},
		"http_request": {wield.CategoryHTTP, wield.Annotations{OpenWorld: true}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// target is a server that must never be reached: it counts its hits.
func target(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "internal secret")
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestNetGuardRefusesInternalAddresses(t *testing.T) {
	srv, hits := target(t)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	search, err := builtin.WebSearch(builtin.SearchOptions{Provider: "bocha", APIKey: "k", Endpoint: srv.URL + "/v1/web-search"})
	if err != nil {
		t.Fatal(err)
	}
	opts := builtin.NetOptions{Timeout: 5 * time.Second} // the default guard
	e := netEngine(t, append(builtin.NetTools(opts), builtin.WebFetch(opts), search)...)

	denied := []wield.ErrorType{wield.ErrPermissionDenied}
	// Go's resolver does not read numeric host forms as addresses: they fail
	// as unknown hosts; a C resolver would read them, and the guard refuse.
	unknownOrDenied := []wield.ErrorType{wield.ErrPermissionDenied, wield.ErrExecution}
	tests := []struct {
		host  string
		types []wield.ErrorType
		text  string
	}{
		{"127.0.0.1", denied, "127.0.0.1 is a loopback address"},
		{"localhost", denied, "is a loopback address"},
		{"[::1]", denied, "::1 is a loopback address"},
		{"[::ffff:127.0.0.1]", denied, "loopback address"},
		{"[::ffff:7f00:1]", denied, "loopback address"},
		{"10.1.2.3", denied, "10.1.2.3 is a private address"},
		{"192.168.1.1", denied, "192.168.1.1 is a private address"},
		{"169.254.169.254", denied, "169.254.169.254 is a cloud metadata address"},
		{"0.0.0.0", denied, "unspecified address"},
		{"2130706433", unknownOrDenied, ""},
		{"0x7f000001", unknownOrDenied, ""},
		{"0177.0.0.1", unknownOrDenied, ""},
		{"127.1", unknownOrDenied, ""},
	}
	for _, tt := range tests {
		u := "http://" + tt.host + ":" + port + "/"
		for _, tool := range []string{"http_get", "http_post", "http_request", "web_fetch"} {
			res := netCall(t, e, tool, map[string]any{"url": u})
			if res.OK || !contains(tt.types, res.ErrorType) || !strings.Contains(res.Error, tt.text) {
				t.Errorf("%s %s: got ok=%v %s %q, want one of %v containing %q", tool, u, res.OK, res.ErrorType, res.Error, tt.types, tt.text)
			}
		}
	}
	res := netCall(t, e, "web_search", map[string]any{"query": "x"})
	if res.OK || res.ErrorType != wield.ErrPermissionDenied || !strings.Contains(res.Error, "bocha: Access denied: 127.0.0.1 is a loopback address") {
		t.Errorf("web_search: got ok=%v %s %q", res.OK, res.ErrorType, res.Error)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the internal server was reached %d times", n)
	}
}

func contains(ts []wield.ErrorType, t wield.ErrorType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// TestNetGuardRefusesRedirects runs a "public" server on 127.0.0.2, the only
// address the guard opens, that redirects to internal addresses: the
// redirects must not be followed.
func TestNetGuardRefusesRedirects(t *testing.T) {
	srv, hits := target(t)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2 (not Linux?): %v", err)
	}
	public := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "public page")
	}))
	public.Listener.Close()
	public.Listener = ln
	public.Start()
	t.Cleanup(public.Close)
	guard := &httptool.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	opts := builtin.NetOptions{Guard: guard, Timeout: 5 * time.Second}
	e := netEngine(t, append(builtin.NetTools(opts), builtin.WebFetch(opts))...)

	// The control: the guard lets the public server through, redirects
	// within it included.
	res := netCall(t, e, "web_fetch", map[string]any{"url": public.URL + "/?to=" + url.QueryEscape(public.URL+"/page")})
	if !res.OK || !strings.Contains(string(res.Output), "public page") {
		t.Fatalf("control: got ok=%v %s %s", res.OK, res.Error, res.Output)
	}
	for _, to := range []string{
		"http://127.0.0.1:" + port + "/",
		"http://localhost:" + port + "/",
		"http://[::1]:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.1:" + port + "/",
		"file:///etc/passwd",
	} {
		for _, tool := range []string{"http_get", "http_request", "web_fetch"} {
			res := netCall(t, e, tool, map[string]any{"url": public.URL + "/?to=" + url.QueryEscape(to)})
			if res.OK || res.ErrorType != wield.ErrPermissionDenied || !strings.Contains(res.Error, "Access denied") {
				t.Errorf("%s redirect to %s: got ok=%v %s %q", tool, to, res.OK, res.ErrorType, res.Error)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the internal server was reached %d times", n)
	}
}

// ExampleNetTools calls http_get. The guard refuses internal addresses
// unless told otherwise: here it opens the loopback range for the local
// server.
func ExampleNetTools() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"temperature": 21}`)
	}))
	defer srv.Close()
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.NetTools(builtin.NetOptions{Guard: loopback()})...)
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	args, _ := json.Marshal(map[string]string{"url": srv.URL})
	res, _ := e.Call(context.Background(), wield.Call{Tool: "http_get", Arguments: args})
	var out builtin.HTTPOutput
	json.Unmarshal(res.Output, &out)
	fmt.Println(out.Status, string(out.Body))

	// Without the opening, the same call is refused.
	reg2 := wield.NewRegistry(nil)
	reg2.MustRegister(builtin.NetTools(builtin.NetOptions{})...)
	e2 := engine.New(reg2, nil)
	defer e2.Close(context.Background())
	res, _ = e2.Call(context.Background(), wield.Call{Tool: "http_get", Arguments: args})
	fmt.Println(res.ErrorType)
	// Output:
	// 200 {"temperature":21}
	// permission_denied
}
