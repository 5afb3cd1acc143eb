package mcpbridge

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSrvLoopbackAsParseIP: the guard's loopback tests (netip and the
// listener's address itself, without allocating) decide as net.ParseIP of
// the address's text did.
func TestSrvLoopbackAsParseIP(t *testing.T) {
	oldHost := func(h string) bool {
		if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	for _, h := range []string{"127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1", "localhost", "a.localhost", "10.0.0.1", "::",
		"::1%lo", "fe80::1%eth0", "", "example.com", "127.0.0.1.nip.io", "[::1]", "0x7f.0.0.1", "127.000.000.001"} {
		if got, want := srvIsLoopbackHost(h), oldHost(h); got != want {
			t.Errorf("srvIsLoopbackHost(%q) = %v, net.ParseIP says %v", h, got, want)
		}
	}
	oldLocal := func(addr net.Addr) bool {
		host, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			host = addr.String()
		}
		ip := net.ParseIP(host)
		return ip == nil || ip.IsLoopback()
	}
	for _, a := range []*net.TCPAddr{{IP: net.IPv4(127, 0, 0, 1), Port: 1}, {IP: net.IPv4(10, 0, 0, 1), Port: 1}, {IP: net.IPv6loopback},
		{IP: net.ParseIP("fe80::1"), Zone: "eth0"}, {IP: net.ParseIP("::1"), Zone: "lo"}, {}, {IP: net.IP{1, 2, 3}}, {IP: net.IPv6unspecified},
		{IP: net.IPv4(127, 0, 0, 1).To4()}} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(a)))
		if got, want := srvLocalIsLoopback(r), oldLocal(a); got != want {
			t.Errorf("srvLocalIsLoopback(%v) = %v, net.ParseIP says %v", a, got, want)
		}
		if n := testing.AllocsPerRun(20, func() { srvLocalIsLoopback(r) }); n != 0 {
			t.Errorf("srvLocalIsLoopback(%v) allocates %v times", a, n)
		}
	}
}
