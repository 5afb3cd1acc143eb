package mcpbridge

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// srvTaskCallBodies are tools/call requests of the 2026-07-28 era that the
// era's fast path decodes: with and without the Tasks extension, the
// capabilities that can be asked, a client's name, answers and a retry.
var srvTaskCallBodies = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"tasker","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"other/ext":{},"io.modelcontextprotocol/tasks":{"x":1}},"elicitation":{"form":{}},"sampling":{},"roots":{}}}}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"other/ext":{}},"elicitation":{"url":{}}}}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","inputResponses":{"k":{"action":"accept","content":{"n":1}}},"requestState":"st","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"elicitation":{}}}}}`,
}

// TestTaskCallSameEitherWay: the tasks path reads a tools/call the same
// from the era's decoding (once, no second pass over the body) as from its
// own decoding of the body.
func TestTaskCallSameEitherWay(t *testing.T) {
	for _, body := range srvTaskCallBodies {
		era, ok := srvEraDecode([]byte(body), "2026-07-28")
		if !ok {
			t.Fatalf("%s: the era's decoding refused it", body)
		}
		got, ok := srvTaskCallOfEra(&era)
		if !ok {
			t.Fatalf("%s: srvTaskCallOfEra refused it", body)
		}
		var q srvTaskRequest
		if err := json.Unmarshal([]byte(body), &q); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(q.call(), got, cmp.AllowUnexported(srvTaskCall{}, srvEraInput{})); diff != "" {
			t.Errorf("%s (-decoded again +from the era's decoding):\n%s", body, diff)
		}
	}
}

// BenchmarkTaskCallOf compares the tasks path's reading of a tools/call
// of a client declaring the Tasks extension: from the era's decoding, as
// now, and decoding the body again, as before.
func BenchmarkTaskCallOf(b *testing.B) {
	body := []byte(srvTaskCallBodies[1])
	b.Run("era", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			era, _ := srvEraDecode(body, "2026-07-28")
			if c, ok := srvTaskCallOfEra(&era); !ok || !c.tasks {
				b.Fatal("not read")
			}
		}
	})
	b.Run("again", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			srvEraDecode(body, "2026-07-28")
			cp := make([]byte, len(body))
			copy(cp, body)
			var q srvTaskRequest
			if json.Unmarshal(cp, &q) != nil || !q.call().tasks {
				b.Fatal("not read")
			}
		}
	})
}
