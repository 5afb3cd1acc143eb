package mcpbridge

import (
	"net/url"
	"testing"
)

// TestImpSameServer: the configured headers go to the configured scheme,
// host and port, and to the same host over https; not to another port,
// another host (a subdomain included), nor from https down to http.
func TestImpSameServer(t *testing.T) {
	for _, c := range []struct {
		home, to string
		want     bool
	}{
		{"http://mcp.example.com/mcp", "http://mcp.example.com/other", true},
		{"http://mcp.example.com/mcp", "http://MCP.example.com:80/mcp", true},
		{"http://mcp.example.com/mcp", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/mcp", "https://mcp.example.com:443/x", true},
		{"https://mcp.example.com/mcp", "http://mcp.example.com/mcp", false},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", false},
		{"http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp", false},
		{"https://example.com/mcp", "https://evil.example.com/mcp", false},
		{"https://example.com/mcp", "https://example.com.evil.net/mcp", false},
	} {
		home, _ := url.Parse(c.home)
		to, _ := url.Parse(c.to)
		if got := impSameServer(home, to); got != c.want {
			t.Errorf("impSameServer(%s, %s) = %v, want %v", c.home, c.to, got, c.want)
		}
	}
	if impSameServer(nil, &url.URL{Scheme: "http", Host: "x"}) {
		t.Error("no configured URL: a request got the headers")
	}
}
