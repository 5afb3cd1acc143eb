package mcpbridge_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// impRawServer serves JSON-RPC over streamable HTTP (JSON responses) with
// canned answers, as a server that need not be well made: tools is the
// tools/list result's array of tools, call gives the member ("result":…
// or "error":…) that answers a tools/call of the named tool.
func impRawServer(t *testing.T, tools string, call func(name string) string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(b, &m)
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var member string
		switch m.Method {
		case "initialize":
			member = `"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			member = `"result":{"tools":` + tools + `}`
		case "tools/call":
			member = call(m.Params.Name)
		default:
			member = `"result":{}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%s}`, m.ID, member)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}
