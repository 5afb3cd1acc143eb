package httpapi

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// TestExportRefusalNamesFormats: deferred loading or namespaces asked of a
// format without them is refused in the words of the export (the format
// as asked, the formats that have them as ExportFormats lists them), not
// in the llm package's (its dialects' names, openai-responses, which no
// list shows); the errors still wrap llm's sentinels.
func TestExportRefusalNamesFormats(t *testing.T) {
	tools := []*wield.Tool{{Name: "echo", Description: "Echo", InputSchema: &jsonschema.Schema{Type: "object"}}}
	cases := []struct {
		format     string
		opts       ExportOptions
		sentinel   error
		suggestion []string
	}{
		{"openai", ExportOptions{Deferred: true}, llm.ErrNoDeferredLoading, []string{"anthropic", "anthropic-strict", "responses", "responses-strict"}},
		{"gemini", ExportOptions{Deferred: true}, llm.ErrNoDeferredLoading, []string{"anthropic", "anthropic-strict", "responses", "responses-strict"}},
		{"anthropic", ExportOptions{Deferred: true, Namespaces: []llm.Namespace{{Name: "a", Tools: []string{"echo"}}}}, llm.ErrNoNamespaces, []string{"responses", "responses-strict"}},
	}
	for _, c := range cases {
		_, err := ExportToolsWith(c.format, tools, c.opts)
		if !errors.Is(err, c.sentinel) {
			t.Fatalf("%s %+v: %v, want an error wrapping %v", c.format, c.opts, err, c.sentinel)
		}
		msg := err.Error()
		if strings.Contains(msg, "openai-responses") || strings.Contains(msg, "llm:") || strings.Contains(msg, "dialect") {
			t.Errorf("%s: %q speaks of llm's dialects, not of the formats a user gives", c.format, msg)
		}
		if !strings.Contains(msg, `"`+c.format+`"`) {
			t.Errorf("%s: %q does not name the format asked", c.format, msg)
		}
		for _, s := range c.suggestion {
			if !slices.Contains(ExportFormats, s) {
				t.Fatalf("%s is no export format", s)
			}
			if !strings.Contains(msg, s) {
				t.Errorf("%s: %q does not suggest %s", c.format, msg, s)
			}
		}
	}
}
