package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// srvPNG is a 1x1 PNG.
var srvPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// srvContentJSON is the content of a result as JSON, to compare.
func srvContentJSON(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(r.Content)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServerRichContent(t *testing.T) {
	pic := wield.Func("pic", "Returns a picture", func(context.Context, srvNoArgs) (json.RawMessage, error) {
		return mcpbridge.ContentOutput(
			mcpbridge.Content{Type: mcpbridge.ContentText, Text: "a picture:"},
			mcpbridge.Content{Type: mcpbridge.ContentImage, Data: srvPNG, MIMEType: "image/png"},
			mcpbridge.Content{Type: mcpbridge.ContentResource, URI: "note://1", MIMEType: "text/plain", Text: "note"},
			mcpbridge.Content{Type: mcpbridge.ContentResourceLink, URI: "note://2", Name: "second"},
		)
	})
	// Another key beside mcp_content: an ordinary object.
	plain := wield.Func("plain", "Returns an object", func(context.Context, srvNoArgs) (map[string]any, error) {
		return map[string]any{"mcp_content": []any{}, "other": 1}, nil
	})
	want := `[{"type":"text","text":"a picture:"},` +
		`{"type":"image","mimeType":"image/png","data":"` + b64(srvPNG) + `"},` +
		`{"type":"resource","resource":{"uri":"note://1","mimeType":"text/plain","text":"note"}},` +
		`{"type":"resource_link","uri":"note://2","name":"second"}]`
	for _, tr := range []srvTransport{srvStateful, srvStateless, srvStdio} {
		t.Run(string(tr), func(t *testing.T) {
			f := srvNew(t, &mcpbridge.ServerOptions{Stateless: tr == srvStateless}, nil, pic, plain)
			cs := srvConnect(t, f, tr, "/mcp", nil)
			res := srvCall(t, cs, "pic", map[string]any{})
			if diff := cmp.Diff(want, srvContentJSON(t, res)); diff != "" || res.IsError || res.StructuredContent != nil {
				t.Errorf("pic (-want +got):\n%s\nisError %v, structured %v", diff, res.IsError, res.StructuredContent)
			}
			v := srvViewOf(srvCall(t, cs, "plain", map[string]any{}))
			if diff := cmp.Diff(srvView{Text: []string{`{"mcp_content":[],"other":1}`}, Structured: `{"mcp_content":[],"other":1}`}, v); diff != "" {
				t.Errorf("plain (-want +got):\n%s", diff)
			}
		})
	}
}

func b64(b []byte) string {
	out, _ := json.Marshal(b) // []byte marshals as standard base64
	return strings.Trim(string(out), `"`)
}

func TestContentOutputRefusesIncompleteItems(t *testing.T) {
	for _, c := range []mcpbridge.Content{
		{Type: mcpbridge.ContentImage, MIMEType: "image/png"},
		{Type: mcpbridge.ContentAudio, Data: srvPNG},
		{Type: mcpbridge.ContentResource, Text: "no uri"},
		{Type: mcpbridge.ContentResourceLink, URI: "x://y"},
		{Type: "video"},
	} {
		if _, err := mcpbridge.ContentOutput(c); err == nil {
			t.Errorf("ContentOutput(%+v) = nil error", c)
		}
	}
}

// A Go tool returns pictures (or sound, or documents) to MCP clients by
// returning ContentOutput's object; other callers get that object as JSON.
func ExampleContentOutput() {
	out, err := mcpbridge.ContentOutput(
		mcpbridge.Content{Type: mcpbridge.ContentText, Text: "Here is the chart:"},
		mcpbridge.Content{Type: mcpbridge.ContentImage, Data: []byte("PNG..."), MIMEType: "image/png"},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// {"mcp_content":[{"type":"text","text":"Here is the chart:"},{"type":"image","mimeType":"image/png","data":"UE5HLi4u"}]}
}
