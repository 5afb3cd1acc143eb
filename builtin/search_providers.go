package builtin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	nethtml "golang.org/x/net/html"
)

// tavily is Tavily's search API: POST /search with a JSON body and a bearer
// key; results[] of {title, url, content, published_date}.
type tavily struct {
	searchClient
	endpoint string
}

func (p *tavily) Search(ctx context.Context, r SearchRequest) ([]SearchResult, error) {
	body := map[string]any{"query": r.Query, "max_results": min(r.Count, 20), "search_depth": "basic"}
	if r.Freshness != "" {
		body["time_range"] = r.Freshness
	}
	b, _ := json.Marshal(body)
	req, err := newSearchRequest(http.MethodPost, p.endpoint, b, "application/json")
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	var out struct {
		Results *[]struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"published_date"`
		} `json:"results"`
	}
	if err := p.getJSON(ctx, req, &out); err != nil {
		return nil, err
	}
	if out.Results == nil {
		return nil, searchGarbage(p.name, nil, "no results field")
	}
	res := make([]SearchResult, 0, len(*out.Results))
	for _, x := range *out.Results {
		res = append(res, SearchResult{Title: x.Title, URL: x.URL, Snippet: x.Content, Published: x.PublishedDate})
	}
	return res, nil
}

// brave is the Brave Search API: GET /res/v1/web/search with
// X-Subscription-Token; web.results[] of {title, url, description, age,
// page_age}.
type brave struct {
	searchClient
	endpoint string
}

var braveFreshness = map[string]string{"day": "pd", "week": "pw", "month": "pm", "year": "py"}

func (p *brave) Search(ctx context.Context, r SearchRequest) ([]SearchResult, error) {
	q := url.Values{"q": {r.Query}, "count": {strconv.Itoa(min(r.Count, 20))}}
	if f := braveFreshness[r.Freshness]; f != "" {
		q.Set("freshness", f)
	}
	req, err := newSearchRequest(http.MethodGet, withQuery(p.endpoint, q), nil, "")
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Subscription-Token", p.key)
	var out struct {
		Type string `json:"type"`
		Web  struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
				Age         string `json:"age"`
				PageAge     string `json:"page_age"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := p.getJSON(ctx, req, &out); err != nil {
		return nil, err
	}
	if out.Type != "search" {
		return nil, searchGarbage(p.name, nil, fmt.Sprintf("type %q, want search", out.Type))
	}
	res := make([]SearchResult, 0, len(out.Web.Results))
	for _, x := range out.Web.Results {
		res = append(res, SearchResult{Title: stripTags(x.Title), URL: x.URL, Snippet: stripTags(x.Description), Published: cmp.Or(x.PageAge, x.Age)})
	}
	return res, nil
}

// bing is the Bing Web Search API v7: GET /v7.0/search with
// Ocp-Apim-Subscription-Key; webPages.value[] of {name, url, snippet,
// datePublished, dateLastCrawled}.
type bing struct {
	searchClient
	endpoint string
}

func (p *bing) Search(ctx context.Context, r SearchRequest) ([]SearchResult, error) {
	q := url.Values{"q": {r.Query}, "count": {strconv.Itoa(min(r.Count, 50))}, "responseFilter": {"Webpages"}, "textDecorations": {"false"}}
	switch r.Freshness {
	case "day", "week", "month":
		q.Set("freshness", strings.ToUpper(r.Freshness[:1])+r.Freshness[1:])
	case "year": // Bing has no Year: a date range does it
		now := time.Now().UTC()
		q.Set("freshness", now.AddDate(-1, 0, 0).Format(time.DateOnly)+".."+now.Format(time.DateOnly))
	}
	req, err := newSearchRequest(http.MethodGet, withQuery(p.endpoint, q), nil, "")
	if err != nil {
		return nil, err
	}
	req.Header.Set("Ocp-Apim-Subscription-Key", p.key)
	var out struct {
		Type     string `json:"_type"`
		WebPages struct {
			Value []struct {
				Name            string `json:"name"`
				URL             string `json:"url"`
				Snippet         string `json:"snippet"`
				DatePublished   string `json:"datePublished"`
				DateLastCrawled string `json:"dateLastCrawled"`
			} `json:"value"`
		} `json:"webPages"`
	}
	if err := p.getJSON(ctx, req, &out); err != nil {
		return nil, err
	}
	if out.Type != "SearchResponse" {
		return nil, searchGarbage(p.name, nil, fmt.Sprintf("_type %q, want SearchResponse", out.Type))
	}
	res := make([]SearchResult, 0, len(out.WebPages.Value))
	for _, x := range out.WebPages.Value {
		res = append(res, SearchResult{Title: x.Name, URL: x.URL, Snippet: x.Snippet, Published: cmp.Or(x.DatePublished, x.DateLastCrawled)})
	}
	return res, nil
}

// google is Google Programmable Search (Custom Search JSON API): GET
// /customsearch/v1 with key and cx; items[] of {title, link, snippet,
// pagemap.metatags}.
type google struct {
	searchClient
	endpoint string
	cx       string
}

var googleFreshness = map[string]string{"day": "d1", "week": "w1", "month": "m1", "year": "y1"}

func (p *google) Search(ctx context.Context, r SearchRequest) ([]SearchResult, error) {
	q := url.Values{"key": {p.key}, "cx": {p.cx}, "q": {r.Query}, "num": {strconv.Itoa(min(r.Count, 10))}}
	if f := googleFreshness[r.Freshness]; f != "" {
		q.Set("dateRestrict", f)
	}
	req, err := newSearchRequest(http.MethodGet, withQuery(p.endpoint, q), nil, "")
	if err != nil {
		return nil, err
	}
	var out struct {
		Kind  string `json:"kind"`
		Items []struct {
			Title   string `json:"title"`
			Link    string `json:"link"`
			Snippet string `json:"snippet"`
			Pagemap struct {
				Metatags []map[string]any `json:"metatags"`
			} `json:"pagemap"`
		} `json:"items"`
	}
	if err := p.getJSON(ctx, req, &out); err != nil {
		return nil, err
	}
	if out.Kind != "customsearch#search" {
		return nil, searchGarbage(p.name, nil, fmt.Sprintf("kind %q, want customsearch#search", out.Kind))
	}
	res := make([]SearchResult, 0, len(out.Items))
	for _, x := range out.Items {
		var published string
		for _, m := range x.Pagemap.Metatags {
			if s, ok := m["article:published_time"].(string); ok {
				published = s
				break
			}
		}
		res = append(res, SearchResult{Title: x.Title, URL: x.Link, Snippet: strings.ReplaceAll(x.Snippet, "\n", ""), Published: published})
	}
	return res, nil
}

// bocha is Bocha AI's web search (seed 000): POST /v1/web-search with a
// bearer key; {code, msg, data: {webPages: {value[] of {name, url, snippet,
// summary, datePublished}}}}.
type bocha struct {
	searchClient
	endpoint string
}

var bochaFreshness = map[string]string{"": "noLimit", "day": "oneDay", "week": "oneWeek", "month": "oneMonth", "year": "oneYear"}

func (p *bocha) Search(ctx context.Context, r SearchRequest) ([]SearchResult, error) {
	b, _ := json.Marshal(map[string]any{"query": r.Query, "freshness": bochaFreshness[r.Freshness], "summary": true, "count": min(r.Count, 50)})
	req, err := newSearchRequest(http.MethodPost, p.endpoint, b, "application/json")
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	var out struct {
		Code *int   `json:"code"`
		Msg  string `json:"msg"`
		Data *struct {
			WebPages struct {
				Value []struct {
					Name            string `json:"name"`
					URL             string `json:"url"`
					Snippet         string `json:"snippet"`
					Summary         string `json:"summary"`
					DatePublished   string `json:"datePublished"`
					DateLastCrawled string `json:"dateLastCrawled"`
				} `json:"value"`
			} `json:"webPages"`
		} `json:"data"`
	}
	if err := p.getJSON(ctx, req, &out); err != nil {
		return nil, err
	}
	if out.Code != nil && *out.Code != 200 {
		return nil, searchGarbage(p.name, nil, fmt.Sprintf("code %d: %s", *out.Code, out.Msg))
	}
	if out.Data == nil {
		return nil, searchGarbage(p.name, nil, "no data field")
	}
	res := make([]SearchResult, 0, len(out.Data.WebPages.Value))
	for _, x := range out.Data.WebPages.Value {
		res = append(res, SearchResult{Title: x.Name, URL: x.URL, Snippet: cmp.Or(x.Summary, x.Snippet), Published: cmp.Or(x.DatePublished, x.DateLastCrawled)})
	}
	return res, nil
}

// duckduckgo reads DuckDuckGo's HTML page (no key): results are a.result__a
// links (through /l/?uddg= redirects) with a .result__snippet each.
type duckduckgo struct {
	searchClient
	endpoint string
}

var ddgFreshness = map[string]string{"day": "d", "week": "w", "month": "m", "year": "y"}

func (p *duckduckgo) Search(ctx context.Context, r SearchRequest) ([]SearchResult, error) {
	form := url.Values{"q": {r.Query}, "b": {""}}
	if f := ddgFreshness[r.Freshness]; f != "" {
		form.Set("df", f)
	}
	req, err := newSearchRequest(http.MethodPost, p.endpoint, []byte(form.Encode()), "application/x-www-form-urlencoded")
	if err != nil {
		return nil, err
	}
	// The HTML endpoint answers browsers; a bare client gets a bot check.
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 wield/1.0")
	req.Header.Set("Accept", "text/html")
	body, err := p.fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	res, err := parseDuckDuckGo(string(body))
	if err != nil {
		return nil, searchGarbage(p.name, body, err.Error())
	}
	if len(res) > r.Count {
		res = res[:r.Count]
	}
	return res, nil
}

// parseDuckDuckGo extracts the organic results of DuckDuckGo's HTML page. A
// page with neither results nor DuckDuckGo's "no results" block (a bot check,
// a changed layout) is an error, not an empty list.
func parseDuckDuckGo(page string) ([]SearchResult, error) {
	doc, err := nethtml.Parse(strings.NewReader(page))
	if err != nil {
		return nil, fmt.Errorf("parse HTML: %w", err)
	}
	res := []SearchResult{}
	noResults := false
	var walk func(n *nethtml.Node)
	walk = func(n *nethtml.Node) {
		if n.Type == nethtml.ElementNode {
			switch {
			case hasClass(n, "no-results") || hasClass(n, "result--no-result"):
				noResults = true
				return
			case hasClass(n, "result--ad"):
				return
			case hasClass(n, "result") || hasClass(n, "web-result"):
				if r, ok := ddgResult(n); ok {
					res = append(res, r)
					return
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(res) == 0 && !noResults {
		if strings.Contains(page, "anomaly") || strings.Contains(page, "challenge") {
			return nil, fmt.Errorf("DuckDuckGo answered with a bot check instead of results")
		}
		return nil, fmt.Errorf("no result__a links and no no-results block")
	}
	return res, nil
}

// ddgResult reads one result block.
func ddgResult(n *nethtml.Node) (SearchResult, bool) {
	a := findNode(n, func(x *nethtml.Node) bool { return x.Data == "a" && hasClass(x, "result__a") })
	if a == nil {
		return SearchResult{}, false
	}
	link := unwrapDDG(attr(a, "href"))
	if link == "" {
		return SearchResult{}, false
	}
	r := SearchResult{Title: collapseSpace(nodeText(a)), URL: link}
	if s := findNode(n, func(x *nethtml.Node) bool { return hasClass(x, "result__snippet") }); s != nil {
		r.Snippet = collapseSpace(nodeText(s))
	}
	if u := findNode(n, func(x *nethtml.Node) bool { return hasClass(x, "result__extras__url") }); u != nil {
		// The date, when there is one, follows the URL: "  2024-05-01T00:00:00.0000000".
		for c := u.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == nethtml.ElementNode && c.Data == "span" {
				if t := collapseSpace(nodeText(c)); ddgDate.MatchString(t) {
					r.Published = t
				}
			}
		}
	}
	return r, true
}

var ddgDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`)

// unwrapDDG turns DuckDuckGo's redirect link //duckduckgo.com/l/?uddg=URL
// into URL; an ad link (/y.js) is dropped.
func unwrapDDG(href string) string {
	if strings.HasPrefix(href, "//") {
		href = "https:" + href
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if strings.HasSuffix(u.Hostname(), "duckduckgo.com") {
		if t := u.Query().Get("uddg"); t != "" {
			return t
		}
		return ""
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	return u.String()
}

func hasClass(n *nethtml.Node, class string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" {
			for _, c := range strings.Fields(a.Val) {
				if c == class {
					return true
				}
			}
		}
	}
	return false
}

func attr(n *nethtml.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// findNode returns the first element under n (n included) that ok accepts.
func findNode(n *nethtml.Node, ok func(*nethtml.Node) bool) *nethtml.Node {
	if n.Type == nethtml.ElementNode && ok(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findNode(c, ok); f != nil {
			return f
		}
	}
	return nil
}

// nodeText is the text under n, as it comes.
func nodeText(n *nethtml.Node) string {
	var b strings.Builder
	var walk func(*nethtml.Node)
	walk = func(n *nethtml.Node) {
		if n.Type == nethtml.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

var tagPattern = regexp.MustCompile(`<[^>]*>`)

// stripTags removes the highlighting markup (<strong>) some APIs put in
// titles and snippets.
func stripTags(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	return html.UnescapeString(tagPattern.ReplaceAllString(s, ""))
}

// withQuery appends q to endpoint, keeping a query it already has.
func withQuery(endpoint string, q url.Values) string {
	sep := "?"
	if strings.Contains(endpoint, "?") {
		sep = "&"
	}
	return endpoint + sep + q.Encode()
}
