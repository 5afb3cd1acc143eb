package mcpbridge_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
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
	fast, sdk := scopeServers(t)
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
					if got := callReach(t, hs.URL+"/mcp", spoofScopeVariants{}, version); strings.TrimSpace(got) != strings.TrimSpace(c.want) {
						t.Errorf("reach: %q, want %q", got, c.want)
					}
				})
			}
		}
	}
}
