package mcpbridge_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// FuzzImportResult checks the conversion of a server's text result, which
// wield does not control: the output is always valid JSON, a JSON text comes
// out as that JSON and any other text as the same string; an error result
// keeps its text for the model.
func FuzzImportResult(f *testing.F) {
	for _, s := range []string{"", "hello", "42", " {\"a\": [1, 2]} ", "[1,", "null", "\"quoted\"", "1e999", "\xff", "{\"a\":1}{\"b\":2}"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, isError bool) {
		res := &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
		out, err := mcpbridge.ImportResult(res)
		if isError {
			var we *wield.Error
			if !errors.As(err, &we) || we.Type != wield.ErrExecution {
				t.Fatalf("error result: %v, want an execution_error", err)
			}
			if text != "" && we.Message != text {
				t.Fatalf("error message %q, want %q", we.Message, text)
			}
			return
		}
		if err != nil {
			t.Fatalf("ImportResult(%q): %v", text, err)
		}
		if !json.Valid(out) {
			t.Fatalf("ImportResult(%q) = %s: not JSON", text, out)
		}
		if json.Valid([]byte(text)) {
			var want bytes.Buffer
			_ = json.Compact(&want, []byte(text))
			if !bytes.Equal(out, want.Bytes()) {
				t.Fatalf("ImportResult(%q) = %s, want %s", text, out, want.Bytes())
			}
			return
		}
		var s string
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("ImportResult(%q) = %s: not a string: %v", text, out, err)
		}
		if utf8.ValidString(text) && s != text {
			t.Fatalf("ImportResult(%q) = %q, want the text itself", text, s)
		}
	})
}
