package toolfile

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/httptool"
)

// TestConfigHTTPAllowPorts: http_allow takes addresses and ranges with a
// port, which open that port only, beside plain ranges; a bad port is a
// problem at its line and column.
func TestConfigHTTPAllowPorts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wield.yaml")
	yaml := "http_allow: [127.0.0.1/32, \"127.0.0.1:8080\", \"[::1]:9000\", \"10.0.0.0/8:443\"]\nhttp_allow_hosts: [\"localhost:8080\"]\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []httptool.Endpoint{
		{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 8080},
		{Prefix: netip.MustParsePrefix("::1/128"), Port: 9000},
		{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Port: 443},
	}
	if d := cmp.Diff(want, c.HTTPAllowPorts, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); d != "" {
		t.Errorf("HTTPAllowPorts (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, c.HTTPAllow, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); d != "" {
		t.Errorf("HTTPAllow (-want +got)\n%s", d)
	}
	g := c.Guard()
	if len(g.AllowPorts) != 3 || g.AllowHosts[0] != "localhost:8080" {
		t.Errorf("guard %+v", g)
	}
	if err := g.CheckAddrPort(netip.MustParseAddrPort("10.1.2.3:443")); err != nil {
		t.Errorf("10.1.2.3:443: %v", err)
	}
	if err := g.CheckAddrPort(netip.MustParseAddrPort("10.1.2.3:80")); err == nil {
		t.Error("10.1.2.3:80 passes; only 443 is allowed")
	}

	if err := os.WriteFile(path, []byte("http_allow:\n  - \"127.0.0.1:http\"\n  - \"[::1]:0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadConfig(path)
	if err == nil || !strings.Contains(err.Error(), "wield.yaml:2:5: http_allow: \"127.0.0.1:http\": port \"http\" is not a number from 1 to 65535") ||
		!strings.Contains(err.Error(), "wield.yaml:3:5: http_allow: \"[::1]:0\"") {
		t.Errorf("bad ports: %v", err)
	}
}
