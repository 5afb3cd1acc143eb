package mcpbridge

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// srvEraMetaKeys are the _meta members the fast path answers requests
// with, as the SDK names them.
var srvEraMetaKeys = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}

// srvEraDecodeRef is the reading of srvEraDecode with encoding/json, maps
// at every level, as the fast path read requests before it took jsondec:
// the reference FuzzServerEraDecodeSame holds srvEraDecode to.
func srvEraDecodeRef(body []byte, version string) (srvEraRequest, bool) {
	var req srvEraRequest
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || string(top["jsonrpc"]) != `"2.0"` || json.Unmarshal(top["method"], &req.Method) != nil {
		return req, false
	}
	req.ID = top["id"]
	if !srvPlainID(req.ID) || len(top) != 4 || top["params"] == nil {
		return req, false // 4: jsonrpc, id, method, params
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(top["params"], &params) != nil {
		return req, false
	}
	var meta map[string]json.RawMessage
	for k, v := range params {
		var err error
		switch k {
		case "name":
			err = json.Unmarshal(v, &req.Params.Name)
		case "arguments":
			req.Params.Arguments = v
		case "_meta":
			err = json.Unmarshal(v, &meta)
		case "inputResponses":
			err = json.Unmarshal(v, &req.input.responses)
			if err == nil && req.input.responses == nil {
				err = errors.New("inputResponses: null")
			}
		case "requestState":
			err = json.Unmarshal(v, &req.input.state)
			if err == nil && req.input.state == "" {
				err = errors.New("requestState: empty")
			}
		default:
			return req, false // a cursor, say
		}
		if err != nil {
			return req, false
		}
	}
	var pv string
	if json.Unmarshal(meta[mcp.MetaKeyProtocolVersion], &pv) != nil || pv != version {
		return req, false
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(meta[mcp.MetaKeyClientCapabilities], &caps) != nil || caps == nil {
		return req, false
	}
	for _, c := range caps {
		if len(c) == 0 || c[0] != '{' {
			return req, false
		}
	}
	if e, ok := caps["elicitation"]; ok {
		var ec mcp.ElicitationCapabilities
		if json.Unmarshal(e, &ec) != nil {
			return req, false
		}
		req.input.canElicit = srvCanElicitCaps(&ec)
	}
	_, req.input.canSample = caps["sampling"]
	if ci, ok := meta[mcp.MetaKeyClientInfo]; ok {
		var info mcp.Implementation
		if string(ci) == "null" || json.Unmarshal(ci, &info) != nil {
			return req, false
		}
		req.client = info.Name
	}
	for k := range meta {
		if !slices.Contains(srvEraMetaKeys, k) {
			return req, false
		}
	}
	return req, true
}

// srvEraDecodeCases are requests of the stateless era, accepted and
// refused, for the differential test and as its fuzzer's seeds.
var srvEraDecodeCases = func() []string {
	const pv = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	const ci = `"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}`
	const cc = `"io.modelcontextprotocol/clientCapabilities":`
	meta := `"_meta":{` + pv + `,` + ci + `,` + cc + `{}}`
	call := func(params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + params + `}}`
	}
	return []string{
		call(`"name":"echo","arguments":{"message":"hi"},` + meta),
		`{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{` + meta + `}}`,
		` {"params":{` + meta + `,"arguments":{"a":[1,{"b":null}]} ,"name":"e\u0063ho"},"method":"tools/call","id":-1.5e3,"jsonrpc":"2.0"} `,
		call(`"name":"echo","_meta":{` + pv + `,` + cc + `{"elicitation":{}}}`),
		call(`"name":"echo","_meta":{` + pv + `,` + cc + `{"elicitation":{"url":{}}}}`),
		call(`"name":"echo","_meta":{` + pv + `,` + cc + `{"elicitation":{"FORM":{},"url":{}},"sampling":{"tools":{}}}}`),
		call(`"name":"echo","_meta":{` + pv + `,` + cc + `{"elicitation":{"form":1}}}`),
		call(`"name":"echo","_meta":{` + pv + `,` + cc + `{"roots":null}}`),
		call(`"name":"echo","_meta":{` + pv + `,` + cc + `{"roots":[]}}`),
		call(`"name":"echo","_meta":{` + pv + `,` + cc + `null}`),
		call(`"name":"echo","_meta":{` + pv + `}`),
		call(`"name":"echo","_meta":{` + cc + `{}}`),
		call(`"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25",` + cc + `{}}`),
		call(`"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":null,` + cc + `{}}`),
		call(`"name":"echo","_meta":{` + pv + `,"io.modelcontextprotocol/clientInfo":null,` + cc + `{}}`),
		call(`"name":"echo","_meta":{` + pv + `,"io.modelcontextprotocol/clientInfo":{"NAME":"up","version":1},` + cc + `{}}`),
		call(`"name":"echo","_meta":{` + pv + `,"io.modelcontextprotocol/clientInfo":{"Name":"up","icons":[{"src":"x"}]},` + cc + `{}}`),
		call(`"name":"echo","_meta":{` + pv + `,` + cc + `{},"progressToken":1}`),
		call(`"name":"echo","_meta":{` + pv + `,` + cc + `{},"IO.modelcontextprotocol/protocolVersion":"x"}`),
		call(`"name":"echo",` + meta + `,"cursor":"c"`),
		call(`"NAME":"echo",` + meta),
		call(`"name":null,"arguments":null,` + meta),
		call(`"name":5,` + meta),
		call(`"name":"echo","_meta":null`),
		call(`"name":"echo","_meta":[]`),
		call(`"name":"echo",` + meta + `,"inputResponses":{"approval":{"action":"accept","content":{"approve":true}}},"requestState":"abc"`),
		call(`"name":"echo",` + meta + `,"inputResponses":null`),
		call(`"name":"echo",` + meta + `,"inputResponses":[]`),
		call(`"name":"echo",` + meta + `,"requestState":""`),
		call(`"name":"echo",` + meta + `,"requestState":null`),
		call(`"name":"echo",` + meta + `,"requestState":1`),
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{` + meta + `}}`,
		`{"jsonrpc":"2\u002e0","id":1,"method":"tools/call","params":{` + meta + `}}`,
		`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":null,"params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `},"extra":1}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `}}x`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `}}]`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{` + meta + `}}`,
		call(`"name":"echo","name":"rm",` + meta),
		call("\"name\":\"\xff\"," + meta),
		call(`"name":"\ud800",` + meta),
		`null`, `{}`, `"x"`, ``,
	}
}()

// TestServerEraDecodeSame holds srvEraDecode to the encoding/json reading
// it replaced, on the cases (see srvEraDecodeSame).
func TestServerEraDecodeSame(t *testing.T) {
	accepted := 0
	for _, c := range srvEraDecodeCases {
		if srvEraDecodeSame(t, []byte(c)) {
			accepted++
		}
	}
	if accepted < 8 {
		t.Errorf("%d of the cases accepted: the test says little", accepted)
	}
	for _, tag := range []string{"ProtocolVersion", "ClientInfo", "ClientCapabilities"} {
		f, _ := reflect.TypeFor[srvEraMeta]().FieldByName(tag)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); !slices.Contains(srvEraMetaKeys, name) {
			t.Errorf("srvEraMeta.%s is read from %q, not a key the SDK names", tag, name)
		}
	}
}

// FuzzServerEraDecodeSame is TestServerEraDecodeSame on any input.
func FuzzServerEraDecodeSame(f *testing.F) {
	for _, c := range srvEraDecodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, body []byte) { srvEraDecodeSame(t, body) })
}

// srvEraDecodeSame checks srvEraDecode on body against srvEraDecodeRef:
// what it accepts, the reference accepts and reads the same, and the
// strict check of every POST (srvStrictEnvelope) accepts; what the
// reference refuses, it refuses; and what the reference accepts, it
// accepts too, unless the strict check every POST passes first
// (srvCheckEnvelope) refuses the body (a duplicate key, invalid UTF-8),
// or the method is "" (null in the reference's reading), which no
// Mcp-Method header the fast path answers names. It reports whether
// srvEraDecode accepted body.
func srvEraDecodeSame(t *testing.T, body []byte) bool {
	t.Helper()
	got, ok := srvEraDecode(body, "2026-07-28")
	want, wantOK := srvEraDecodeRef(body, "2026-07-28")
	switch {
	case ok && !wantOK:
		t.Errorf("accepts %q, which encoding/json's reading refused", body)
	case ok && !reflect.DeepEqual(got, want):
		t.Errorf("reads %q as\n %#v\nwant %#v", body, got, want)
	case ok:
		// srvCheckEnvelope takes srvEraDecode's word for the envelope.
		var id json.RawMessage
		if _, _, err := srvStrictEnvelope(body, &id); err != nil {
			t.Errorf("accepts %q, which the strict check refuses: %v", body, err)
		}
	case !ok && wantOK && want.Method != "":
		var id json.RawMessage
		if _, _, err := srvStrictEnvelope(body, &id); err == nil {
			t.Errorf("refuses %q, which encoding/json's reading accepted as %#v", body, want)
		}
	}
	return ok
}
