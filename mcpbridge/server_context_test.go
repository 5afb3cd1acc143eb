package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

type srvNoArgs struct{}

// srvContextTools use the MCP session through their context.
func srvContextTools() []*wield.Tool {
	report := wield.Func("report", "Reports progress and logs", func(ctx context.Context, _ srvNoArgs) (string, error) {
		if err := mcpbridge.Log(ctx, mcpbridge.LevelDebug, "below the client's level"); err != nil {
			return "", err
		}
		if err := mcpbridge.Progress(ctx, 1, 2, "half"); err != nil {
			return "", err
		}
		if err := mcpbridge.Log(ctx, mcpbridge.LevelWarning, map[string]any{"step": "one"}); err != nil {
			return "", err
		}
		if err := mcpbridge.Progress(ctx, 2, 2, "done"); err != nil {
			return "", err
		}
		return "reported", nil
	})
	ask := wield.Func("ask", "Asks the user's name", func(ctx context.Context, _ srvNoArgs) (string, error) {
		content, action, err := mcpbridge.Elicit(ctx, "Your name?", &jsonschema.Schema{
			Type:       "object",
			Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}},
			Required:   []string{"name"},
		})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %v", action, content["name"]), nil
	})
	sample := wield.Func("sample", "Asks the client's model", func(ctx context.Context, _ srvNoArgs) (string, error) {
		out, err := mcpbridge.Sample(ctx, []mcpbridge.SampleMessage{{Role: "user", Text: "Say hi"}}, 20)
		if err != nil {
			return "", err
		}
		return out.Role + " " + out.Model + ": " + out.Text, nil
	})
	// where runs inline as well as on a worker: the engine passes context
	// values on either way.
	where := func(name string, inline bool) *wield.Tool {
		t := wield.Func(name, "Says whether it runs for an MCP client", func(ctx context.Context, _ srvNoArgs) (string, error) {
			_, _, eerr := mcpbridge.Elicit(ctx, "?", nil)
			_, serr := mcpbridge.Sample(ctx, nil, 1)
			return fmt.Sprintf("mcp=%v log=%v elicit=%v sample=%v progress=%v", mcpbridge.FromMCP(ctx),
				errors.Is(mcpbridge.Log(ctx, mcpbridge.LevelInfo, "x"), mcpbridge.ErrNotMCP),
				srvErrKind(eerr), srvErrKind(serr), mcpbridge.Progress(ctx, 1, 1, "")), nil
		})
		t.Inline = inline
		return t
	}
	return []*wield.Tool{report, ask, sample, where("where", false), where("where_inline", true)}
}

func srvErrKind(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, mcpbridge.ErrNotMCP):
		return "not-mcp"
	case errors.Is(err, mcpbridge.ErrUnsupported):
		return "unsupported"
	}
	return "other"
}

// srvCollect gathers what a client receives.
type srvCollect struct {
	progress chan string
	logs     chan string
}

func srvCollector() (*srvCollect, *mcp.ClientOptions) {
	c := &srvCollect{progress: make(chan string, 16), logs: make(chan string, 16)}
	return c, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			c.progress <- fmt.Sprintf("%v %v/%v %s", r.Params.ProgressToken, r.Params.Progress, r.Params.Total, r.Params.Message)
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			b, _ := json.Marshal(r.Params.Data)
			c.logs <- fmt.Sprintf("%s %s %s", r.Params.Level, r.Params.Logger, b)
		},
	}
}

// srvTake reads n values from ch, waiting at most srvWait in all.
func srvTake(t *testing.T, ch chan string, n int) []string {
	t.Helper()
	deadline := time.After(srvWait)
	var out []string
	for range n {
		select {
		case v := <-ch:
			out = append(out, v)
		case <-deadline:
			t.Fatalf("got %d of %d notifications: %q", len(out), n, out)
		}
	}
	return out
}

func TestServerProgressAndLog(t *testing.T) {
	for _, tr := range []srvTransport{srvStateful, srvStateless, srvStdio} {
		t.Run(string(tr), func(t *testing.T) {
			f := srvNew(t, &mcpbridge.ServerOptions{Stateless: tr == srvStateless}, nil, srvContextTools()...)
			got, copts := srvCollector()
			cs := srvConnect(t, f, tr, "/mcp", copts)
			ctx, cancel := context.WithTimeout(context.Background(), srvWait)
			defer cancel()
			if tr != srvStateless { // a stateless server keeps no level
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			}
			p := &mcp.CallToolParams{Name: "report", Arguments: map[string]any{}}
			p.SetProgressToken("tok")
			res, err := cs.CallTool(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(srvView{Text: []string{"reported"}}, srvViewOf(res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"tok 1/2 half", "tok 2/2 done"}, srvTake(t, got.progress, 2)); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
			if tr != srvStateless {
				if diff := cmp.Diff([]string{`warning report {"step":"one"}`}, srvTake(t, got.logs, 1)); diff != "" {
					t.Errorf("logs (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestServerElicitAndSample(t *testing.T) {
	capable := &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if r.Params.Message != "Your name?" {
				return nil, fmt.Errorf("unexpected question %q", r.Params.Message)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if len(r.Params.Messages) != 1 || r.Params.MaxTokens != 20 {
				return nil, fmt.Errorf("unexpected sampling request %+v", r.Params)
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "hi"}}, nil
		},
	}
	tests := []struct {
		name  string
		tr    srvTransport
		copts *mcp.ClientOptions
		want  map[string]srvView
	}{
		{"capable client", srvStateful, capable, map[string]srvView{
			"ask":    {Text: []string{"accept Ada"}},
			"sample": {Text: []string{"assistant test-model: hi"}},
		}},
		{"capable client over stdio", srvStdio, capable, map[string]srvView{
			"ask":    {Text: []string{"accept Ada"}},
			"sample": {Text: []string{"assistant test-model: hi"}},
		}},
		{"plain client", srvStateful, nil, map[string]srvView{
			"ask":    {Text: []string{"Error: elicit: mcpbridge: the MCP client does not support it"}, IsError: true},
			"sample": {Text: []string{"Error: sample: mcpbridge: the MCP client does not support it"}, IsError: true},
		}},
		{"stateless server", srvStateless, capable, map[string]srvView{
			"ask":    {Text: []string{"Error: elicit: mcpbridge: the MCP client does not support it"}, IsError: true},
			"sample": {Text: []string{"Error: sample: mcpbridge: the MCP client does not support it"}, IsError: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := srvNew(t, &mcpbridge.ServerOptions{Stateless: tt.tr == srvStateless}, nil, srvContextTools()...)
			cs := srvConnect(t, f, tt.tr, "/mcp", tt.copts)
			got := map[string]srvView{}
			for tool := range tt.want {
				got[tool] = srvViewOf(srvCall(t, cs, tool, map[string]any{}))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerContextReachesHandler checks that the engine hands the caller's
// context values to handlers, on a worker and inline, so the functions of
// this package find the MCP request; and that outside MCP they fail
// cleanly.
func TestServerContextReachesHandler(t *testing.T) {
	f := srvNew(t, nil, nil, srvContextTools()...)
	cs := srvConnect(t, f, srvStdio, "", nil)
	overMCP := "mcp=true log=false elicit=unsupported sample=unsupported progress=<nil>"
	direct := "mcp=false log=true elicit=not-mcp sample=not-mcp progress=<nil>"
	for _, tool := range []string{"where", "where_inline"} {
		if diff := cmp.Diff(srvView{Text: []string{overMCP}}, srvViewOf(srvCall(t, cs, tool, map[string]any{}))); diff != "" {
			t.Errorf("%s over MCP (-want +got):\n%s", tool, diff)
		}
		res, err := f.eng.Call(context.Background(), wield.Call{Tool: tool, Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(direct, res.Text()); diff != "" {
			t.Errorf("%s called directly (-want +got):\n%s", tool, diff)
		}
	}
}
