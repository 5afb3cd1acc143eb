package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httptool"
)

// seenRequest is what a fake search API saw of a request.
type seenRequest struct {
	Method string
	Path   string
	Auth   string            // the provider's credential header, as "Name: value"
	Query  map[string]string // URL query
	Body   map[string]any    // JSON body, or form fields
}

// fakeAPI answers every request with status, contentType and body, and
// remembers the last request.
type fakeAPI struct {
	mu          sync.Mutex
	seen        seenRequest
	hits        int
	status      int
	contentType string
	body        []byte
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	s := seenRequest{Method: r.Method, Path: r.URL.Path, Query: flat(r.URL.Query())}
	for _, h := range []string{"Authorization", "X-Subscription-Token", "Ocp-Apim-Subscription-Key"} {
		if v := r.Header.Get(h); v != "" {
			s.Auth = h + ": " + v
		}
	}
	switch r.Header.Get("Content-Type") {
	case "application/json":
		if err := json.Unmarshal(data, &s.Body); err != nil {
			s.Body = map[string]any{"undecodable": string(data)}
		}
	case "application/x-www-form-urlencoded":
		form, _ := url.ParseQuery(string(data))
		s.Body = map[string]any{}
		for k, v := range flat(form) {
			s.Body[k] = v
		}
	}
	f.mu.Lock()
	f.seen, f.hits = s, f.hits+1
	status, ct, body := f.status, f.contentType, f.body
	f.mu.Unlock()
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(status)
	w.Write(body)
}

func flat(v url.Values) map[string]string {
	if len(v) == 0 {
		return nil
	}
	m := map[string]string{}
	for k, vs := range v {
		m[k] = strings.Join(vs, ",")
	}
	return m
}

func fixture(t *testing.T, path ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// twoResults are the hits every fixture holds, as each provider reports them.
func twoResults(firstTitle, firstSnippet, firstDate, secondDate string) []builtin.SearchResult {
	return []builtin.SearchResult{
		{Title: firstTitle, URL: "https://example.com/wield", Snippet: firstSnippet, Published: firstDate},
		{Title: "Go generics and JSON Schema", URL: "https://example.org/generics-schema", Snippet: "Inferring JSON Schema from Go struct tags.", Published: secondDate},
	}
}

const wieldTitle = "Wield: a tool engine for AI agents"

func TestWebSearchProviders(t *testing.T) {
	tests := []struct {
		provider, key, engineID string
		path                    string // of the endpoint
		fixture                 string
		contentType             string
		args                    map[string]any
		wantReq                 seenRequest
		want                    []builtin.SearchResult
	}{
		{
			provider: "tavily", key: "tvly-KEY", path: "/search", fixture: "tavily.json", contentType: "application/json",
			args:    map[string]any{"query": "wield go tool engine", "limit": 5, "freshness": "oneMonth"},
			wantReq: seenRequest{Method: "POST", Path: "/search", Auth: "Authorization: Bearer tvly-KEY", Body: map[string]any{"query": "wield go tool engine", "max_results": 5.0, "search_depth": "basic", "time_range": "month"}},
			want:    twoResults(wieldTitle, "Wield runs tool calls for agents with validation, approvals and limits.", "", "Mon, 03 Mar 2025 10:00:00 GMT"),
		},
		{
			provider: "brave", key: "BSA-KEY", path: "/res/v1/web/search", fixture: "brave.json", contentType: "application/json",
			args:    map[string]any{"query": "wield go tool engine", "count": 30, "freshness": "oneDay"},
			wantReq: seenRequest{Method: "GET", Path: "/res/v1/web/search", Auth: "X-Subscription-Token: BSA-KEY", Query: map[string]string{"q": "wield go tool engine", "count": "20", "freshness": "pd"}},
			want:    twoResults(wieldTitle, "Wield runs tool calls for agents & servers.", "2025-02-11T08:30:00", "3 days ago"),
		},
		{
			provider: "bing", key: "BING-KEY", path: "/v7.0/search", fixture: "bing.json", contentType: "application/json; charset=utf-8",
			args:    map[string]any{"query": "wield go tool engine", "freshness": "week"},
			wantReq: seenRequest{Method: "GET", Path: "/v7.0/search", Auth: "Ocp-Apim-Subscription-Key: BING-KEY", Query: map[string]string{"q": "wield go tool engine", "count": "10", "freshness": "Week", "responseFilter": "Webpages", "textDecorations": "false"}},
			want:    twoResults(wieldTitle, "Wield runs tool calls for agents with validation, approvals and limits.", "2025-03-01T12:00:00.0000000Z", "2025-02-20T00:00:00.0000000"),
		},
		{
			provider: "google", key: "AIza-KEY:017576662512468239146:omuauf_lfve", path: "/customsearch/v1", fixture: "google.json", contentType: "application/json; charset=UTF-8",
			args:    map[string]any{"query": "wield go tool engine", "max_results": 20, "freshness": "oneYear"},
			wantReq: seenRequest{Method: "GET", Path: "/customsearch/v1", Query: map[string]string{"key": "AIza-KEY", "cx": "017576662512468239146:omuauf_lfve", "q": "wield go tool engine", "num": "10", "dateRestrict": "y1"}},
			want:    twoResults(wieldTitle, "Wield runs tool calls for agents with validation,approvals and limits.", "2025-01-15T09:00:00Z", ""),
		},
		{
			provider: "google", key: "AIza-KEY", engineID: "cx-1", path: "/customsearch/v1", fixture: "google.json", contentType: "application/json",
			args:    map[string]any{"query": "wield"},
			wantReq: seenRequest{Method: "GET", Path: "/customsearch/v1", Query: map[string]string{"key": "AIza-KEY", "cx": "cx-1", "q": "wield", "num": "10"}},
			want:    twoResults(wieldTitle, "Wield runs tool calls for agents with validation,approvals and limits.", "2025-01-15T09:00:00Z", ""),
		},
		{
			provider: "bocha", key: "sk-BOCHA", path: "/v1/web-search", fixture: "bocha.json", contentType: "application/json",
			args:    map[string]any{"query": "wield go tool engine", "count": 10, "freshness": "noLimit"},
			wantReq: seenRequest{Method: "POST", Path: "/v1/web-search", Auth: "Authorization: Bearer sk-BOCHA", Body: map[string]any{"query": "wield go tool engine", "freshness": "noLimit", "summary": true, "count": 10.0}},
			want:    twoResults("Wield：面向 AI 智能体的工具引擎", "Wield 为智能体执行工具调用，提供参数校验、审批与并发限制。", "2025-02-10T08:00:00+08:00", "2025-03-02T04:00:00Z"),
		},
		{
			provider: "duckduckgo", path: "/html/", fixture: "duckduckgo.html", contentType: "text/html; charset=UTF-8",
			args:    map[string]any{"query": "wield go tool engine", "freshness": "oneWeek"},
			wantReq: seenRequest{Method: "POST", Path: "/html/", Body: map[string]any{"q": "wield go tool engine", "b": "", "df": "w"}},
			want: []builtin.SearchResult{
				{Title: wieldTitle, URL: "https://example.com/wield?ref=ddg&x=1", Snippet: "Wield runs tool calls for agents with validation, approvals & limits.", Published: "2025-02-11T00:00:00.0000000"},
				{Title: "Go generics and JSON Schema", URL: "https://example.org/generics-schema", Snippet: "Inferring JSON Schema from Go struct tags."},
			},
		},
		{
			provider: "duckduckgo", path: "/html/", fixture: "duckduckgo.html", contentType: "text/html",
			args:    map[string]any{"query": "wield", "count": 1},
			wantReq: seenRequest{Method: "POST", Path: "/html/", Body: map[string]any{"q": "wield", "b": ""}},
			want:    []builtin.SearchResult{{Title: wieldTitle, URL: "https://example.com/wield?ref=ddg&x=1", Snippet: "Wield runs tool calls for agents with validation, approvals & limits.", Published: "2025-02-11T00:00:00.0000000"}},
		},
		{
			provider: "duckduckgo", path: "/html/", fixture: "duckduckgo_noresults.html", contentType: "text/html",
			args:    map[string]any{"query": "zzqqxxjjwwvv"},
			wantReq: seenRequest{Method: "POST", Path: "/html/", Body: map[string]any{"q": "zzqqxxjjwwvv", "b": ""}},
			want:    []builtin.SearchResult{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.fixture, func(t *testing.T) {
			api := &fakeAPI{status: 200, contentType: tt.contentType, body: fixture(t, "search", tt.fixture)}
			srv := httptest.NewServer(api)
			defer srv.Close()
			tool, err := builtin.WebSearch(builtin.SearchOptions{Provider: tt.provider, APIKey: tt.key, EngineID: tt.engineID, Endpoint: srv.URL + tt.path, Guard: loopback()})
			if err != nil {
				t.Fatal(err)
			}
			e := netEngine(t, tool)
			res := netCall(t, e, "web_search", tt.args)
			if !res.OK {
				t.Fatalf("failed: %s %s", res.ErrorType, res.Error)
			}
			var out builtin.WebSearchOutput
			if err := json.Unmarshal(res.Output, &out); err != nil {
				t.Fatal(err)
			}
			want := builtin.WebSearchOutput{Query: tt.args["query"].(string), Provider: tt.provider, Results: tt.want}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("output (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantReq, api.seen); diff != "" {
				t.Errorf("request (-want +got)\n%s", diff)
			}
		})
	}
}

func TestWebSearchFailures(t *testing.T) {
	tests := []struct {
		name        string
		provider    string
		status      int
		contentType string
		body        string
		text        string
		transient   bool
	}{
		{"500", "tavily", 500, "application/json", `{"detail":{"error":"internal"}}`, "tavily: HTTP 500 Internal Server Error: internal", true},
		{"503 html", "brave", 503, "text/html", "<html><body>upstream down</body></html>", "brave: HTTP 503 Service Unavailable", true},
		{"429", "bing", 429, "application/json", `{"error":{"code":"429","message":"Rate limit is exceeded."}}`, "bing: HTTP 429 Too Many Requests: Rate limit is exceeded. (rate limited: try again later)", true},
		{"401", "google", 401, "application/json", `{"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}`, "google: HTTP 401 Unauthorized: API key not valid. Please pass a valid API key. (check the API key)", false},
		{"403 bocha", "bocha", 403, "application/json", `{"code":"403","message":"You do not have enough money","log_id":"x"}`, "bocha: HTTP 403 Forbidden: You do not have enough money (check the API key)", false},
		{"garbage", "tavily", 200, "application/json", "<html>oops</html>", `tavily: the answer is not a search result (invalid character '<' looking for beginning of value): "<html>oops</html>"`, false},
		{"empty body", "bing", 200, "application/json", "", "bing: HTTP 200 with an empty body, not a search result", true},
		{"wrong shape", "brave", 200, "application/json", `{"status":"ok"}`, `brave: the answer is not a search result (type "", want search)`, false},
		{"wrong shape bing", "bing", 200, "application/json", `{"_type":"ErrorResponse","errors":[{"message":"bad"}]}`, `bing: the answer is not a search result (_type "ErrorResponse", want SearchResponse)`, false},
		{"wrong shape google", "google", 200, "application/json", `[1,2]`, "google: the answer is not a search result (json: cannot unmarshal array", false},
		{"no results field", "tavily", 200, "application/json", `{"query":"x"}`, "tavily: the answer is not a search result (no results field)", false},
		{"bocha code", "bocha", 200, "application/json", `{"code":500,"msg":"server busy","data":null}`, "bocha: the answer is not a search result (code 500: server busy)", false},
		{"bocha no data", "bocha", 200, "application/json", `{"code":200,"msg":null}`, "bocha: the answer is not a search result (no data field)", false},
		{"ddg bot check", "duckduckgo", 202, "text/html", string(fixture(t, "search", "duckduckgo_botcheck.html")), "duckduckgo: the answer is not a search result (DuckDuckGo answered with a bot check instead of results)", false},
		{"ddg changed layout", "duckduckgo", 200, "text/html", "<html><body><div class=results><p>new layout</p></div></body></html>", "duckduckgo: the answer is not a search result (no result__a links and no no-results block)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &fakeAPI{status: tt.status, contentType: tt.contentType, body: []byte(tt.body)}
			srv := httptest.NewServer(api)
			defer srv.Close()
			tool, err := builtin.WebSearch(builtin.SearchOptions{Provider: tt.provider, APIKey: "k:cx", Endpoint: srv.URL, Guard: loopback()})
			if err != nil {
				t.Fatal(err)
			}
			// The default engine retries transient failures of idempotent
			// tools: three attempts say the error was transient.
			reg := wield.NewRegistry(nil)
			reg.MustRegister(tool)
			e := engine.New(reg, &engine.Options{Retry: engine.RetryPolicy{MaxAttempts: 3, Backoff: 1}})
			defer e.Close(context.Background())
			res, err := e.Call(context.Background(), wield.Call{Tool: "web_search", Arguments: json.RawMessage(`{"query":"x"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || res.ErrorType != wield.ErrExecution || !strings.Contains(res.Error, tt.text) {
				t.Errorf("got ok=%v %s %q, want execution_error containing %q", res.OK, res.ErrorType, res.Error, tt.text)
			}
			wantAttempts := 1
			if tt.transient {
				wantAttempts = 3
			}
			if res.Attempts != wantAttempts || api.hits != wantAttempts {
				t.Errorf("attempts %d, hits %d, want %d", res.Attempts, api.hits, wantAttempts)
			}
		})
	}
}

func TestWebSearchConfig(t *testing.T) {
	tests := []struct {
		opts builtin.SearchOptions
		err  string
	}{
		{builtin.SearchOptions{}, "web search: no provider (one of bing, bocha, brave, duckduckgo, google, tavily)"},
		{builtin.SearchOptions{Provider: "yahoo", APIKey: "k"}, `web search: unknown provider "yahoo" (one of bing, bocha, brave, duckduckgo, google, tavily)`},
		{builtin.SearchOptions{Provider: "tavily"}, "web search: provider tavily needs an API key (apiKey)"},
		{builtin.SearchOptions{Provider: "Bocha"}, "web search: provider bocha needs an API key (apiKey)"},
		{builtin.SearchOptions{Provider: "google", APIKey: "AIza"}, "web search: provider google needs an engine id (cx): set EngineID, or the API key as KEY:CX"},
		{builtin.SearchOptions{Provider: "duckduckgo"}, ""},
		{builtin.SearchOptions{Provider: "google", APIKey: "AIza", EngineID: "cx"}, ""},
	}
	for _, tt := range tests {
		tool, err := builtin.WebSearch(tt.opts)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.err {
			t.Errorf("%+v: got error %q, want %q", tt.opts, got, tt.err)
		}
		if err == nil && (tool.Name != "web_search" || tool.Category != wield.CategoryNetwork || !tool.Annotations.ReadOnly || !tool.Annotations.OpenWorld) {
			t.Errorf("%+v: tool %s %s %+v", tt.opts, tool.Name, tool.Category, tool.Annotations)
		}
	}
}

// TestWebSearchSeedCall is seed 000's call as written: query, freshness
// noLimit and count 10, with the values as strings (XML CDATA).
func TestWebSearchSeedCall(t *testing.T) {
	api := &fakeAPI{status: 200, contentType: "application/json", body: fixture(t, "search", "bocha.json")}
	srv := httptest.NewServer(api)
	defer srv.Close()
	tool, err := builtin.WebSearch(builtin.SearchOptions{Provider: "bocha", APIKey: "k", Endpoint: srv.URL + "/v1/web-search", Guard: loopback()})
	if err != nil {
		t.Fatal(err)
	}
	e := netEngine(t, tool)
	res := netCall(t, e, "web_search", map[string]string{"query": "your_query_here", "freshness": "noLimit", "count": "10"})
	if !res.OK {
		t.Fatalf("failed: %s %s", res.ErrorType, res.Error)
	}
	want := map[string]any{"query": "your_query_here", "freshness": "noLimit", "summary": true, "count": 10.0}
	if diff := cmp.Diff(want, api.seen.Body); diff != "" {
		t.Errorf("request body (-want +got)\n%s", diff)
	}
	for _, bad := range []map[string]any{{"query": "x", "count": 51}, {"query": "x", "freshness": "fortnight"}, {"query": ""}} {
		if res := netCall(t, e, "web_search", bad); res.OK || res.ErrorType != wield.ErrValidation {
			t.Errorf("%v: got ok=%v %s %s", bad, res.OK, res.ErrorType, res.Error)
		}
	}
}

// ExampleWebSearch runs web_search on Bocha, here a local stand-in that
// answers as the real API does.
func ExampleWebSearch() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"code":200,"msg":null,"data":{"_type":"SearchResponse","webPages":{"value":[
			{"name":"Wield","url":"https://example.com/wield","snippet":"A tool engine.","datePublished":"2025-02-10T08:00:00+08:00"}]}}}`)
	}))
	defer srv.Close()
	tool, err := builtin.WebSearch(builtin.SearchOptions{
		Provider: "bocha",
		APIKey:   "sk-example",
		Endpoint: srv.URL + "/v1/web-search",
		Guard:    loopback(), // the stand-in is on 127.0.0.1; leave Guard nil for the real API
	})
	if err != nil {
		panic(err)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(tool)
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	res, _ := e.Call(context.Background(), wield.Call{Tool: "web_search", Arguments: json.RawMessage(`{"query":"wield","count":5}`)})
	fmt.Println(string(res.Output))
	// Output:
	// {"query":"wield","provider":"bocha","results":[{"title":"Wield","url":"https://example.com/wield","snippet":"A tool engine.","published":"2025-02-10T08:00:00+08:00"}]}
}

// TestSearchBaseURL: a base URL sends each provider's requests to its host
// and path prefix, with the provider's own path after it; its host is
// reachable on loopback though the guard refuses loopback; a bad base URL
// is refused saying why.
func TestSearchBaseURL(t *testing.T) {
	api := &fakeAPI{status: 200, contentType: "application/json", body: fixture(t, "search", "brave.json")}
	srv := httptest.NewServer(api)
	defer srv.Close()
	tool, err := builtin.WebSearch(builtin.SearchOptions{Provider: "brave", APIKey: "k", BaseURL: srv.URL + "/proxy/brave/", Guard: &httptool.Guard{}})
	if err != nil {
		t.Fatal(err)
	}
	res := netCall(t, netEngine(t, tool), "web_search", map[string]any{"query": "wield"})
	if !res.OK {
		t.Fatalf("failed: %s %s", res.ErrorType, res.Error)
	}
	if want := "/proxy/brave/res/v1/web/search"; api.seen.Path != want {
		t.Errorf("path = %q, want %q", api.seen.Path, want)
	}
	for _, bad := range []struct{ url, want string }{
		{"ftp://h/x", "must be an http(s) URL with a host"},
		{"https://user:pw@h/", "carries user information"},
		{"https://h/?key=1", "has a query or fragment"},
		{"/relative", "must be an http(s) URL with a host"},
	} {
		_, err := builtin.WebSearch(builtin.SearchOptions{Provider: "brave", APIKey: "k", BaseURL: bad.url})
		if err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "pw@") {
			t.Errorf("base URL %q: %v, want %q", bad.url, err, bad.want)
		}
	}
}
