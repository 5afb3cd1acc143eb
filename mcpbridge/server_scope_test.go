package mcpbridge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

// spoofScope sends the internal scope header a client must not set.
type spoofScope struct{}

func (spoofScope) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Wield-Internal-Scope", "other")
	return http.DefaultTransport.RoundTrip(r)
}

// TestScopeReachesCalls: a request the API authenticated with a key scoped
// to toolset ops ([wield.WithScope]) makes calls confined to that toolset,
// through the fast path and the SDK's, in both eras, so that calls made on
// their behalf (a program's inner calls) are too; a client cannot set the
// scope itself.
func TestScopeReachesCalls(t *testing.T) {
	fast, sdk := scopeServers(t)
	scoped := func(h http.Handler, scope []string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(wield.WithScope(r.Context(), scope)))
		})
	}
	for _, c := range []struct {
		name  string
		scope []string
		rt    http.RoundTripper
		want  string
	}{
		{"scoped", []string{"ops"}, http.DefaultTransport, "ops only"},
		{"unscoped", nil, http.DefaultTransport, "everything"},
		{"unscoped, the header spoofed", nil, spoofScope{}, "everything"},
	} {
		for _, srv := range []*mcpbridge.Server{fast, sdk} {
			for _, version := range []string{"2025-11-25", ""} {
				t.Run(c.name+" "+version, func(t *testing.T) {
					hs := httptest.NewServer(scoped(srv.Handler(), c.scope))
					defer hs.Close()
					if got := callReach(t, hs.URL+"/mcp/ops", c.rt, version); !strings.Contains(got, c.want) {
						t.Errorf("reach: %q, want %q", got, c.want)
					}
				})
			}
		}
	}
}

// scopeServers are a server with its fast path and one without, of a
// registry whose toolset ops holds "reach" (it says what its call may
// reach, and who asks) and not "outside".
func scopeServers(t *testing.T) (fast, sdk *mcpbridge.Server) {
	t.Helper()
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("outside", "Not in ops", func(context.Context, struct{}) (string, error) { return "x", nil }))
	reg.MustRegister(wield.Func("reach", "Say what this call may reach, and who asks", func(ctx context.Context, _ struct{}) (string, error) {
		who := wield.RequesterFrom(ctx)
		c := wield.CallFrom(ctx)
		switch {
		case c == nil || c.Toolkit == nil:
			return "everything " + who, nil
		case c.Toolkit.Has("outside"):
			return "outside too " + who, nil
		}
		return "ops only " + who, nil
	}))
	if err := reg.DefineToolset(wield.Toolset{Name: "ops", Tools: []string{"reach"}}); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(reg, nil)
	fast = mcpbridge.NewServer(eng, reg, nil)
	t.Cleanup(func() { fast.Close() })
	sdk = mcpbridge.NewServer(eng, reg, &mcpbridge.ServerOptions{DisableFastPath: true})
	t.Cleanup(func() { sdk.Close() })
	return fast, sdk
}

// callReach calls "reach" at endpoint through the go-sdk's client over rt,
// speaking version ("" for the client's newest), and returns its text.
func callReach(t *testing.T, endpoint string, rt http.RoundTripper, version string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, HTTPClient: &http.Client{Transport: rt}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reach", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("reach: %v %+v", err, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}
