package mcpbridge

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestServerDecode(t *testing.T) {
	tests := []struct {
		body string
		want srvFastRequest
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, srvFastRequest{ID: json.RawMessage(`1`), Method: "tools/list"}, true},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"m":1}}}`,
			srvFastRequest{ID: json.RawMessage(`"a"`), Method: "tools/call", Params: srvFastParams{Name: "echo", Arguments: json.RawMessage(`{"m":1}`)}}, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`, srvFastRequest{ID: json.RawMessage(`1`), Method: "tools/list"}, true},
		{`{"jsonrpc":"2.0","id":1,"Method":"tools/list"}`, srvFastRequest{}, false},
		{`{"JSONRPC":"2.0","id":1,"method":"tools/list"}`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"echo"}}`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{}}}`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, srvFastRequest{}, false},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, srvFastRequest{}, false},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","extra":1}`, srvFastRequest{}, false},
	}
	for _, tt := range tests {
		got, ok := srvDecode([]byte(tt.body))
		if ok != tt.ok {
			t.Errorf("%s: ok = %v, want %v", tt.body, ok, tt.ok)
			continue
		}
		if ok {
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: (-want +got):\n%s", tt.body, diff)
			}
		}
	}
}

// FuzzServerDecode checks that whatever the fast path accepts, the SDK
// reads as the same request: the fast path never answers what the SDK
// would refuse or read otherwise.
func FuzzServerDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"echo"}}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"method":"tools/list","params":{"cursor":""}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, ok := srvDecode(body)
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
		}
		if len(r.Params) > 0 && string(r.Params) != "null" {
			if err := json.Unmarshal(r.Params, &params); err != nil {
				t.Fatalf("params of %q: %v", body, err)
			}
		}
		if params.Name != req.Params.Name {
			t.Fatalf("fast path reads the name %q, the SDK %q, in %q", req.Params.Name, params.Name, body)
		}
	})
}
