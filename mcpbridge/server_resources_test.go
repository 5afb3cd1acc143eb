package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield/mcpbridge"
)

// srvOffer is a server's configured resources, templates and prompts.
func srvOffer(t *testing.T) *mcpbridge.ServerOptions {
	t.Helper()
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("from a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &mcpbridge.ServerOptions{
		Resources: []mcpbridge.Resource{
			{URI: "test://text", Name: "text", MIMEType: "text/plain", Text: "hello"},
			{URI: "test://blob", Name: "blob", MIMEType: "image/png", Blob: srvPNG},
			{URI: "test://file", Name: "file", MIMEType: "text/plain", File: file},
		},
		ResourceTemplates: []mcpbridge.ResourceTemplate{{
			URITemplate: "test://items/{id}/data", Name: "item", MIMEType: "application/json",
			Text: `{"id": "{{.id}}"}`, Completions: map[string][]string{"id": {"apple", "apricot", "banana"}},
		}},
		Prompts: []mcpbridge.Prompt{{
			Name: "greet", Description: "Greets",
			Arguments: []mcpbridge.PromptArgument{{Name: "who", Required: true, Values: []string{"Ann", "Anna", "Bob"}}, {Name: "mood"}},
			Messages: []mcpbridge.PromptMessage{
				{Role: "user", Content: mcpbridge.Content{Text: "Greet {{.who}}{{with .mood}}, {{.}}{{end}}."}},
				{Role: "assistant", Content: mcpbridge.Content{Type: mcpbridge.ContentImage, Data: srvPNG, MIMEType: "image/png"}},
				{Role: "user", Content: mcpbridge.Content{Type: mcpbridge.ContentResource, URI: "people://{{.who}}", MIMEType: "text/plain", Text: "about {{.who}}"}},
			},
		}},
	}
}

func TestServerResources(t *testing.T) {
	for _, tr := range []srvTransport{srvStateful, srvStdio} {
		t.Run(string(tr), func(t *testing.T) {
			f := srvNew(t, srvOffer(t), nil)
			cs := srvConnect(t, f, tr, "/mcp", nil)
			ctx, cancel := context.WithTimeout(context.Background(), srvWait)
			defer cancel()
			caps := cs.InitializeResult().Capabilities
			if caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Completions == nil {
				t.Errorf("capabilities: %+v", caps)
			}
			list, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range list.Resources {
				names = append(names, r.Name)
			}
			if diff := cmp.Diff([]string{"blob", "file", "text"}, names); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			reads := map[string]string{
				"test://text":          `[{"uri":"test://text","mimeType":"text/plain","text":"hello"}]`,
				"test://blob":          `[{"uri":"test://blob","mimeType":"image/png","blob":"` + b64(srvPNG) + `"}]`,
				"test://file":          `[{"uri":"test://file","mimeType":"text/plain","text":"from a file"}]`,
				"test://items/42/data": `[{"uri":"test://items/42/data","mimeType":"application/json","text":"{\"id\": \"42\"}"}]`,
			}
			for uri, want := range reads {
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Errorf("read %s: %v", uri, err)
					continue
				}
				b, _ := json.Marshal(res.Contents)
				if diff := cmp.Diff(want, string(b)); diff != "" {
					t.Errorf("read %s (-want +got):\n%s", uri, diff)
				}
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://items/a/b/data"}); err == nil {
				t.Error("read of a URI the template does not match: no error")
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://text"}); err != nil {
				t.Errorf("subscribe: %v", err)
			}
			if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://text"}); err != nil {
				t.Errorf("unsubscribe: %v", err)
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://nothing"}); err == nil {
				t.Error("subscribe to an unknown resource: no error")
			}
		})
	}
}

func TestServerResourceUpdated(t *testing.T) {
	updated := make(chan string, 4)
	f := srvNew(t, srvOffer(t), nil)
	cs := srvConnect(t, f, srvStdio, "", &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://file"}); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.ResourceUpdated(ctx, "test://text"); err != nil { // nobody subscribed
		t.Fatal(err)
	}
	if err := f.srv.ResourceUpdated(ctx, "test://file"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"test://file"}, srvTake(t, updated, 1)); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
}

func TestServerComplete(t *testing.T) {
	f := srvNew(t, srvOffer(t), nil)
	cs := srvConnect(t, f, srvStdio, "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	tests := []struct {
		ref   mcp.CompleteReference
		arg   mcp.CompleteParamsArgument
		want  []string
		fails bool
	}{
		{mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, mcp.CompleteParamsArgument{Name: "who", Value: "an"}, []string{"Ann", "Anna"}, false},
		{mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, mcp.CompleteParamsArgument{Name: "mood", Value: ""}, []string{}, false},
		{mcp.CompleteReference{Type: "ref/resource", URI: "test://items/{id}/data"}, mcp.CompleteParamsArgument{Name: "id", Value: "ap"}, []string{"apple", "apricot"}, false},
		{mcp.CompleteReference{Type: "ref/prompt", Name: "nope"}, mcp.CompleteParamsArgument{Name: "who"}, nil, true},
	}
	for _, tt := range tests {
		res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &tt.ref, Argument: tt.arg})
		if tt.fails {
			if err == nil {
				t.Errorf("complete %+v: no error", tt.ref)
			}
			continue
		}
		if err != nil {
			t.Errorf("complete %+v: %v", tt.ref, err)
			continue
		}
		if diff := cmp.Diff(tt.want, res.Completion.Values); diff != "" || res.Completion.Total != len(tt.want) {
			t.Errorf("complete %+v %+v (-want +got):\n%s (total %d)", tt.ref, tt.arg, diff, res.Completion.Total)
		}
	}
}

func TestServerPrompts(t *testing.T) {
	f := srvNew(t, srvOffer(t), nil)
	cs := srvConnect(t, f, srvStateful, "/mcp", nil)
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(list.Prompts)
	if diff := cmp.Diff(`[{"arguments":[{"name":"who","required":true},{"name":"mood"}],"description":"Greets","name":"greet"}]`, string(b)); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	for args, want := range map[string]string{
		`{"who":"Ann"}`:                 `Greet Ann.`,
		`{"who":"Ann","mood":"warmly"}`: `Greet Ann, warmly.`,
	} {
		var a map[string]string
		json.Unmarshal([]byte(args), &a)
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: a})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.Messages)
		wantJSON := `[{"content":{"type":"text","text":"` + want + `"},"role":"user"},` +
			`{"content":{"type":"image","mimeType":"image/png","data":"` + b64(srvPNG) + `"},"role":"assistant"},` +
			`{"content":{"type":"resource","resource":{"uri":"people://Ann","mimeType":"text/plain","text":"about Ann"}},"role":"user"}]`
		if diff := cmp.Diff(wantJSON, string(b)); diff != "" {
			t.Errorf("get %s (-want +got):\n%s", args, diff)
		}
	}
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) || jerr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("get without a required argument: %v, want invalid params", err)
	}
}

func TestNewServerPanicsOnBadOffer(t *testing.T) {
	for name, opts := range map[string]*mcpbridge.ServerOptions{
		"bad template":     {ResourceTemplates: []mcpbridge.ResourceTemplate{{URITemplate: "x://{id}", Name: "x", Text: "{{.id"}}},
		"level 2 template": {ResourceTemplates: []mcpbridge.ResourceTemplate{{URITemplate: "x://{+id}", Name: "x"}}},
		"nameless prompt":  {Prompts: []mcpbridge.Prompt{{}}},
		"twice":            {Prompts: []mcpbridge.Prompt{{Name: "p"}, {Name: "p"}}},
		"bad role":         {Prompts: []mcpbridge.Prompt{{Name: "p", Messages: []mcpbridge.PromptMessage{{Role: "system"}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("NewServer did not panic")
				}
			}()
			srvNew(t, opts, nil)
		})
	}
}

// TestServerWatchesResourceFiles checks that a subscriber hears of a
// change to a file resource.
func TestServerWatchesResourceFiles(t *testing.T) {
	opts := srvOffer(t)
	opts.ResourcePoll = 5 * time.Millisecond
	file := opts.Resources[2].File
	updated := make(chan string, 4)
	f := srvNew(t, opts, nil)
	cs := srvConnect(t, f, srvStdio, "", &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://file"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("changed, and longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"test://file"}, srvTake(t, updated, 1)); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://file"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Contents[0].Text; got != "changed, and longer" {
		t.Errorf("read after the change: %q", got)
	}
}
