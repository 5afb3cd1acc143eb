package mcpbridge_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestImportUnreadableResult: a server that answers tools/call with a
// result the go-sdk cannot decode (content of a type MCP does not define,
// image data that is not base64, content that is not a list, a result that
// is not an object) has the model told what was wrong, in words, without
// the decoder's text, and not invited to retry; before, it read "The call
// of … failed" and nothing more. The session is kept: the next call works.
func TestImportUnreadableResult(t *testing.T) {
	calls := map[string]string{
		"video":  `"result":{"content":[{"type":"video","uri":"x"}]}`,
		"badimg": `"result":{"content":[{"type":"image","data":"!!!not base64","mimeType":"image/png"}]}`,
		"five":   `"result":{"content":5}`,
		"str":    `"result":"hello"`,
		"ok":     `"result":{"content":[{"type":"text","text":"fine"}]}`,
	}
	var tools []string
	for name := range calls {
		tools = append(tools, `{"name":"`+name+`","inputSchema":{"type":"object"}}`)
	}
	url := impRawServer(t, "["+strings.Join(tools, ",")+"]", func(name string) string { return calls[name] })
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, nil)
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "r", URL: url, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	for name, what := range map[string]string{
		"video":  "content of a type MCP does not define",
		"badimg": "content whose data is not base64",
		"five":   "a result that is not a tools/call result",
		"str":    "a result that is not a tools/call result",
	} {
		tool, ok := reg.Tool("r__" + name)
		if !ok {
			t.Fatalf("r__%s is not registered", name)
		}
		began := time.Now()
		_, err := tool.Handler.Handle(t.Context(), []byte(`{}`))
		var we *wield.Error
		if !errors.As(err, &we) {
			t.Fatalf("%s: %v, want a *wield.Error", name, err)
		}
		want := `MCP server "r" answered the call of "` + name + `" with ` + what + `, which wield could not read. The server is misbehaving: calling it again is unlikely to help`
		if we.Message != want || wield.IsTransient(err) {
			t.Errorf("%s: %q (transient %v), want %q", name, we.Message, wield.IsTransient(err), want)
		}
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("%s took %v", name, took)
		}
	}
	tool, _ := reg.Tool("r__ok")
	if out, err := tool.Handler.Handle(t.Context(), []byte(`{}`)); err != nil || string(out) != `"fine"` {
		t.Errorf("ok: %s, %v", out, err)
	}
}
