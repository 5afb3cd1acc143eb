package mcpbridge

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// srvGuard refuses requests that a web page could have made the browser
// send: to a loopback listener under a foreign Host name (DNS rebinding),
// or with a foreign Origin (a cross-site request). Clients that are not
// browsers send no Origin and a loopback Host, and pass.
func (s *Server) srvGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		loopback := srvLocalIsLoopback(r)
		if loopback && !srvIsLoopbackHost(srvHostname(r.Host)) && !slices.Contains(s.opts.AllowedHosts, r.Host) && !slices.Contains(s.opts.AllowedHosts, srvHostname(r.Host)) {
			http.Error(w, "forbidden: the Host header does not name this server", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.srvOriginAllowed(o, r.Host) {
			http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// srvOriginAllowed accepts the listed origins, the request's own host, and
// any loopback origin: a page served from this machine is trusted as much
// as its user.
func (s *Server) srvOriginAllowed(origin, host string) bool {
	if slices.Contains(s.opts.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null", file pages and the like
	}
	return strings.EqualFold(u.Host, host) || srvIsLoopbackHost(u.Hostname())
}

// srvLocalIsLoopback reports whether the request arrived on a loopback
// address. Without the address (a handler called directly) it is assumed:
// the stricter choice.
func srvLocalIsLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return true
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
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
