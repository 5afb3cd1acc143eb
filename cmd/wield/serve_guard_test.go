package main

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestLoopbackNameAsParseIP: loopbackName (netip, no allocation) decides
// as net.ParseIP's IsLoopback did, for the hosts a request may name.
func TestLoopbackNameAsParseIP(t *testing.T) {
	old := func(h string) bool {
		if strings.EqualFold(h, "localhost") {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	for _, h := range []string{"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1", "localhost", "LocalHost",
		"10.0.0.1", "::", "0.0.0.0", "::1%lo", "fe80::1%eth0", "127.0.0.1.nip.io", "example.com", "", "1.2.3", "127.000.000.001",
		"::ffff:10.0.0.1", "[::1]", "0x7f.0.0.1"} {
		if got, want := loopbackName(h), old(h); got != want {
			t.Errorf("loopbackName(%q) = %v, net.ParseIP says %v", h, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { loopbackName(hostOnly("127.0.0.1:7420")) }); n != 0 {
		t.Errorf("loopbackName allocates %v times", n)
	}
}

func TestJSONBody(t *testing.T) {
	for ct, want := range map[string]bool{"application/json": true, "Application/JSON": true, "application/json; charset=utf-8": true,
		"text/plain": false, "": false, "application/json;": true, "application/jsonx": false, "multipart/form-data; boundary=x": false} {
		r, _ := http.NewRequest("POST", "/", nil)
		r.Header.Set("Content-Type", ct)
		if got := jsonBody(r); got != want {
			t.Errorf("jsonBody(%q) = %v, want %v", ct, got, want)
		}
	}
	r, _ := http.NewRequest("POST", "/", nil)
	r.Header.Set("Content-Type", "application/json")
	if n := testing.AllocsPerRun(100, func() { jsonBody(r) }); n != 0 {
		t.Errorf("jsonBody of application/json allocates %v times", n)
	}
}
