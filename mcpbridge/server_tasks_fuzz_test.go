package mcpbridge_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// FuzzServerTasks sends whatever body a client may with the headers of a
// tasks/* request, a task tool's call or a listen for tasks: the server answers one JSON-RPC
// message (or hands the request to the go-sdk, which does), never panics,
// and an error names no internal detail.
func FuzzServerTasks(f *testing.F) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	f.Add("tasks/get", "x", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x",`+meta+`}}`)
	f.Add("tasks/cancel", "x", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"taskId":"x",`+meta+`}}`)
	f.Add("tasks/update", "x", `{"jsonrpc":"2.0","id":"a","method":"tasks/update","params":{"taskId":"x","inputResponses":{"k":1},`+meta+`}}`)
	f.Add("tools/call", "quick", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"quick","arguments":{},`+meta+`}}`)
	f.Add("tools/call", "quick", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"quick","arguments":[1],"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":null}}}}`)
	f.Add("subscriptions/listen", "", `{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["x","x",""]},`+meta+`}}`)
	f.Add("tasks/get", "\x1b[2J", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"\u001b[2J"}}`)
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(f.TempDir(), "wield.db"), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close(ctx) })
	quick := wield.Func("quick", "Answers at once.", func(context.Context, srvNoArgs) (string, error) { return "ok", nil })
	quick.Task = wield.TaskRequired
	fx := srvNew(f, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, quick)
	h := fx.srv.Handler()
	f.Fuzz(func(t *testing.T, method, name, body string) {
		if strings.ContainsAny(name, "\r\n\x00") || strings.ContainsAny(method, "\r\n\x00") {
			return // not a header value a client can send
		}
		w := srvPost(h, body, srvEraHeaders(method, name)...)
		out := w.Body.String()
		if i := strings.Index(out, "data: "); i >= 0 {
			out, _, _ = strings.Cut(out[i+len("data: "):], "\n")
		}
		if strings.TrimSpace(out) == "" {
			return // a notification, or a status without a body
		}
		var msg struct {
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(out), &msg) != nil {
			if w.Code < 400 {
				t.Fatalf("%s %q: %d %q is neither one JSON-RPC message nor an HTTP error", method, body, w.Code, w.Body.String())
			}
			return
		}
		if msg.Error != nil && strings.Contains(msg.Error.Message, "sqlite") {
			t.Errorf("an error names the store: %q", msg.Error.Message)
		}
	})
}
