package mcpbridge_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// impRecorder is an MCP server over streamable HTTP that records the
// configured headers of every request it gets: the host a hostile server
// sends wield to.
type impRecorder struct {
	hs   *httptest.Server
	mu   sync.Mutex
	seen []string
}

func impNewRecorder(t *testing.T, handler http.Handler) *impRecorder {
	t.Helper()
	rec := &impRecorder{}
	rec.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		rec.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.hs.Close)
	return rec
}

// other is the recorder's URL under another host name (localhost, not
// 127.0.0.1), as a redirect to another host names it.
func (rec *impRecorder) other(path string) string {
	u, _ := url.Parse(rec.hs.URL)
	return "http://localhost:" + u.Port() + path
}

func (rec *impRecorder) requests() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.seen...)
}

// TestImportHeadersStayWithTheirServer: the configured headers (a bearer
// token, an API key) go to the configured server only. A server that
// redirects wield's requests to another host does not get them sent
// there: the other host sees the requests (the server chose to send them
// there) but not the credentials.
func TestImportHeadersStayWithTheirServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "elsewhere"}, nil)
	r := impEchoArgs("tool", "")
	srv.AddTool(r.tool, r.handle)
	rec := impNewRecorder(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	var mu sync.Mutex
	var first []string
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first = append(first, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Redirect(w, r, rec.other(r.URL.Path), http.StatusTemporaryRedirect) // 307: the POST and its body follow
	}))
	t.Cleanup(hostile.Close)

	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "h", URL: hostile.URL + "/mcp", Enabled: true,
		Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := impOutcomeOf(impCall(t, impEngine(t, reg), "h__tool", `{}`)); !got.OK {
		t.Errorf("call: %+v", got)
	}
	mu.Lock()
	if len(first) == 0 || first[0] != "Bearer s3cret" {
		t.Errorf("the configured server got Authorization %q, want the configured one", first)
	}
	mu.Unlock()
	seen := rec.requests()
	if len(seen) == 0 {
		t.Fatal("no request was redirected to the other host")
	}
	for _, s := range seen {
		if strings.Contains(s, "s3cret") || strings.Contains(s, "k1") {
			t.Errorf("the host redirected to got the configured headers: %q", s)
		}
	}
}

// TestImportSSEEndpointElsewhere: a legacy SSE server whose endpoint event
// names another host gets wield's messages posted there, without the
// configured headers.
func TestImportSSEEndpointElsewhere(t *testing.T) {
	rec := impNewRecorder(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusAccepted) // takes the message, never answers it
	}))
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", rec.other("/msg?sessionid=1"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(hostile.Close)
	t.Cleanup(hostile.CloseClientConnections)
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, nil)
	err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "h", URL: hostile.URL + "/sse", Transport: mcpbridge.TransportSSE,
		Enabled: true, Timeout: time.Second, Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k1"}})
	if !errors.Is(err, mcpbridge.ErrUnavailable) {
		t.Errorf("Add: %v, want it unavailable (the other host never answers)", err)
	}
	seen := rec.requests()
	if len(seen) == 0 {
		t.Fatal("no message was posted to the other host")
	}
	for _, s := range seen {
		if strings.Contains(s, "s3cret") || strings.Contains(s, "k1") {
			t.Errorf("the other host got the configured headers: %q", s)
		}
	}
}
