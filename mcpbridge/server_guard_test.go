package mcpbridge_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/mcpbridge"
)

func TestServerGuard(t *testing.T) {
	f := srvNew(t, &mcpbridge.ServerOptions{
		AllowedHosts:   []string{"wield.internal"},
		AllowedOrigins: []string{"https://console.example"},
	}, nil)
	ts := httptest.NewServer(f.srv.Handler())
	defer ts.Close()
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	tests := []struct {
		name   string
		host   string // "" keeps the listener's address
		origin string
		site   string // Sec-Fetch-Site
		want   int
	}{
		{name: "loopback address", want: http.StatusOK},
		{name: "localhost name", host: "localhost", want: http.StatusOK},
		{name: "allowed host", host: "wield.internal:8080", want: http.StatusOK},
		{name: "rebinding host", host: "evil.example", want: http.StatusForbidden},
		{name: "rebinding host with port", host: "evil.example:80", want: http.StatusForbidden},
		{name: "loopback origin, other port", origin: "http://localhost:5173", want: http.StatusForbidden},
		{name: "same address, other port", origin: "http://" + otherPort(ts.URL), want: http.StatusForbidden},
		{name: "same origin, other scheme", origin: strings.Replace(ts.URL, "http:", "https:", 1), want: http.StatusForbidden},
		{name: "same-site without Origin", site: "same-site", want: http.StatusForbidden},
		{name: "cross-site without Origin", site: "cross-site", want: http.StatusForbidden},
		{name: "same origin, marked so", origin: ts.URL, site: "same-origin", want: http.StatusOK},
		{name: "allowed origin, cross-site", origin: "https://console.example", site: "cross-site", want: http.StatusOK},
		{name: "same origin", origin: ts.URL, want: http.StatusOK},
		{name: "allowed origin", origin: "https://console.example", want: http.StatusOK},
		{name: "foreign origin", origin: "http://evil.example", want: http.StatusForbidden},
		{name: "foreign origin on an allowed host", host: "wield.internal", origin: "https://evil.example", want: http.StatusForbidden},
		{name: "null origin", origin: "null", want: http.StatusForbidden},
		{name: "file origin", origin: "file://", want: http.StatusForbidden},
	}
	var got, want []string
	for _, tt := range tests {
		req, err := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tt.host != "" {
			req.Host = tt.host
		}
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		if tt.site != "" {
			req.Header.Set("Sec-Fetch-Site", tt.site)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got = append(got, tt.name+": "+http.StatusText(resp.StatusCode))
		want = append(want, tt.name+": "+http.StatusText(tt.want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// otherPort is the host of url with a port one above its own: the address
// of another page on the same machine.
func otherPort(url string) string {
	host, port, err := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	if err != nil {
		panic(err)
	}
	n, _ := strconv.Atoi(port)
	return net.JoinHostPort(host, strconv.Itoa(n%65535+1))
}
