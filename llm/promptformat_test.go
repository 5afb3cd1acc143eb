package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// TestPromptFormat: the names a prompt format is read from, and what each
// format writes for the model.
func TestPromptFormat(t *testing.T) {
	for _, tt := range []struct {
		name string
		want llm.PromptFormat
		err  string
	}{
		{"", llm.PromptXML, ""}, {"xml", llm.PromptXML, ""}, {" JSON ", llm.PromptJSON, ""},
		{"yaml", "", `prompt format "yaml" is not one of xml, json`},
	} {
		got, err := llm.ParsePromptFormat(tt.name)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("ParsePromptFormat(%q) = %q, %v; want %q, %q", tt.name, got, err, tt.want, tt.err)
		}
	}
	type in struct {
		Message string `json:"message"`
	}
	tools := []*wield.Tool{wield.Func("echo", "Echo.", func(_ context.Context, v in) (string, error) { return v.Message, nil })}
	r := &wield.Result{Tool: "echo", OK: true, Output: []byte(`"a<b"`)}
	for _, tt := range []struct {
		f            llm.PromptFormat
		instructions string
		result       string
	}{
		{"", llm.XMLInstructions(tools), llm.XMLResult(r)},
		{llm.PromptXML, llm.XMLInstructions(tools), llm.XMLResult(r)},
		{llm.PromptJSON, llm.JSONInstructions(tools), llm.JSONResult(r)},
	} {
		if got := tt.f.Instructions(tools); got != tt.instructions {
			t.Errorf("%q.Instructions:\n%s", tt.f, got)
		}
		if got := tt.f.Result(r); got != tt.result || !strings.Contains(got, "a<b") {
			t.Errorf("%q.Result = %s", tt.f, got)
		}
	}
}
