package mcpbridge_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wieldhq/wield/mcpbridge"
)

// TestServerRefusesAmbiguousEnvelopes sends JSON-RPC messages a lenient
// reader would take one way or another, on every path (fast path on and
// off, stateful and stateless, a client that can elicit): each is a 400
// with an Invalid Request error naming the key, and plain messages still
// work.
func TestServerRefusesAmbiguousEnvelopes(t *testing.T) {
	refused := []struct{ body, says string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a"},"arguments":{"message":"b"}}}`, `duplicate key "arguments" in params`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a","message":"b"}}}`, `duplicate key "message" in params/arguments`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","method":"tools/list","params":{"name":"echo"}}`, `duplicate key "method"`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","ARGUMENTS":{"message":"a"}}}`, `unknown key "ARGUMENTS" in params (keys are case-sensitive: did you mean "arguments"?)`},
		{`{"jsonrpc":"2.0","id":5,"METHOD":"tools/call","method":"tools/list"}`, `unknown key "METHOD"`},
		{"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"message\":\"\xff\"}}}", `not valid UTF-8`},
	}
	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":%s,"clientInfo":{"name":"raw","version":"1"}}}`
	for _, tc := range []struct {
		name              string
		stateless, noFast bool
		caps              string
	}{
		{"fast path", false, false, "{}"},
		{"sdk path", false, true, "{}"},
		{"stateless", true, false, "{}"},
		{"eliciting client", false, false, `{"elicitation":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := srvNew(t, &mcpbridge.ServerOptions{Stateless: tc.stateless, DisableFastPath: tc.noFast}, nil)
			ts := httptest.NewServer(f.srv.Handler())
			t.Cleanup(ts.Close)
			c := &srvRaw{t: t, url: ts.URL + "/mcp"}
			if !tc.stateless {
				c.post(strings.Replace(initialize, "%s", tc.caps, 1))
				c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			for _, rq := range refused {
				r := c.post(rq.body)
				m, _ := r.body.(map[string]any)
				e, _ := m["error"].(map[string]any)
				msg, _ := e["message"].(string)
				if r.status != 400 || e["code"] != float64(-32600) || !strings.Contains(msg, rq.says) {
					t.Errorf("%s: %d %v, want 400 and an Invalid Request error saying %q", rq.body, r.status, r.body, rq.says)
				}
			}
			r := c.post(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"message":"plain"}}}`)
			if r.status != 200 || !strings.Contains(jsonText(r.body), "plain") {
				t.Errorf("a plain call: %d %v", r.status, r.body)
			}
		})
	}
}

func jsonText(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			b.WriteString(v + " ")
		}
	}
	walk(v)
	return b.String()
}

// srvCloseCounter is a request body that counts its Close calls.
type srvCloseCounter struct {
	io.Reader
	closed int
}

func (c *srvCloseCounter) Close() error { c.closed++; return nil }

// TestServerClosesReadBody wants a tools/call's body, read to its end by
// the envelope check, closed and back in its request once answered, in a
// session and in the stateless era: net/http, finishing the answer, then
// sees a body read whole instead of reading on to find its end.
func TestServerClosesReadBody(t *testing.T) {
	f := srvNew(t, nil, nil)
	h := f.srv.Handler()
	w := srvPost(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	id := w.Header().Get("Mcp-Session-Id")
	if w.Code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	session := []string{"Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25"}
	srvPost(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session...)
	for _, tc := range []struct {
		name    string
		body    string
		headers []string
		want    string
	}{
		{"session", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, session, `"echo":"hi"`},
		{"stateless era", srvEraBody, srvEraEchoHeaders, `\"echo\":\"hi\"`},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
		body := &srvCloseCounter{Reader: strings.NewReader(tc.body)}
		r.Body, r.ContentLength = body, int64(len(tc.body))
		r.Host = "127.0.0.1"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(tc.headers); i += 2 {
			r.Header.Set(tc.headers[i], tc.headers[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), tc.want) {
			t.Fatalf("%s: %d %s", tc.name, w.Code, w.Body)
		}
		if body.closed == 0 || r.Body != io.ReadCloser(body) {
			t.Errorf("%s: the body was closed %d times, the request's body is %T: want it closed and back", tc.name, body.closed, r.Body)
		}
	}
}
