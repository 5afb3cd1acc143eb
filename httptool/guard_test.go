package httptool

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// localOnly allows the httptest server's address and nothing else internal.
func localOnly() *Guard {
	return &Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
}

// refusedHosts are internal addresses as written in URLs.
var refusedHosts = []struct {
	host string
	what string
}{
	{"127.0.0.1", "loopback address"},
	{"127.1.2.3", "loopback address"},
	{"10.0.0.1", "private address"},
	{"172.16.0.1", "private address"},
	{"192.168.1.1", "private address"},
	{"169.254.169.254", "cloud metadata address"},
	{"169.254.1.1", "link-local address"},
	{"100.64.0.1", "shared (CGNAT) address"},
	{"0.0.0.0", "unspecified address"},
	{"224.0.0.1", "multicast address"},
	{"[::]", "unspecified address"},
	{"[::1]", "loopback address"},
	{"[fe80::1]", "link-local address"},
	{"[fc00::1]", "private address"},
	{"[fd12:3456::1]", "private address"},
	{"[ff02::1]", "multicast address"},
	{"[::ffff:127.0.0.1]", "loopback address"},
	{"[::ffff:169.254.169.254]", "cloud metadata address"},
	{"[::ffff:10.0.0.1]", "private address"},
	{"[::127.0.0.1]", "loopback address"},              // IPv4-compatible
	{"[64:ff9b::a9fe:a9fe]", "cloud metadata address"}, // NAT64 of 169.254.169.254
}

func TestGuardCheck(t *testing.T) {
	for _, tt := range refusedHosts {
		t.Run(tt.host, func(t *testing.T) {
			ip := netip.MustParseAddr(strings.Trim(tt.host, "[]"))
			err := (&Guard{}).Check(ip)
			want := "Access denied: " + ip.String() + " is a " + tt.what +
				" (requests to internal addresses are blocked; allow it in the configuration)"
			if diff := cmp.Diff(want, errText(err)); diff != "" {
				t.Errorf("Check(%s) (-want +got):\n%s", ip, diff)
			}
			var we *wield.Error
			if !errors.As(err, &we) || we.Type != wield.ErrPermissionDenied {
				t.Errorf("Check(%s) = %#v, want a *wield.Error of type permission_denied", ip, err)
			}
			// A nil guard is as strict as the zero value.
			if err := (*Guard)(nil).Check(ip); err == nil {
				t.Errorf("nil guard: Check(%s) = nil, want a refusal", ip)
			}
			// Allowing the range lets the address pass.
			g := &Guard{Allow: []netip.Prefix{netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen())}}
			if err := g.Check(ip); err != nil {
				t.Errorf("allowed: Check(%s) = %v, want nil", ip, err)
			}
		})
	}
}

func TestGuardCheckPublic(t *testing.T) {
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"} {
		if err := (&Guard{}).Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", s, err)
		}
	}
	if err := (&Guard{}).Check(netip.Addr{}); err == nil {
		t.Error("Check(invalid address) = nil, want a refusal")
	}
	zoned := netip.MustParseAddr("fe80::1%eth0")
	if err := (&Guard{}).Check(zoned); err == nil {
		t.Errorf("Check(%s) = nil, want a refusal", zoned)
	}
}

// TestToolRefusesInternal calls a tool whose URL is a parameter with each
// internal address: the guard refuses before anything is dialed.
func TestToolRefusesInternal(t *testing.T) {
	input := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"url": {Type: "string"}}}
	tool, err := New("fetch", "Fetch a URL", input, Spec{URL: "{url}"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range refusedHosts {
		t.Run(tt.host, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"url": "http://" + tt.host + ":8080/latest/meta-data/"})
			out, err := tool.Handler.Handle(context.Background(), args)
			if out != nil {
				t.Errorf("output %s, want none", out)
			}
			assertRefused(t, err, tt.what)
		})
	}
}

// TestRedirectToInternal has an allowed local server redirect to internal
// addresses; the redirect is refused before the target is dialed.
func TestRedirectToInternal(t *testing.T) {
	for _, tt := range []struct{ target, want string }{
		{"http://127.0.0.2/", "127.0.0.2 is a loopback address"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"},
		{"http://[::1]/", "::1 is a loopback address"},
		{"http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254 is a cloud metadata address"},
		{"http://10.0.0.1/", "10.0.0.1 is a private address"},
	} {
		target := tt.target
		t.Run(target, func(t *testing.T) {
			srv := httptest.NewServer(http.RedirectHandler(target, http.StatusFound))
			defer srv.Close()
			input := &jsonschema.Schema{Type: "object"}
			tool, err := New("fetch", "Fetch", input, Spec{URL: srv.URL + "/start"}, localOnly())
			if err != nil {
				t.Fatal(err)
			}
			_, err = tool.Handler.Handle(context.Background(), json.RawMessage(`{}`))
			assertRefused(t, err, tt.want)
		})
	}
}

func TestRedirectLimits(t *testing.T) {
	var hops atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/loop":
			hops.Add(1)
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		}
	}))
	defer srv.Close()
	client := localOnly().Client(0)

	_, err := client.Get(srv.URL + "/loop")
	if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Errorf("loop: error %v, want it to stop after 10 redirects", err)
	}
	if n := hops.Load(); n != MaxRedirects {
		t.Errorf("loop: %d requests, want %d", n, MaxRedirects)
	}

	_, err = client.Get(srv.URL + "/file")
	var we *wield.Error
	if !errors.As(err, &we) || we.Type != wield.ErrPermissionDenied || !strings.Contains(we.Message, `scheme "file"`) {
		t.Errorf("file redirect: error %v, want permission_denied naming the scheme", err)
	}
}

// TestGuardNames resolves localhost (from the hosts file, no DNS traffic):
// refused by default, with the name in the message, and reachable when the
// host is allowed by name.
func TestGuardNames(t *testing.T) {
	if ips, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", "localhost"); err != nil || len(ips) == 0 {
		t.Skipf("localhost does not resolve: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	url := "http://localhost:" + port + "/"

	_, err := (&Guard{}).Client(0).Get(url)
	assertRefused(t, err, "loopback address")
	if err == nil || !strings.Contains(err.Error(), "localhost (") {
		t.Errorf("error %v, want it to name localhost and its address", err)
	}

	resp, err := (&Guard{AllowHosts: []string{"LOCALHOST"}}).Client(0).Get(url)
	if err != nil {
		t.Fatalf("allowed host: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("allowed host: status %d, want 200", resp.StatusCode)
	}
}

// TestGuardControl checks the last line of defence: the socket's address is
// checked before connect, even when the dial does not go through the
// resolving dialer.
func TestGuardControl(t *testing.T) {
	d := net.Dialer{Control: (&Guard{}).control("")}
	_, err := d.Dial("tcp", "127.0.0.1:9")
	assertRefused(t, err, "loopback address")
}

func assertRefused(t *testing.T, err error, what string) {
	t.Helper()
	var we *wield.Error
	if !errors.As(err, &we) || we.Type != wield.ErrPermissionDenied {
		t.Fatalf("error %v, want a *wield.Error of type permission_denied", err)
	}
	if !strings.HasPrefix(we.Message, "Access denied: ") || !strings.Contains(we.Message, what) {
		t.Errorf("message %q, want an access denial naming a %s", we.Message, what)
	}
	if wield.IsTransient(err) {
		t.Errorf("refusal %v is transient; it must not be retried", err)
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// FuzzGuard checks Check against an independent classification built on the
// net package: an address in a refused class never passes.
func FuzzGuard(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "::1", "::ffff:169.254.169.254", "fe80::1", "8.8.8.8", "::ffff:8.8.8.8", "fc00::1", "100.64.0.1", "::10.0.0.1"} {
		b := netip.MustParseAddr(s).As16()
		f.Add(b[:])
	}
	cgnat := &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}
	internal := func(ip net.IP) bool {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
			ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || cgnat.Contains(ip)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var a [16]byte
		copy(a[:], b)
		ip := net.IP(a[:])
		refused := internal(ip)
		// IPv4-compatible form ::a.b.c.d carries an IPv4 address too.
		if allZero(a[:12]) && internal(net.IP(a[12:])) {
			refused = true
		}
		err := (&Guard{}).Check(netip.AddrFrom16(a))
		if refused && err == nil {
			t.Fatalf("Check(%s) = nil, but the address is internal", netip.AddrFrom16(a))
		}
		if err != nil {
			var we *wield.Error
			if !errors.As(err, &we) || we.Type != wield.ErrPermissionDenied {
				t.Fatalf("Check(%s) = %v, want permission_denied", netip.AddrFrom16(a), err)
			}
		}
		if len(b) >= 4 {
			v4 := netip.AddrFrom4([4]byte(b[:4]))
			if internal(net.IP(b[:4])) && (&Guard{}).Check(v4) == nil {
				t.Fatalf("Check(%s) = nil, but the address is internal", v4)
			}
		}
	})
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
