package toolfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// writeConfig writes a wield.yaml (and a picture beside it) to a folder of
// its own.
func writeConfig(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pic.png"), []byte("PNG"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "wield.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfigMCP(t *testing.T) {
	path := writeConfig(t, `mcp:
  resources:
    - {uri: "r://text", name: text, title: Text, description: Some text, mime_type: text/plain, text: hello}
    - {uri: "r://blob", name: blob, mime_type: image/png, blob_base64: UE5H}
    - {uri: "r://file", name: file, file: pic.png}
  resource_templates:
    - uri_template: "r://items/{id}"
      name: item
      mime_type: application/json
      text: '{"id": "{{.id}}"}'
      completions: {id: ["1", "2"]}
  prompts:
    - name: greet
      description: Greets
      arguments:
        - {name: who, required: true, values: [Ann, Bob]}
        - {name: mood}
      messages:
        - {role: user, text: "Greet {{.who}}"}
        - {role: assistant, type: image, mime_type: image/png, file: pic.png}
        - {role: user, type: resource, uri: "people://{{.who}}", mime_type: text/plain, text: about}
        - {role: user, type: resource_link, uri: "r://text", name: text}
    - name: asks
      elicit:
        - {as: topic, message: "Which topic?", schema: {type: object, properties: {t: {type: string}}}}
        - {as: ok, message: "Go on?"}
      messages:
        - {role: user, text: "About {{.topic.content.t}}"}
`)
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	want := MCPConfig{
		Resources: []MCPResource{
			{URI: "r://text", Name: "text", Title: "Text", Description: "Some text", MIMEType: "text/plain", Text: "hello"},
			{URI: "r://blob", Name: "blob", MIMEType: "image/png", Blob: []byte("PNG")},
			{URI: "r://file", Name: "file", File: filepath.Join(dir, "pic.png")},
		},
		ResourceTemplates: []MCPResourceTemplate{{URITemplate: "r://items/{id}", Name: "item", MIMEType: "application/json",
			Text: `{"id": "{{.id}}"}`, Completions: map[string][]string{"id": {"1", "2"}}}},
		Prompts: []MCPPrompt{{Name: "greet", Description: "Greets",
			Arguments: []MCPPromptArgument{{Name: "who", Required: true, Values: []string{"Ann", "Bob"}}, {Name: "mood"}},
			Messages: []MCPPromptMessage{
				{Role: "user", Content: MCPContent{Type: "text", Text: "Greet {{.who}}"}},
				{Role: "assistant", Content: MCPContent{Type: "image", MIMEType: "image/png", Data: []byte("PNG")}},
				{Role: "user", Content: MCPContent{Type: "resource", URI: "people://{{.who}}", MIMEType: "text/plain", Text: "about"}},
				{Role: "user", Content: MCPContent{Type: "resource_link", URI: "r://text", Name: "text"}},
			}},
			{Name: "asks", Elicit: []MCPPromptQuestion{
				{As: "topic", Message: "Which topic?", Schema: []byte(`{"properties":{"t":{"type":"string"}},"type":"object"}`)},
				{As: "ok", Message: "Go on?"},
			}, Messages: []MCPPromptMessage{{Role: "user", Content: MCPContent{Type: "text", Text: "About {{.topic.content.t}}"}}}},
		},
	}
	if diff := cmp.Diff(want, cfg.MCP); diff != "" {
		t.Errorf("mcp (-want +got):\n%s", diff)
	}
}

func TestLoadConfigMCPMistakes(t *testing.T) {
	path := writeConfig(t, `mcp:
  resources:
    - {uri: "r://a", name: a}
    - {uri: "r://b", name: b, text: x, file: pic.png}
    - {uri: "r://c", name: c, blob_base64: "!!"}
    - {uri: "r://d", name: d, file: missing.txt, colour: red}
    - {uri: "r://e", name: e, text: x}
    - {uri: "r://e", name: e2, text: y}
  resource_templates:
    - {uri_template: "r://{+path}", name: t1}
    - {uri_template: "r://{id}", name: t2, text: "{{.id", completions: {other: [x]}}
  prompts:
    - {name: p1}
    - name: p2
      arguments: [{name: a}, {name: a}]
      messages:
        - {role: system, text: x}
        - {role: user, type: image, mime_type: image/png}
        - {role: user, type: video}
        - {role: user, type: resource}
    - name: p3
      elicit: [{message: no name}]
      messages: [{role: user, text: x}]
    - name: p4
      arguments: [{name: topic}]
      elicit:
        - {as: topic, message: "Which topic?"}
        - {as: depth, message: "How deep?", schema: {type: 7}}
        - {as: depth2, message: "Again?"}
        - {as: depth2, message: "Twice?"}
      messages: [{role: user, text: x}]
  tools: []
`)
	got := configProblems(t, path)
	for i := range got {
		got[i] = strings.TrimPrefix(got[i], path+":")
	}
	want := []string{
		"3:8: mcp resource r://a: needs one of text, blob_base64 and file",
		"4:8: mcp resource r://b: needs one of text, blob_base64 and file",
		"5:44: blob_base64: not base64: illegal base64 data at input byte 0",
		`6:37: file: "` + filepath.Join(filepath.Dir(path), "missing.txt") + `" is not a file that can be read`,
		`6:50: mcp resource: unknown field "colour"`,
		`8:7: mcp: resource "r://e" defined twice`,
		"10:22: mcp resource template r://{+path}: only {name} variables are supported",
		`11:8: mcp resource template r://{id}: completions for "other", which is not a variable`,
		"11:50: mcp resource template: text: template: mcp resource template:1: unclosed action",
		"13:8: mcp prompt p1: needs messages",
		`14:7: mcp prompt p2: argument "a" defined twice`,
		`17:18: mcp prompt message: role "system" is not user or assistant`,
		"18:12: mcp prompt message: image content needs data_base64 or file, and mime_type",
		`19:30: mcp prompt message: type "video" is not text, image, audio, resource or resource_link`,
		"20:12: mcp prompt message: resource content needs a uri",
		"22:16: mcp prompt: elicit: each question needs as, message and, optionally, a schema object",
		`27:11: mcp prompt p4: elicit: as "topic" is also an argument's name`,
		`28:11: mcp prompt: elicit: schema: invalid value for "type": "7"`,
		`30:11: mcp prompt p4: elicit: as "depth2" names another question too`,
		`32:3: mcp: unknown field "tools"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestMCPServerPermission: mcp_servers[].permission is read as auto,
// confirm or deny, whichever key comes first; anything else is refused at
// its value, naming the server.
func TestMCPServerPermission(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, "mcp_servers:\n  - {permission: confirm, name: a, url: \"http://127.0.0.1:1/mcp\"}\n  - {name: b, url: \"http://127.0.0.1:1/mcp\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := []wield.Permission{cfg.MCPServers[0].Permission, cfg.MCPServers[1].Permission}; got[0] != wield.PermissionConfirm || got[1] != "" {
		t.Errorf("permissions %q, want confirm and none", got)
	}
	p := writeConfig(t, "mcp_servers:\n  - {permission: ask, name: a, url: \"http://127.0.0.1:1/mcp\"}\n")
	want := p + `:2:18: mcp server a: permission: "ask" is not auto, confirm or deny`
	if got := configProblems(t, p); len(got) != 1 || got[0] != want {
		t.Errorf("problems %q, want %q", got, want)
	}
}
