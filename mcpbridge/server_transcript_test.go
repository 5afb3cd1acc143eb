package mcpbridge_test

import (
	"encoding/json"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/mcpbridge"
)

var srvUpdate = flag.Bool("update-server", false, "rewrite the golden transcripts of testdata/server")

// TestServerTranscript keeps the wire form of tools/list and tools/call,
// as a stateless server answers them, in testdata/server/stateless.txt:
// each request after "> ", its answer after "< " (call IDs replaced).
// Run with -update-server to rewrite it.
func TestServerTranscript(t *testing.T) {
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shout","arguments":{"message":"hi"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fail","arguments":{"message":"x"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
	}
	var b strings.Builder
	for _, disabled := range []bool{false, true} {
		f := srvNew(t, &mcpbridge.ServerOptions{Stateless: true, DisableFastPath: disabled}, nil)
		ts := httptest.NewServer(f.srv.Handler())
		defer ts.Close()
		c := &srvRaw{t: t, url: ts.URL + "/mcp"}
		var got strings.Builder
		for _, rq := range requests {
			r := c.post(rq)
			// Compact JSON with sorted keys: encoding/json sorts map keys.
			out, err := json.Marshal(srvNormal(r.body))
			if err != nil {
				t.Fatal(err)
			}
			got.WriteString("> " + rq + "\n< " + string(out) + "\n")
		}
		if !disabled {
			b.WriteString(got.String())
			continue
		}
		if diff := cmp.Diff(b.String(), got.String()); diff != "" {
			t.Errorf("the SDK path answers otherwise (-fast +sdk):\n%s", diff)
		}
	}
	path := filepath.Join("testdata", "server", "stateless.txt")
	if *srvUpdate {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-server to write it)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("transcript (-%s +got):\n%s", path, diff)
	}
}
