package llm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/llm"
)

// TestOutputStrategyOrDefault: nothing configured is native function
// calling with the XML prompt as the fallback; anything configured, even
// one field, is kept as it is.
func TestOutputStrategyOrDefault(t *testing.T) {
	for _, tt := range []struct {
		in, want llm.OutputStrategy
	}{
		{llm.OutputStrategy{}, llm.OutputStrategy{FunctionCalling: true, FallbackToStructuredOutput: true, PromptFormat: llm.PromptXML}},
		{llm.OutputStrategy{PromptFormat: llm.PromptJSON}, llm.OutputStrategy{PromptFormat: llm.PromptJSON}},
		{llm.OutputStrategy{FunctionCalling: true}, llm.OutputStrategy{FunctionCalling: true}},
		{llm.OutputStrategy{FallbackToStructuredOutput: true}, llm.OutputStrategy{FallbackToStructuredOutput: true}},
	} {
		if diff := cmp.Diff(tt.want, tt.in.OrDefault()); diff != "" {
			t.Errorf("%+v.OrDefault() (-want +got):\n%s", tt.in, diff)
		}
	}
}
