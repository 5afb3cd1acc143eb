package httptool

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestParseEndpoint(t *testing.T) {
	good := []struct {
		in   string
		want Endpoint
		out  string
	}{
		{"127.0.0.1:8080", Endpoint{netip.MustParsePrefix("127.0.0.1/32"), 8080}, "127.0.0.1:8080"},
		{"[::1]:8080", Endpoint{netip.MustParsePrefix("::1/128"), 8080}, "[::1]:8080"},
		{"10.0.0.0/8:443", Endpoint{netip.MustParsePrefix("10.0.0.0/8"), 443}, "10.0.0.0/8:443"},
		{"10.1.2.3/8:443", Endpoint{netip.MustParsePrefix("10.0.0.0/8"), 443}, "10.0.0.0/8:443"},
		{"[fd00::/8]:9000", Endpoint{netip.MustParsePrefix("fd00::/8"), 9000}, "[fd00::/8]:9000"},
	}
	for _, tt := range good {
		got, err := ParseEndpoint(tt.in)
		if err != nil {
			t.Errorf("ParseEndpoint(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want || got.String() != tt.out {
			t.Errorf("ParseEndpoint(%q) = %v (%s), want %v (%s)", tt.in, got, got, tt.want, tt.out)
		}
	}
	for _, in := range []string{"127.0.0.1", "::1", "127.0.0.1:http", "127.0.0.1:0", "127.0.0.1:70000", "[::1]", "localhost:80", "fd00::/8:443", "10.0.0.0/33:1"} {
		if e, err := ParseEndpoint(in); err == nil {
			t.Errorf("ParseEndpoint(%q) = %v, want an error", in, e)
		}
	}
}

// own starts a server that the guard is told is wield's own, and returns
// its URL and port.
func ownServer(t *testing.T) (string, uint16) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("wield")) }))
	t.Cleanup(srv.Close)
	t.Cleanup(Listening(srv.Listener.Addr()))
	return srv.URL, uint16(srv.Listener.Addr().(*net.TCPAddr).Port)
}

func get(g *Guard, url string) (string, error) {
	resp, err := g.Client(5 * time.Second).Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 64)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	return b.String(), nil
}

// TestGuardRefusesOwnServer: with loopback allowed, wield's own address is
// still refused, named directly, as localhost, as 0.0.0.0, through a
// redirect, and through an allowed host; another loopback port is not; an
// address named with its port is the way to reach it.
func TestGuardRefusesOwnServer(t *testing.T) {
	self, port := ownServer(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("fine")) })
	mux.HandleFunc("/redir", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, self+"/v1/calls", http.StatusFound) })
	other := httptest.NewServer(mux)
	defer other.Close()
	p := strconv.Itoa(int(port))

	loopback := &Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	for _, u := range []string{self + "/v1/calls", "http://0.0.0.0:" + p + "/", "http://[::ffff:127.0.0.1]:" + p + "/", other.URL + "/redir"} {
		_, err := get(loopback, u)
		assertRefused(t, err, "wield's own server")
	}
	// localhost may resolve to ::1 first, refused as loopback.
	_, err := get(loopback, "http://localhost:"+p+"/")
	assertRefused(t, err, "")
	if body, err := get(loopback, other.URL+"/ok"); err != nil || body != "fine" {
		t.Errorf("another loopback port: %q, %v", body, err)
	}
	hosts := &Guard{AllowHosts: []string{"localhost", "127.0.0.1"}}
	_, err = get(hosts, "http://localhost:"+p+"/")
	assertRefused(t, err, "wield's own server")
	_, err = get(hosts, self)
	assertRefused(t, err, "wield's own server")
	assertRefused(t, loopback.CheckAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)), "wield's own server")
	if err := loopback.Check(netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Errorf("Check without a port: %v", err)
	}

	// Named with its port, it is allowed.
	for _, g := range []*Guard{
		{AllowPorts: []Endpoint{{netip.MustParsePrefix("127.0.0.1/32"), port}}},
		{AllowHosts: []string{"localhost:" + p}},
	} {
		u := self
		if len(g.AllowHosts) > 0 {
			u = "http://localhost:" + p + "/"
		}
		if body, err := get(g, u); err != nil || body != "wield" {
			t.Errorf("guard %+v, %s: %q, %v; want it allowed", g, u, body, err)
		}
	}
}

// TestGuardOwnWildcard: a server listening on every address (0.0.0.0, ::)
// is reached through any local address on its port, and each is refused;
// another port is not.
func TestGuardOwnWildcard(t *testing.T) {
	for _, any := range []string{"0.0.0.0", "::"} {
		forget := Listening(&net.TCPAddr{IP: net.ParseIP(any), Port: 4711})
		for _, ip := range []string{"127.0.0.1", "127.0.0.5", "::1", "0.0.0.0", "::"} {
			if !isOwn(netip.MustParseAddrPort(net.JoinHostPort(ip, "4711"))) {
				t.Errorf("listening on %s: %s:4711 is not wield's own", any, ip)
			}
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					ip, _ := netip.AddrFromSlice(n.IP)
					if !isOwn(netip.AddrPortFrom(ip.Unmap(), 4711)) {
						t.Errorf("listening on %s: the interface address %s is not wield's own", any, ip)
					}
				}
			}
		}
		if isOwn(netip.MustParseAddrPort("127.0.0.1:4712")) || isOwn(netip.MustParseAddrPort("8.8.8.8:4711")) {
			t.Errorf("listening on %s: another port or a remote address is wield's own", any)
		}
		forget()
		forget() // twice is harmless
		if isOwn(netip.MustParseAddrPort("127.0.0.1:4711")) {
			t.Errorf("after forget, %s:4711 is still wield's own", any)
		}
	}
}

// TestGuardAllowPorts: a port in AllowPorts opens that port only.
func TestGuardAllowPorts(t *testing.T) {
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("a")) }))
	defer a.Close()
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("b")) }))
	defer b.Close()
	ap := netip.MustParseAddrPort(a.Listener.Addr().String())
	g := &Guard{AllowPorts: []Endpoint{{netip.PrefixFrom(ap.Addr(), 32), ap.Port()}}}
	if body, err := get(g, a.URL); err != nil || body != "a" {
		t.Errorf("the allowed port: %q, %v", body, err)
	}
	_, err := get(g, b.URL)
	assertRefused(t, err, "loopback address")
	hosts := &Guard{AllowHosts: []string{"localhost:" + strconv.Itoa(int(ap.Port()))}}
	_, bport, _ := net.SplitHostPort(b.Listener.Addr().String())
	_, err = get(hosts, "http://localhost:"+bport+"/")
	assertRefused(t, err, "loopback address")
}

// TestSpecOwnServerAndSecrets: an http entry whose URL the model chooses
// cannot reach wield's own server, and its output keeps no credential
// header.
func TestSpecOwnServerAndSecrets(t *testing.T) {
	self, _ := ownServer(t)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc"})
		w.Write([]byte("ok"))
	}))
	defer other.Close()
	input := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"url": {Type: "string"}}}
	tool, err := New("fetch", "x", input, Spec{URL: "{url}"}, &Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tool.Handler.Handle(context.Background(), json.RawMessage(`{"url":"`+self+`/v1/calls"}`))
	assertRefused(t, err, "wield's own server")
	out, err := tool.Handler.Handle(context.Background(), json.RawMessage(`{"url":"`+other.URL+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var o Output
	if err := json.Unmarshal(out, &o); err != nil || o.Headers["Set-Cookie"] != "[REDACTED]" || strings.Contains(string(out), "sid=abc") {
		t.Errorf("output %s, %v", out, err)
	}
}
