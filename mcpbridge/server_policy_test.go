package mcpbridge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/policy"
)

// spoof sends the internal requester header a client must not be able to set.
type spoof struct{}

func (spoof) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Wield-Internal-Requester", "key:ops")
	return http.DefaultTransport.RoundTrip(r)
}

// TestPolicyListPerRequester: tools/list shows a tool only to the key the
// policies let call it, in both eras and through the SDK's path and the
// fast one; a client that names itself in the internal header gains
// nothing.
func TestPolicyListPerRequester(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(`permit(principal == Key::"ops", action, resource);
permit(principal == Agent::"mcp:agent7", action, resource);`), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("echo", "Echo", func(_ context.Context, in struct {
		M string `json:"m"`
	}) (string, error) {
		return in.M, nil
	}))
	eng := engine.New(reg, &engine.Options{Policy: set})
	fast := mcpbridge.NewServer(eng, reg, nil)
	defer fast.Close()
	sdk := mcpbridge.NewServer(eng, reg, &mcpbridge.ServerOptions{DisableFastPath: true})
	defer sdk.Close()
	as := func(h http.Handler, who string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if who != "" {
				r = r.WithContext(wield.WithRequester(r.Context(), who))
			}
			h.ServeHTTP(w, r)
		})
	}
	for _, tt := range []struct {
		name   string
		who    string
		rt     http.RoundTripper
		client string
		count  int
	}{
		{"the permitted key", "key:ops", http.DefaultTransport, "t", 1},
		{"another key", "key:dev", http.DefaultTransport, "t", 0},
		{"no key, the header spoofed", "", spoof{}, "t", 0},
		{"another key, the header spoofed", "key:dev", spoof{}, "t", 0},
		{"no key, a client permitted by its name", "", http.DefaultTransport, "agent7", 1},
		{"a key not permitted, whatever the client's name", "key:dev", http.DefaultTransport, "agent7", 0},
	} {
		for _, c := range []struct {
			version string
			srv     *mcpbridge.Server
		}{{"2025-11-25", fast}, {"", fast}, {"2025-11-25", sdk}, {"", sdk}} {
			version := c.version
			t.Run(tt.name+" "+version, func(t *testing.T) {
				hs := httptest.NewServer(as(c.srv.Handler(), tt.who))
				defer hs.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				client := mcp.NewClient(&mcp.Implementation{Name: tt.client, Version: "1"}, nil)
				var opts *mcp.ClientSessionOptions
				if version != "" {
					opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
				}
				cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: tt.rt}}, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				list, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(list.Tools) != tt.count {
					t.Errorf("%d tools listed, want %d", len(list.Tools), tt.count)
				}
				// A tool not listed is, to the caller, a tool that does not
				// exist: the call is refused as a call of an unknown tool,
				// naming no policy.
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"m": "x"}})
				if tt.count == 0 {
					if err == nil || !strings.Contains(err.Error(), `unknown tool "echo"`) {
						t.Errorf("tools/call of a tool not listed: %v %+v; want the error of an unknown tool", err, res)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError {
					t.Errorf("tools/call isError %v, want false", res.IsError)
				}
			})
		}
	}
}
