// Package searchurl checks the base URL of a web search provider, once for
// the built-in web_search tool that calls it and the configuration that
// names it (web_search.base_url), so the two never disagree.
package searchurl

import (
	"fmt"
	"net/url"
	"strings"
)

// Check checks a provider's base URL: http or https, a host, and no user
// information (a key goes in the API key, not where logs show it), query
// or fragment. Empty is nil, the provider's own.
func Check(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return nil, fmt.Errorf("web search: base URL %q is not a URL: %v", raw, err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return nil, fmt.Errorf("web search: base URL %q must be an http(s) URL with a host, like https://search.example.com", raw)
	case u.User != nil:
		return nil, fmt.Errorf("web search: base URL %q carries user information; give the key as the API key instead", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("web search: base URL %q has a query or fragment; give only scheme, host and path prefix", raw)
	}
	return u, nil
}
