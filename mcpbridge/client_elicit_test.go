package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// impFormSchema is a form as a server sends it: decoded from JSON.
func impFormSchema(t *testing.T, js string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestElicitDefaults(t *testing.T) {
	tests := []struct {
		name string
		req  *mcp.ElicitParams
		want *mcp.ElicitResult
	}{
		{"defaults of every type", &mcp.ElicitParams{Mode: "form", RequestedSchema: impFormSchema(t, `{"type":"object","properties":{
			"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},
			"status":{"type":"string","enum":["active","inactive"],"default":"active"},"verified":{"type":"boolean","default":true},
			"note":{"type":"string"}}}`)},
			&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "John Doe", "age": 30.0, "score": 95.5, "status": "active", "verified": true}}},
		{"required with a default", &mcp.ElicitParams{RequestedSchema: impFormSchema(t, `{"type":"object","properties":{"ok":{"type":"boolean","default":false}},"required":["ok"]}`)},
			&mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": false}}},
		{"required without a default", &mcp.ElicitParams{RequestedSchema: impFormSchema(t, `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
			&mcp.ElicitResult{Action: "decline"}},
		{"no schema", &mcp.ElicitParams{Mode: "form", Message: "proceed?"},
			&mcp.ElicitResult{Action: "accept", Content: map[string]any{}}},
		{"url", &mcp.ElicitParams{Mode: "url", URL: "https://example.com/consent", ElicitationID: "e1"},
			&mcp.ElicitResult{Action: "decline"}},
		{"unreadable schema", &mcp.ElicitParams{RequestedSchema: impFormSchema(t, `{"type":"object","properties":"none"}`)},
			&mcp.ElicitResult{Action: "decline"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcpbridge.ElicitDefaults(t.Context(), "s", tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ElicitDefaults (-want +got):\n%s", diff)
			}
		})
	}
}

// impElicitingTool asks the client for a form during the call and answers
// with what it got, or with the error of the request.
func impElicitingTool() impRemote {
	return impRemote{
		tool: &mcp.Tool{Name: "ask", InputSchema: impObject, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		handle: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "who?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{
					"name":  map[string]any{"type": "string", "default": "Ada"},
					"count": map[string]any{"type": "integer", "default": 2}}}})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			b, _ := json.Marshal(map[string]any{"action": res.Action, "content": res.Content})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		},
	}
}

// A server's elicitation during a call reaches the importer's Elicit with
// the server's name; without Elicit the importer does not offer it, and an
// Elicit that fails tells the server no more than that.
func TestImportElicit(t *testing.T) {
	var mu sync.Mutex
	var servers []string
	record := func(f mcpbridge.ElicitFunc) mcpbridge.ElicitFunc {
		return func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			mu.Lock()
			servers = append(servers, server)
			mu.Unlock()
			return f(ctx, server, req)
		}
	}
	tests := []struct {
		name        string
		elicit      mcpbridge.ElicitFunc
		wantOK      bool
		wantOutput  string // JSON when the call succeeds, else a part of its error
		wantServers []string
	}{
		{"defaults", record(mcpbridge.ElicitDefaults), true, `{"action":"accept","content":{"count":2,"name":"Ada"}}`, []string{"asker"}},
		{"partial answer, defaults filled by the SDK",
			record(func(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}}, nil
			}), true, `{"action":"accept","content":{"count":2,"name":"Grace"}}`, []string{"asker"}},
		{"declined", record(func(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}), true, `{"action":"decline","content":null}`, []string{"asker"}},
		{"failed", record(func(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return nil, errors.New("secret internal detail")
		}), false, "elicitation failed", []string{"asker"}},
		{"not offered", nil, false, "does not support elicitation", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			servers = nil
			mu.Unlock()
			g := impNewGoServer(t, impElicitingTool())
			reg := wield.NewRegistry(nil)
			im := impImporter(t, reg, &mcpbridge.ImportOptions{Elicit: tt.elicit})
			if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "asker", URL: g.url(), Enabled: true}); err != nil {
				t.Fatal(err)
			}
			r := impCall(t, impEngine(t, reg), "asker__ask", `{}`)
			if r.OK != tt.wantOK {
				t.Fatalf("call ok = %v, want %v (output %s, error %s)", r.OK, tt.wantOK, r.Output, r.Error)
			}
			switch {
			case r.OK:
				if diff := cmp.Diff(impJSONText(t, tt.wantOutput), impJSONText(t, string(r.Output))); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
			case !strings.Contains(r.Error, tt.wantOutput) || strings.Contains(r.Error, "secret"):
				t.Errorf("error %q, want one containing %q and nothing of the importer's error", r.Error, tt.wantOutput)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tt.wantServers, servers); diff != "" {
				t.Errorf("Elicit called for (-want +got):\n%s", diff)
			}
		})
	}
}

// impJSON is v as generic JSON, for comparing schemas whatever their Go type.
func impJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// impJSONText decodes s, a JSON text a test expects or got.
func impJSONText(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}
