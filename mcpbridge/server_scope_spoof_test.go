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

// spoofScopeVariants sends the internal scope and requester headers in
// other letter cases and more than once.
type spoofScopeVariants struct{}

func (spoofScopeVariants) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header["wield-internal-scope"] = []string{"ops", "other"}
	r.Header["WIELD-INTERNAL-SCOPE"] = []string{"ops"}
	r.Header["wield-internal-requester"] = []string{"key:admin"}
	return http.DefaultTransport.RoundTrip(r)
}

// TestScopeHeaderVariants: the internal scope header a client sends in
// any letter case, repeated, is dropped: a request without a scope
// reaches every tool (the header did not narrow it to ops), a scoped one
// keeps its key's scope (ops), on both paths and in both eras.
func TestScopeHeaderVariants(t *testing.T) {
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
	fast := mcpbridge.NewServer(eng, reg, nil)
	defer fast.Close()
	sdk := mcpbridge.NewServer(eng, reg, &mcpbridge.ServerOptions{DisableFastPath: true})
	defer sdk.Close()
	for _, c := range []struct {
		name  string
		scope []string
		want  string
	}{
		{"unscoped", nil, "everything "},
		{"scoped", []string{"ops"}, "ops only key:k"},
	} {
		for _, srv := range []*mcpbridge.Server{fast, sdk} {
			for _, version := range []string{"2025-11-25", ""} {
				t.Run(c.name+" "+version, func(t *testing.T) {
					scope := c.scope
					hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						ctx := r.Context()
						if scope != nil {
							ctx = wield.WithRequester(wield.WithScope(ctx, scope), "key:k")
						}
						srv.Handler().ServeHTTP(w, r.WithContext(ctx))
					}))
					defer hs.Close()
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					var opts *mcp.ClientSessionOptions
					if version != "" {
						opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
					}
					cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
						&mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: spoofScopeVariants{}}}, opts)
					if err != nil {
						t.Fatal(err)
					}
					defer cs.Close()
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reach", Arguments: map[string]any{}})
					if err != nil || res.IsError || strings.TrimSpace(res.Content[0].(*mcp.TextContent).Text) != strings.TrimSpace(c.want) {
						t.Errorf("reach: %v %+v, want %q", err, res, c.want)
					}
				})
			}
		}
	}
}
