package mcpbridge_test

import (
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
