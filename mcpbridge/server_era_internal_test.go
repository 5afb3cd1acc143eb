package mcpbridge

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzServerEraDecode checks that whatever the stateless era's fast path
// accepts, the SDK reads as the same call: same method, same tool, the
// protocol version in _meta.
func FuzzServerEraDecode(f *testing.F) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"echo",` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, ok := srvEraDecode(body, "2026-07-28")
		if !ok {
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			t.Fatalf("fast path accepts %q, the SDK refuses it: %v", body, err)
		}
		r, isReq := msg.(*jsonrpc.Request)
		if !isReq || !r.IsCall() || r.Method != req.Method {
			t.Fatalf("fast path reads %q as a call of %q, the SDK as %#v", body, req.Method, msg)
		}
		var params struct {
			Name string `json:"name"`
			Meta struct {
				Version string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(r.Params, &params); err != nil {
			t.Fatalf("params of %q: %v", body, err)
		}
		if params.Name != req.Params.Name || params.Meta.Version != "2026-07-28" {
			t.Fatalf("fast path reads the name %q, the SDK %q (version %q), in %q", req.Params.Name, params.Name, params.Meta.Version, body)
		}
	})
}
