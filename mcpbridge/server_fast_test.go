package mcpbridge_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/mcpbridge"
)

// srvRaw is an MCP client of raw HTTP requests, to see the wire.
type srvRaw struct {
	t       *testing.T
	url     string
	session string
}

// srvReply is one answer as the wire carried it.
type srvReply struct {
	status      int
	contentType string
	body        any // the JSON-RPC message, decoded
}

func (c *srvRaw) post(body string) srvReply {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") {
		// One event carries the answer: its data lines.
		var data []byte
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 0, 1<<20), 8<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && len(d) > 0 && d[0] == '{' {
				data = []byte(d)
			}
		}
		raw = data
	}
	r := srvReply{status: resp.StatusCode, contentType: ct}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			c.t.Fatalf("reply to %s: %v: %q", body, err, raw)
		}
	}
	return r
}

// srvNormal replaces what differs between two runs of a call: its ID.
func srvNormal(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if res, ok := m["result"].(map[string]any); ok {
		if meta, ok := res["_meta"].(map[string]any); ok && meta[mcpbridge.MetaCallID] != nil {
			meta[mcpbridge.MetaCallID] = "ID"
		}
	}
	return m
}

// TestServerFastPathAnswersAsSDK sends the same requests to a server with
// its fast path and to one without, and compares the answers.
func TestServerFastPathAnswersAsSDK(t *testing.T) {
	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	requests := []struct {
		body string
		fast bool // the fast path answers it
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, true},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, true},
		{`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, true},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shout","arguments":{"message":"hi"}}}`, true},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"shout","arguments":{"message":["a"]}}}`, true},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo"}}`, true},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fail","arguments":{"message":"x"}}}`, true},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"wipe","arguments":{"message":"x"}}}`, true},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, false},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"message":"p"},"_meta":{"progressToken":"t"}}}`, false},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"cursor":"bogus"}}`, false},
		{`{"jsonrpc":"2.0","id":12,"method":"ping"}`, false},
	}
	for _, stateless := range []bool{false, true} {
		name := map[bool]string{false: "stateful", true: "stateless"}[stateless]
		t.Run(name, func(t *testing.T) {
			clients := map[bool]*srvRaw{}
			for _, disabled := range []bool{false, true} {
				f := srvNew(t, &mcpbridge.ServerOptions{Stateless: stateless, DisableFastPath: disabled}, nil)
				ts := httptest.NewServer(f.srv.Handler())
				t.Cleanup(ts.Close)
				c := &srvRaw{t: t, url: ts.URL + "/mcp"}
				if !stateless {
					if r := c.post(initialize); r.status != 200 || c.session == "" {
						t.Fatalf("initialize: status %d, session %q", r.status, c.session)
					}
					if r := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != 202 {
						t.Fatalf("initialized: status %d", r.status)
					}
				}
				clients[disabled] = c
			}
			for _, rq := range requests {
				fast, sdk := clients[false].post(rq.body), clients[true].post(rq.body)
				if sdk.body == nil {
					t.Errorf("%s: no answer from the SDK path (status %d)", rq.body, sdk.status)
				}
				if diff := cmp.Diff(srvNormal(sdk.body), srvNormal(fast.body)); diff != "" {
					t.Errorf("%s: answer (-sdk +fast):\n%s", rq.body, diff)
				}
				if sdk.status != fast.status {
					t.Errorf("%s: status %d with the fast path, %d without", rq.body, fast.status, sdk.status)
				}
				// Only the fast path answers application/json: it proves
				// which path answered.
				if got := fast.contentType == "application/json"; got != rq.fast {
					t.Errorf("%s: answered by the fast path: %v, want %v", rq.body, got, rq.fast)
				}
				if sdk.contentType == "application/json" {
					t.Errorf("%s: the SDK path answered application/json", rq.body)
				}
			}
		})
	}
}

// TestServerFastPathLeavesAskingClients checks that a client able to
// elicit is served by the SDK, which routes what a tool asks it.
func TestServerFastPathLeavesAskingClients(t *testing.T) {
	f := srvNew(t, nil, nil)
	ts := httptest.NewServer(f.srv.Handler())
	defer ts.Close()
	c := &srvRaw{t: t, url: ts.URL + "/mcp"}
	c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r := c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	if r.contentType == "application/json" {
		t.Errorf("a client that can elicit was answered by the fast path")
	}
}
