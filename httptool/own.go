package httptool

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Endpoint is a range of addresses on one port, as http_allow writes it:
// "127.0.0.1:8080", "[::1]:8080", "10.0.0.0/8:443", "[fd00::/8]:443".
type Endpoint struct {
	Prefix netip.Prefix
	Port   uint16
}

// ParseEndpoint reads an address or a CIDR range followed by a port. An
// IPv6 address or range is written in brackets.
func ParseEndpoint(s string) (Endpoint, error) {
	host, port, ok := "", "", false
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]:"); i > 0 {
			host, port, ok = s[1:i], s[i+2:], true
		}
	} else if strings.Count(s, ":") == 1 {
		host, port, ok = strings.Cut(s, ":")
	}
	if !ok {
		return Endpoint{}, fmt.Errorf("%q is not an address or range with a port, like \"127.0.0.1:8080\", \"[::1]:8080\" or \"10.0.0.0/8:443\"", s)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return Endpoint{}, fmt.Errorf("%q: port %q is not a number from 1 to 65535", s, port)
	}
	p, err := netip.ParsePrefix(host)
	if err != nil {
		a, aerr := netip.ParseAddr(host)
		if aerr != nil {
			return Endpoint{}, fmt.Errorf("%q: %q is not an IP address or a CIDR range", s, host)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	return Endpoint{Prefix: p.Masked(), Port: uint16(n)}, nil
}

// Contains reports whether ap is in the range, on the port. An IPv4 range
// also holds the IPv4-mapped IPv6 form of its addresses.
func (e Endpoint) Contains(ap netip.AddrPort) bool {
	ip := ap.Addr().WithZone("")
	return ap.Port() == e.Port && (e.Prefix.Contains(ip) || e.Prefix.Contains(ip.Unmap()))
}

// String writes the endpoint as ParseEndpoint reads it.
func (e Endpoint) String() string {
	h := e.Prefix.String()
	if e.Prefix.IsSingleIP() {
		h = e.Prefix.Addr().String()
	}
	if e.Prefix.Addr().Is6() {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(int(e.Port))
}

// own is the set of addresses wield itself listens on in this process.
var own struct {
	mu    sync.Mutex
	addrs atomic.Pointer[[]netip.AddrPort] // replaced, never changed
}

// Listening tells every [Guard] of the process that wield listens at addr
// (a listener's Addr, known once it listens: a port 0 becomes a real one),
// until forget is called. A tool must not call the server that runs it:
// with a keyless server on loopback, a model told to by a prompt injection
// would read files, records and approve its own pending calls through the
// API. So requests to addr are refused even where http_allow's ranges let
// loopback through, unless the guard allows that address with its port
// (Endpoint, or a host with its port). An unspecified address (0.0.0.0,
// ::) stands for every local address on its port.
func Listening(addr net.Addr) (forget func()) {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return func() {}
	}
	ap = netip.AddrPortFrom(ap.Addr().WithZone("").Unmap(), ap.Port())
	own.mu.Lock()
	defer own.mu.Unlock()
	var list []netip.AddrPort
	if p := own.addrs.Load(); p != nil {
		list = slices.Clone(*p)
	}
	list = append(list, ap)
	own.addrs.Store(&list)
	var once sync.Once
	return func() {
		once.Do(func() {
			own.mu.Lock()
			defer own.mu.Unlock()
			list := slices.Clone(*own.addrs.Load())
			if i := slices.Index(list, ap); i >= 0 {
				list = slices.Delete(list, i, i+1)
			}
			own.addrs.Store(&list)
		})
	}
}

// isOwn reports whether a connection to ap would reach wield's own server.
func isOwn(ap netip.AddrPort) bool {
	p := own.addrs.Load()
	if p == nil || len(*p) == 0 {
		return false
	}
	ip := ap.Addr().WithZone("").Unmap()
	local := -1 // unknown yet: is ip an address of this host?
	for _, o := range *p {
		if o.Port() != ap.Port() {
			continue
		}
		// Connecting to 0.0.0.0 or :: reaches this host.
		if ip == o.Addr() || ip.IsUnspecified() {
			return true
		}
		if o.Addr().IsUnspecified() {
			if ip.IsLoopback() {
				return true
			}
			if local < 0 {
				local = 0
				if localAddr(ip) {
					local = 1
				}
			}
			if local == 1 {
				return true
			}
		}
	}
	return false
}

// localAddr reports whether ip is assigned to an interface of this host.
func localAddr(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // cannot tell: treat it as ours
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if x, ok := netip.AddrFromSlice(n.IP); ok && x.Unmap() == ip {
				return true
			}
		}
	}
	return false
}
