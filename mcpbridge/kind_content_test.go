package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/toolfile"
)

// srvKindFiles are tool files of the entry types content and mcp_client.
const srvKindFiles = `
- name: hello
  description: Greets
  parameters:
    - {name: who, type: string}
  entry:
    type: content
    content:
      - {type: text, text: "Hello {{.who}}"}
      - {type: image, mime_type: image/png, file: pic.png}
      - {type: resource, uri: "greeting://{{.who}}", mime_type: text/plain, text: "for {{.who}}"}
- name: chatty
  description: Logs, reports progress, asks
  parameters:
    - {name: topic, type: string}
  entry:
    type: mcp_client
    steps:
      - log: {level: info, message: "start {{.topic}}"}
      - log: {level: debug, message: below the level}
      - progress: {progress: 1, total: 2, message: half}
      - sleep: 1ms
      - sample: {prompt: "Tell me about {{.topic}}", max_tokens: 20, as: reply}
      - elicit:
          message: "Name for {{.topic}}?"
          schema: {type: object, properties: {name: {type: string, default: Ada}}, required: [name]}
          as: answer
      - progress: {progress: 2, total: 2}
    text: "{{.reply.model}} said {{.reply.text}}; {{.answer.action}} {{json .answer.content}}"
- name: broken
  description: Always fails
  entry:
    type: mcp_client
    steps:
      - fail: "no luck"
`

// srvKindTools loads srvKindFiles with the two kinds.
func srvKindTools(t *testing.T) []*wield.Tool {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pic.png"), srvPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"content": mcpbridge.ContentKind(), "mcp_client": mcpbridge.ClientKind()}}
	set, err := l.Load(context.Background(), filepath.Join(dir, "tools.yaml"), []byte(srvKindFiles))
	if err != nil {
		t.Fatal(err)
	}
	return set.Tools
}

func TestServerContentKinds(t *testing.T) {
	var asked []string
	copts := &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			b, _ := json.Marshal(r.Params.RequestedSchema)
			asked = append(asked, r.Params.Message+" "+string(b))
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Bo"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked = append(asked, fmt.Sprintf("%s %d", r.Params.Messages[0].Content.(*mcp.TextContent).Text, r.Params.MaxTokens))
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m1", Content: &mcp.TextContent{Text: "it is big"}}, nil
		},
	}
	got, logs := srvCollector()
	copts.ProgressNotificationHandler = logs.ProgressNotificationHandler
	copts.LoggingMessageHandler = logs.LoggingMessageHandler
	f := srvNew(t, nil, nil, srvKindTools(t)...)
	cs := srvConnect(t, f, srvStateful, "/mcp", copts)
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}

	hello := srvCall(t, cs, "hello", map[string]any{"who": "Ann"})
	wantHello := `[{"type":"text","text":"Hello Ann"},{"type":"image","mimeType":"image/png","data":"` + b64(srvPNG) + `"},` +
		`{"type":"resource","resource":{"uri":"greeting://Ann","mimeType":"text/plain","text":"for Ann"}}]`
	if diff := cmp.Diff(wantHello, srvContentJSON(t, hello)); diff != "" {
		t.Errorf("hello (-want +got):\n%s", diff)
	}

	p := &mcp.CallToolParams{Name: "chatty", Arguments: map[string]any{"topic": "sea"}}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(srvView{Text: []string{`m1 said it is big; accept {"name":"Bo"}`}}, srvViewOf(res)); diff != "" {
		t.Errorf("chatty (-want +got):\n%s", diff)
	}
	wantAsked := []string{
		"Tell me about sea 20",
		`Name for sea? {"properties":{"name":{"default":"Ada","type":"string"}},"required":["name"],"type":"object"}`,
	}
	if diff := cmp.Diff(wantAsked, asked); diff != "" {
		t.Errorf("requests to the client (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tok 1/2 half", "tok 2/2 "}, srvTake(t, got.progress, 2)); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`info chatty "start sea"`}, srvTake(t, got.logs, 1)); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}

	if diff := cmp.Diff(srvView{Text: []string{"Error: no luck"}, IsError: true}, srvViewOf(srvCall(t, cs, "broken", map[string]any{}))); diff != "" {
		t.Errorf("broken (-want +got):\n%s", diff)
	}
}

// TestContentKindsOutsideMCP checks what an mcp_client tool does for a
// caller that is not an MCP client: logs are skipped, questions fail.
func TestContentKindsOutsideMCP(t *testing.T) {
	f := srvNew(t, nil, nil, srvKindTools(t)...)
	res, err := f.eng.Call(context.Background(), wield.Call{Tool: "chatty", Arguments: json.RawMessage(`{"topic":"sea"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("Error: this tool needs an MCP client that supports sampling", res.Text()); diff != "" {
		t.Errorf("chatty (-want +got):\n%s", diff)
	}
	res, err = f.eng.Call(context.Background(), wield.Call{Tool: "hello", Arguments: json.RawMessage(`{"who":"Ann"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || !strings.HasPrefix(string(res.Output), `{"mcp_content":[{"type":"text","text":"Hello Ann"}`) {
		t.Errorf("hello called directly: %s %s", res.Output, res.Text())
	}
}

func TestContentKindProblems(t *testing.T) {
	tests := []struct {
		name, entry, want string
	}{
		{"unknown key", `{type: content, text: hi, colour: red}`, `unknown field "colour"`},
		{"no content", `{type: content}`, "needs content or text"},
		{"steps in content", `{type: content, text: hi, steps: [{sleep: 1s}]}`, "steps belong to an mcp_client entry"},
		{"bad template", `{type: content, text: "{{.x"}`, "template"},
		{"bad base64", `{type: content, content: [{type: image, mime_type: image/png, data_base64: "!!"}]}`, "data_base64"},
		{"image without data", `{type: content, content: [{type: image, mime_type: image/png}]}`, "needs data and a MIME type"},
		{"missing file", `{type: content, content: [{type: audio, mime_type: audio/wav, file: nope.wav}]}`, "file:"},
		{"two actions", `{type: mcp_client, text: hi, steps: [{sleep: 1s, fail: x}]}`, "exactly one of"},
		{"bad level", `{type: mcp_client, text: hi, steps: [{log: {level: loud, message: x}}]}`, `log level "loud"`},
		{"bad sleep", `{type: mcp_client, text: hi, steps: [{sleep: soon}]}`, "not a duration"},
		{"empty sample", `{type: mcp_client, text: hi, steps: [{sample: {max_tokens: 5}}]}`, "needs a prompt or messages"},
		{"as a parameter", `{type: mcp_client, text: hi, steps: [{sample: {prompt: x, as: p}}]}`, "is also a parameter"},
		{"bad input key", `{type: mcp_client, text: hi, steps: [{elicit: {message: x, key: "a b"}}]}`, "key: input key"},
	}
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"content": mcpbridge.ContentKind(), "mcp_client": mcpbridge.ClientKind()}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: t\ndescription: d\nparameters: [{name: p, type: string}]\nentry: " + tt.entry + "\n"
			_, err := l.Load(context.Background(), filepath.Join(t.TempDir(), "t.yaml"), []byte(src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load: %v, want a problem with %q", err, tt.want)
			}
		})
	}
}

// TestContentKindAskFailures: a sample or elicit step that cannot be
// asked, or whose client fails, fails the call with what the model can
// act on: which capability is missing, or which request failed.
func TestContentKindAskFailures(t *testing.T) {
	sample := func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: "assistant", Model: "m1", Content: &mcp.TextContent{Text: "ok"}}, nil
	}
	for _, tt := range []struct {
		name  string
		copts *mcp.ClientOptions
		want  string
	}{
		{"no capability", &mcp.ClientOptions{}, "Error: the MCP client does not support sampling"},
		{"sampling only", &mcp.ClientOptions{CreateMessageHandler: sample}, "Error: the MCP client does not support elicitation"},
		{"elicitation fails", &mcp.ClientOptions{CreateMessageHandler: sample,
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return nil, errors.New("the user closed the form")
			}}, "Error: elicitation failed: elicit: "},
		{"sampling fails", &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return nil, errors.New("no model")
			}}, "Error: sampling failed: sample: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := srvNew(t, nil, nil, srvKindTools(t)...)
			cs := srvConnect(t, f, srvStateful, "/mcp", tt.copts)
			res := srvCall(t, cs, "chatty", map[string]any{"topic": "sea"})
			v := srvViewOf(res)
			if !v.IsError || len(v.Text) != 1 || !strings.HasPrefix(v.Text[0], tt.want) {
				t.Errorf("chatty: %+v, want an error starting %q", v, tt.want)
			}
		})
	}
}
