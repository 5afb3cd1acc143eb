package mcpbridge_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestServerResultKeepsText checks that a tools/call result hands a model
// <, > and & as they are, in the text content and in structuredContent, by
// the fast path (also on the wire) and by the SDK's, also when the tool
// wrote its output with encoding/json's HTML escapes.
func TestServerResultKeepsText(t *testing.T) {
	const code = "if a < b && c > d"
	escaped := wield.Raw("escaped", "Answers JSON escaped for HTML", &jsonschema.Schema{Type: "object"},
		wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.Marshal(map[string]string{"echo": code}) // {"echo":"if a \u003c b ..."}
		}))
	for _, disabled := range []bool{false, true} {
		f := srvNew(t, &mcpbridge.ServerOptions{Stateless: true, DisableFastPath: disabled}, nil, escaped)
		ts := httptest.NewServer(f.srv.Handler())
		t.Cleanup(ts.Close)
		for _, tool := range []string{"echo", "escaped"} {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"message":"` + code + `"}}}`
			req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			wire := string(raw)
			if i := strings.Index(wire, "{"); i >= 0 {
				wire = wire[i:] // past an event's "data: "
			}
			var msg struct {
				Result struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
					StructuredContent struct {
						Echo string `json:"echo"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.NewDecoder(strings.NewReader(wire)).Decode(&msg); err != nil || len(msg.Result.Content) == 0 {
				t.Fatalf("fast path %v, %s: %v: %s", !disabled, tool, err, raw)
			}
			if got, want := msg.Result.Content[0].Text, `{"echo":"`+code+`"}`; got != want {
				t.Errorf("fast path %v, %s: text %q, want %q", !disabled, tool, got, want)
			}
			if got := msg.Result.StructuredContent.Echo; got != code {
				t.Errorf("fast path %v, %s: structuredContent echo %q, want %q", !disabled, tool, got, code)
			}
			if !disabled && !strings.Contains(wire, code) {
				t.Errorf("%s: the fast path wrote %s, want %q as it is", tool, raw, code)
			}
		}
	}
}
