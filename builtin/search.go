package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/wieldhq/wield/internal/searchurl"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httptool"
)

// SearchProvider is a web search engine behind web_search. Search returns the
// results in the engine's order, at most req.Count of them. Its errors reach
// the model: a *[wield.Error] of type [wield.ErrExecution] that names the
// provider, [wield.Transient] when trying again may help (HTTP 429, 5xx).
type SearchProvider interface {
	Name() string
	Search(ctx context.Context, req SearchRequest) ([]SearchResult, error)
}

// SearchRequest is one query, normalized for every provider.
type SearchRequest struct {
	Query string
	// Count is how many results to return, 1 to 50; providers with a lower
	// maximum return their maximum.
	Count int
	// Freshness limits results by age: "" (no limit), "day", "week",
	// "month" or "year".
	Freshness string
}

// SearchResult is one hit, in the same shape whatever the provider.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	// Published is the date the provider gives: a publication date where
	// it has one, else its own (such as Bing's last crawl or Brave's "2
	// days ago").
	Published string `json:"published,omitempty"`
}

// SearchOptions configures web_search: seed 003's webSearch block (provider,
// apiKey, maxResults) with what a Go program adds.
type SearchOptions struct {
	// Provider is tavily, brave, bing, google, bocha or duckduckgo.
	Provider string
	// APIKey is the provider's key; duckduckgo needs none. For google it is
	// the API key, or "KEY:CX" when EngineID is empty.
	APIKey string
	// EngineID is Google Programmable Search's engine id (cx).
	EngineID string
	// MaxResults is the number of results when a call asks for none; zero
	// means 10.
	MaxResults int
	// BaseURL replaces the scheme, host and port of the provider's API, and
	// prefixes its path: with "https://proxy.example/brave", brave's
	// requests go to https://proxy.example/brave/res/v1/web/search. For a
	// proxy in front of a provider or a self-hosted service that answers in
	// the provider's shape. Its host is reachable even when internal (the
	// operator named it), other hosts stay behind Guard. Empty means the
	// provider's public API.
	BaseURL string
	// Endpoint overrides the provider's whole URL, for tests; it wins over
	// BaseURL. Empty means the provider's public API.
	Endpoint string
	// Guard keeps requests away from internal addresses; nil refuses all.
	Guard *httptool.Guard
	// Timeout bounds one search; zero means [DefaultNetTimeout].
	Timeout time.Duration
}

// SearchProviders lists the names NewSearchProvider and WebSearch accept.
var SearchProviders = []string{"bing", "bocha", "brave", "duckduckgo", "google", "tavily"}

// maxSearchResponse bounds a search API's answer: results are small.
const maxSearchResponse = 4 << 20

// NewSearchProvider builds the provider that opts name. It returns an error
// for an unknown provider or a missing key of one that needs a key.
func NewSearchProvider(opts SearchOptions) (SearchProvider, error) {
	name := strings.ToLower(strings.TrimSpace(opts.Provider))
	if name == "" {
		return nil, fmt.Errorf("web search: no provider (one of %s)", strings.Join(SearchProviders, ", "))
	}
	if !slices.Contains(SearchProviders, name) {
		return nil, fmt.Errorf("web search: unknown provider %q (one of %s)", opts.Provider, strings.Join(SearchProviders, ", "))
	}
	if name != "duckduckgo" && opts.APIKey == "" {
		return nil, fmt.Errorf("web search: provider %s needs an API key (apiKey)", name)
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultNetTimeout
	}
	base, err := searchurl.Check(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	guard := opts.Guard
	if base != nil {
		// The operator named this host: reachable on its port even when
		// internal (a SearxNG or a proxy on the LAN).
		g := httptool.Guard{}
		if guard != nil {
			g = *guard
		}
		g.AllowHosts = append(slices.Clone(g.AllowHosts), base.Host)
		guard = &g
	}
	c := searchClient{name: name, f: newFetcher(guard, timeout, maxSearchResponse), key: opts.APIKey}
	endpoint := func(def string) string {
		if opts.Endpoint != "" {
			return opts.Endpoint
		}
		if base != nil {
			u, _ := url.Parse(def)
			return strings.TrimSuffix(base.String(), "/") + u.EscapedPath()
		}
		return def
	}
	switch name {
	case "tavily":
		return &tavily{c, endpoint("https://api.tavily.com/search")}, nil
	case "brave":
		return &brave{c, endpoint("https://api.search.brave.com/res/v1/web/search")}, nil
	case "bing":
		return &bing{c, endpoint("https://api.bing.microsoft.com/v7.0/search")}, nil
	case "google":
		key, cx := opts.APIKey, opts.EngineID
		if cx == "" {
			var ok bool
			key, cx, ok = strings.Cut(opts.APIKey, ":")
			if !ok || key == "" || cx == "" {
				return nil, fmt.Errorf("web search: provider google needs an engine id (cx): set EngineID, or the API key as KEY:CX")
			}
		}
		c.key = key
		return &google{c, endpoint("https://www.googleapis.com/customsearch/v1"), cx}, nil
	case "bocha":
		return &bocha{c, endpoint("https://api.bochaai.com/v1/web-search")}, nil
	default: // duckduckgo
		return &duckduckgo{c, endpoint("https://html.duckduckgo.com/html/")}, nil
	}
}

// WebSearchInput is the input of web_search. count, limit and max_results
// mean the same: seed 000 calls it count (and max_results), seed 003 limit.
type WebSearchInput struct {
	Query      string `json:"query" description:"Search query using keywords" minLength:"1" maxLength:"2000"`
	Count      int    `json:"count,omitempty" description:"Number of results to return (1-50)" minimum:"1" maximum:"50"`
	Limit      int    `json:"limit,omitempty" description:"Same as count" minimum:"1" maximum:"50"`
	MaxResults int    `json:"max_results,omitempty" description:"Same as count" minimum:"1" maximum:"50"`
	Freshness  string `json:"freshness,omitempty" description:"Time range filter: noLimit, oneDay, oneWeek, oneMonth, oneYear (or day, week, month, year)" enum:"noLimit,oneDay,oneWeek,oneMonth,oneYear,day,week,month,year" default:"noLimit"`
}

// WebSearchOutput is seed 003's { results: SearchResult[] }, with the query
// and the provider that answered.
type WebSearchOutput struct {
	Query    string         `json:"query"`
	Provider string         `json:"provider"`
	Results  []SearchResult `json:"results"`
}

// WebSearch returns the web_search tool on the provider that opts name:
// seed 000's parameters (query, freshness, count) and seed 003's (limit),
// seed 003's output { results: [...] }. WebSearch returns an error for an
// unknown provider or a missing API key.
//
// The tool's errors: validation_error for an empty query, a count out of 1
// to 50 or an unknown freshness; permission_denied when the endpoint is an
// internal address the guard refuses; execution_error naming the provider
// and the HTTP status when the provider fails (transient for 429 and 5xx),
// answers with an empty body or with something that is not its result
// shape; timeout when it does not answer in time.
func WebSearch(opts SearchOptions) (*wield.Tool, error) {
	p, err := NewSearchProvider(opts)
	if err != nil {
		return nil, err
	}
	t := WebSearchWith(p, opts.MaxResults)
	if opts.Timeout > 0 {
		t.Timeout = opts.Timeout + 5*time.Second
	}
	return t, nil
}

// WebSearchWith returns web_search on any provider; defaultCount is the
// number of results when a call asks for none (zero means 10).
func WebSearchWith(p SearchProvider, defaultCount int) *wield.Tool {
	if defaultCount <= 0 {
		defaultCount = 10
	}
	defaultCount = min(defaultCount, 50)
	t := wield.Func("web_search", "Search the web for information using "+p.Name()+" and return titles, URLs and snippets.",
		func(ctx context.Context, in WebSearchInput) (WebSearchOutput, error) {
			q := strings.TrimSpace(in.Query)
			if q == "" {
				return WebSearchOutput{}, wield.Errorf(wield.ErrValidation, "query is empty: give search keywords")
			}
			fresh, ok := searchFreshness[in.Freshness]
			if !ok {
				return WebSearchOutput{}, wield.Errorf(wield.ErrValidation, "freshness %q is not one of noLimit, oneDay, oneWeek, oneMonth, oneYear", in.Freshness)
			}
			n := firstNonZero(in.Count, in.Limit, in.MaxResults, defaultCount)
			if n < 1 || n > 50 {
				return WebSearchOutput{}, wield.Errorf(wield.ErrValidation, "count %d is not between 1 and 50", n)
			}
			res, err := p.Search(ctx, SearchRequest{Query: q, Count: n, Freshness: fresh})
			if err != nil {
				return WebSearchOutput{}, err
			}
			if len(res) > n {
				res = res[:n]
			}
			if res == nil {
				res = []SearchResult{}
			}
			return WebSearchOutput{Query: q, Provider: p.Name(), Results: res}, nil
		})
	t.Category = wield.CategoryNetwork
	t.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}
	t.Tags = []string{"network", "search", "builtin"}
	t.Timeout = DefaultNetTimeout + 5*time.Second
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}

// searchFreshness maps the accepted values to the normalized ones.
var searchFreshness = map[string]string{
	"": "", "noLimit": "",
	"oneDay": "day", "oneWeek": "week", "oneMonth": "month", "oneYear": "year",
	"day": "day", "week": "week", "month": "month", "year": "year",
}

func firstNonZero(vs ...int) int {
	for _, v := range vs {
		if v != 0 {
			return v
		}
	}
	return 0
}

// searchClient is what every provider shares: its name, the guarded client
// and the key.
type searchClient struct {
	name string
	f    *fetcher
	key  string
}

// Name returns the provider's name.
func (c *searchClient) Name() string { return c.name }

// fetch sends req and returns the body of a 2xx answer. Any other answer,
// an empty body or a failed round trip is an execution_error naming the
// provider; 429 and 5xx are transient.
func (c *searchClient) fetch(ctx context.Context, req *http.Request) ([]byte, error) {
	resp, err := c.f.do(ctx, req, 0)
	if err != nil {
		var we *wield.Error
		if ctx.Err() == nil && errors.As(err, &we) {
			we.Message = c.name + ": " + we.Message
		}
		return nil, err
	}
	if resp.truncated {
		return nil, wield.Errorf(wield.ErrExecution, "%s: the answer is larger than %d bytes: not a search result", c.name, c.f.max)
	}
	if resp.status < 200 || resp.status > 299 {
		msg := fmt.Sprintf("%s: HTTP %d %s", c.name, resp.status, http.StatusText(resp.status))
		if m := apiMessage(resp.body); m != "" {
			msg += ": " + m
		}
		switch {
		case resp.status == http.StatusUnauthorized || resp.status == http.StatusForbidden:
			msg += " (check the API key)"
		case resp.status == http.StatusTooManyRequests:
			msg += " (rate limited: try again later)"
		}
		err := wield.Errorf(wield.ErrExecution, "%s", msg)
		if resp.status == http.StatusTooManyRequests || resp.status >= 500 {
			return nil, wield.Transient(err)
		}
		return nil, err
	}
	if len(bytes.TrimSpace(resp.body)) == 0 {
		return nil, wield.Transient(wield.Errorf(wield.ErrExecution, "%s: HTTP %d with an empty body, not a search result", c.name, resp.status))
	}
	return resp.body, nil
}

// getJSON fetches and decodes a JSON answer into v.
func (c *searchClient) getJSON(ctx context.Context, req *http.Request, v any) error {
	req.Header.Set("Accept", "application/json")
	body, err := c.fetch(ctx, req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return searchGarbage(c.name, body, err.Error())
	}
	return nil
}

// searchGarbage is the error for an answer that is not what the provider sends.
func searchGarbage(provider string, body []byte, why string) error {
	if len(body) == 0 {
		return wield.Errorf(wield.ErrExecution, "%s: the answer is not a search result (%s)", provider, why)
	}
	return wield.Errorf(wield.ErrExecution, "%s: the answer is not a search result (%s): %q", provider, why, textPreview(body, 120))
}

func textPreview(b []byte, n int) string {
	s := strings.ToValidUTF8(string(bytes.TrimSpace(b)), "\uFFFD")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// apiMessage digs the human message out of an API error body: {"message"},
// {"msg"}, {"error": "..." | {"message"}}, {"errors": [{"message"}]},
// {"detail": "..." | {"error"}}; for other bodies a short preview.
func apiMessage(body []byte) string {
	var v map[string]any
	if json.Unmarshal(body, &v) != nil {
		if len(bytes.TrimSpace(body)) == 0 || bytes.Contains(body, []byte("<")) {
			return ""
		}
		return textPreview(body, 200)
	}
	str := func(x any) string {
		switch x := x.(type) {
		case string:
			return x
		case map[string]any:
			for _, k := range []string{"message", "error", "msg"} {
				if s, ok := x[k].(string); ok {
					return s
				}
			}
		case []any:
			if len(x) > 0 {
				if m, ok := x[0].(map[string]any); ok {
					if s, ok := m["message"].(string); ok {
						return s
					}
				}
			}
		}
		return ""
	}
	for _, k := range []string{"message", "msg", "error", "errors", "detail"} {
		if s := str(v[k]); s != "" {
			return textPreview([]byte(s), 300)
		}
	}
	return ""
}

// newSearchRequest makes a request with a body read from b; a nil b sends none.
func newSearchRequest(method, u string, b []byte, contentType string) (*http.Request, error) {
	var r io.Reader
	if b != nil {
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		return nil, fmt.Errorf("search endpoint %q: %w", u, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "wield/1.0 (+https://github.com/wieldhq/wield)")
	return req, nil
}
