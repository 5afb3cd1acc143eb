package mcpbridge

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// impPeekBodies are requests an import writes: those peeked (initialize,
// a first listing) and those not (a later page, a call, odd params).
var impPeekBodies = []string{
	`{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
	`{"method":"tools/list"}`,
	`{"method":"tools/list","params":{}}`,
	`{"method":"tools/list","params":null}`,
	`{"method":"tools/list","params":{"cursor":"2"}}`,
	`{"method":"tools/list","params":{"cursor":7}}`,
	`{"method":"tools/list","params":[1]}`,
	`{"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
	`{"method":"ping"}`,
}

// TestPeekMethodSameAsBody: a stdio import reads what it writes from the
// request as decoded (impPeekMethod), as an HTTP import reads it from the
// body (impPeekRequest): the same answer for each request.
func TestPeekMethodSameAsBody(t *testing.T) {
	for _, body := range impPeekBodies {
		var q struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal([]byte(body), &q); err != nil {
			t.Fatal(err)
		}
		wm, wf := impPeekRequest([]byte(body))
		gm, gf := impPeekMethod(q.Method, q.Params)
		if wm != gm || wf != gf {
			t.Errorf("%s: (%q, %v) from the request, (%q, %v) from the body", body, gm, gf, wm, wf)
		}
	}
}

// BenchmarkPeekWritten compares what a stdio import does with each request
// it writes (a tools/call here): peek at the decoded request (now), and
// encode it to decode it again (before).
func BenchmarkPeekWritten(b *testing.B) {
	q := &jsonrpc.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{"message":"hello, a few hundred bytes of arguments would be usual here"}}`)}
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if m, _ := impPeekMethod(q.Method, q.Params); m != "" {
				b.Fatal("peeked a call")
			}
		}
	})
	b.Run("encoded-again", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			body, _ := json.Marshal(struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params,omitempty"`
			}{q.Method, q.Params})
			if m, _ := impPeekRequest(body); m != "" {
				b.Fatal("peeked a call")
			}
		}
	})
}
