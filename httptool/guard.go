package httptool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wieldhq/wield"
)

// Guard keeps HTTP tools away from internal addresses (server-side request
// forgery): a model that can choose a URL must not reach the loopback
// interface, the private network or a cloud metadata service. Its zero value
// (and a nil *Guard) refuses every internal address; Allow, AllowPorts and
// AllowHosts open ranges, ports and host names explicitly, for
// configurations that need them.
//
// Whatever it allows, a Guard refuses the addresses wield itself listens on
// (see [Listening]) unless AllowPorts, or AllowHosts with a port, names the
// address with its port: a tool must not call the server that runs it.
//
// A Guard must not be changed once a client made from it is in use.
type Guard struct {
	// Allow lists address ranges that are reachable even though they are
	// internal, such as 127.0.0.1/32 for a local test server. An IPv4
	// range also allows the IPv4-mapped IPv6 form of its addresses, which
	// reach the same host.
	Allow []netip.Prefix
	// AllowPorts lists address ranges that are reachable on one port only,
	// such as 127.0.0.1:8080 for a local test server and nothing else on
	// loopback.
	AllowPorts []Endpoint
	// AllowHosts lists host names (or literal addresses as written in URLs)
	// that are reachable whatever they resolve to, on every port, or on
	// one when written with it ("localhost:8080"). Matching ignores case.
	AllowHosts []string
}

// MaxRedirects is how many redirects a [Guard.Client] follows before it gives up.
const MaxRedirects = 10

type blockedRange struct {
	prefix netip.Prefix
	what   string
}

// blocked lists the internal ranges, most specific first so that the message
// names the metadata address rather than link-local in general.
var blocked = []blockedRange{
	{netip.MustParsePrefix("169.254.169.254/32"), "cloud metadata address"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata address"},
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified address"},
	{netip.MustParsePrefix("::/128"), "unspecified address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback address"},
	{netip.MustParsePrefix("::1/128"), "loopback address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private address"},
	{netip.MustParsePrefix("fc00::/7"), "private address"},
	{netip.MustParsePrefix("fec0::/10"), "site-local address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local address"},
	{netip.MustParsePrefix("fe80::/10"), "link-local address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT) address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast address"},
	{netip.MustParsePrefix("ff00::/8"), "multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved address"},
}

// Embedding prefixes: IPv6 forms that carry an IPv4 address in their last 32
// bits and may reach it (IPv4-compatible and NAT64).
var embedding = []netip.Prefix{
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("64:ff9b::/96"),
}

// classify names the internal class of ip, or returns "" for a public address.
// IPv4-mapped, IPv4-compatible and NAT64 forms are judged by the IPv4 address
// they carry.
func classify(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid address"
	}
	ip = ip.WithZone("").Unmap()
	for _, b := range blocked {
		if b.prefix.Contains(ip) {
			return b.what
		}
	}
	if ip.Is6() {
		for _, p := range embedding {
			if p.Contains(ip) {
				b := ip.As16()
				return classify(netip.AddrFrom4([4]byte(b[12:])))
			}
		}
	}
	return ""
}

// Check reports whether a request may go to ip, on any port. It returns nil
// for a public address or one inside Allow, and otherwise a *[wield.Error]
// of type [wield.ErrPermissionDenied] that tells the model why. It knows no
// port, so AllowPorts and wield's own addresses are left to
// [Guard.CheckAddrPort].
func (g *Guard) Check(ip netip.Addr) error {
	if what := classify(ip); what != "" && !g.ipAllowed(ip) {
		return refuse(ip.String(), what)
	}
	return nil
}

// CheckAddrPort reports whether a request may go to ap: [Guard.Check] with
// AllowPorts, and wield's own listening addresses refused unless named
// with their port.
func (g *Guard) CheckAddrPort(ap netip.AddrPort) error {
	return g.checkAt("", ap)
}

// checkAt is CheckAddrPort for an address that host resolved to; a host in
// AllowHosts passes whatever its address, but for wield's own.
func (g *Guard) checkAt(host string, ap netip.AddrPort) error {
	ip := ap.Addr()
	name := ip.String()
	if host != "" && strings.Trim(host, "[]") != name {
		name = host + " (" + name + ")"
	}
	if isOwn(ap) && !g.explicit(host, ap) {
		return wield.Errorf(wield.ErrPermissionDenied,
			"Access denied: %s:%d is wield's own server (a tool may not call the server that runs it; allow the address with its port in the configuration)", name, ap.Port())
	}
	if what := classify(ip); what != "" && !g.hostAllowed(host, ap.Port(), false) && !g.ipAllowed(ip) && !g.portAllowed(ap) {
		return refuse(name, what)
	}
	return nil
}

// explicit reports whether the guard names ap with its port: the only way
// to reach wield's own server.
func (g *Guard) explicit(host string, ap netip.AddrPort) bool {
	return g.portAllowed(ap) || g.hostAllowed(host, ap.Port(), true)
}

func refuse(addr, what string) *wield.Error {
	return wield.Errorf(wield.ErrPermissionDenied,
		"Access denied: %s is a %s (requests to internal addresses are blocked; allow it in the configuration)", addr, what)
}

func (g *Guard) ipAllowed(ip netip.Addr) bool {
	if g == nil || !ip.IsValid() {
		return false
	}
	ip = ip.WithZone("")
	for _, p := range g.Allow {
		if p.Contains(ip) || p.Contains(ip.Unmap()) {
			return true
		}
	}
	return false
}

func (g *Guard) portAllowed(ap netip.AddrPort) bool {
	if g == nil || !ap.Addr().IsValid() {
		return false
	}
	for _, e := range g.AllowPorts {
		if e.Contains(ap) {
			return true
		}
	}
	return false
}

// hostAllowed reports whether AllowHosts lets host through on port; with
// withPort, only an entry written with that port counts.
func (g *Guard) hostAllowed(host string, port uint16, withPort bool) bool {
	if g == nil || host == "" {
		return false
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	for _, h := range g.AllowHosts {
		name, p := splitHostPort(h)
		if (p == 0 && withPort) || (p != 0 && p != port) {
			continue
		}
		if strings.EqualFold(strings.TrimSuffix(strings.Trim(name, "[]"), "."), host) {
			return true
		}
	}
	return false
}

// splitHostPort reads "host", "host:port", "[v6]" or "[v6]:port"; port is
// 0 when none is written.
func splitHostPort(s string) (string, uint16) {
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return s, 0
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return s, 0
	}
	return h, uint16(n)
}

// Client returns an HTTP client that enforces the guard. Host names are
// resolved first and every address they resolve to is checked; the client
// then dials the checked address, not the name, so a second, different DNS
// answer (rebinding) cannot slip through. A check on the socket's address just
// before connect backs this up. Redirects are re-checked: only http and https,
// at most [MaxRedirects], and a literal internal address is refused before it
// is dialed. Proxies from the environment are not used, since they would
// fetch the internal address on the client's behalf.
//
// Refusals reach the caller wrapped in a *url.Error; errors.As finds the
// *[wield.Error] of type [wield.ErrPermissionDenied] inside.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.dialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: g.checkRedirect,
	}
}

func (g *Guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return wield.Errorf(wield.ErrPermissionDenied, "Access denied: redirect to scheme %q (only http and https are followed)", s)
	}
	host := req.URL.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		port := uint16(80)
		if req.URL.Scheme == "https" {
			port = 443
		}
		if p := req.URL.Port(); p != "" {
			if n, err := strconv.ParseUint(p, 10, 16); err == nil {
				port = uint16(n)
			}
		}
		if err := g.checkAt(host, netip.AddrPortFrom(ip, port)); err != nil {
			return err
		}
	}
	return nil
}

func (g *Guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("guard: port %q: %w", p, err)
	}
	port := uint16(n)
	if g.hostAllowed(host, port, false) {
		// An allowed host may be internal, but not wield's own server.
		d := net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("guard: unexpected address %q: %w", address, err)
			}
			if isOwn(ap) && !g.explicit(host, ap) {
				return g.checkAt(host, ap)
			}
			return nil
		}}
		return d.DialContext(ctx, network, addr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = net.DefaultResolver.LookupNetIP(ctx, ipNetwork(network), host)
		if err != nil {
			return nil, err
		}
		for i := range ips {
			ips[i] = ips[i].Unmap() // the resolver may answer IPv4 in IPv6 form
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
	}
	// Every address must pass: a name that resolves to one public and one
	// internal address is refused rather than tried in turn.
	for _, ip := range ips {
		if err := g.checkAt(host, netip.AddrPortFrom(ip, port)); err != nil {
			return nil, err
		}
	}
	d := net.Dialer{Control: g.control(host)}
	var errs []error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), p))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control returns the check of the address a socket is about to connect
// to, which host resolved to.
func (g *Guard) control(host string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("guard: unexpected address %q: %w", address, err)
		}
		return g.checkAt(host, ap)
	}
}

func ipNetwork(network string) string {
	switch network {
	case "tcp4", "udp4":
		return "ip4"
	case "tcp6", "udp6":
		return "ip6"
	}
	return "ip"
}
