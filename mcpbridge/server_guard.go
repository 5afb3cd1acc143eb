package mcpbridge

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// srvGuard refuses requests that a web page could have made the browser
// send: to a loopback listener under a foreign Host name (DNS rebinding),
// or from another origin, which a page on another port of the same
// machine is (browsers mark its requests Sec-Fetch-Site: same-site).
// Clients that are not browsers send no Origin and a loopback Host, and
// pass. The SDK's handler takes a POST only as application/json, which a
// page of another origin cannot send without a preflight.
func (s *Server) srvGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		loopback := srvLocalIsLoopback(r)
		if loopback && !srvIsLoopbackHost(srvHostname(r.Host)) && !slices.Contains(s.opts.AllowedHosts, r.Host) && !slices.Contains(s.opts.AllowedHosts, srvHostname(r.Host)) {
			http.Error(w, "forbidden: the Host header does not name this server", http.StatusForbidden)
			return
		}
		o := r.Header.Get("Origin")
		if o != "" && !s.srvOriginAllowed(o, r) {
			http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "same-origin", "none":
		default:
			if o == "" || !slices.Contains(s.opts.AllowedOrigins, o) {
				http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// srvOriginAllowed accepts the listed origins and the request's own
// origin (its scheme and Host), nothing else: a page served from another
// port of this machine is another origin, trusted no more than any site.
func (s *Server) srvOriginAllowed(origin string, r *http.Request) bool {
	if slices.Contains(s.opts.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null", file pages and the like
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(srvWithPort(u.Host, scheme), srvWithPort(r.Host, scheme))
}

// srvWithPort is host with the scheme's default port when it names none.
func srvWithPort(host, scheme string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// srvLocalIsLoopback reports whether the request arrived on a loopback
// address. Without the address (a handler called directly) it is assumed:
// the stricter choice.
func srvLocalIsLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return true
	}
	if a, ok := addr.(*net.TCPAddr); ok {
		// The address itself, not its text parsed back: three allocations
		// fewer per request. What net.ParseIP could not read (a zone, no
		// address) counts as loopback, as it did.
		if a.Zone != "" || (len(a.IP) != net.IPv4len && len(a.IP) != net.IPv6len) {
			return true
		}
		return a.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		host = addr.String()
	}
	ip := net.ParseIP(host)
	return ip == nil || ip.IsLoopback()
}

// srvHostname is a Host header without its port.
func srvHostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

func srvIsLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h) // net.ParseIP allocates; it takes no zone
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}
