package toolfile

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOutputStrategy: the keys of an agent's output_strategy, the defaults
// of those left out, and a prompt format that is not xml or json refused
// where it is written.
func TestOutputStrategy(t *testing.T) {
	for _, tt := range []struct {
		src     string
		want    OutputStrategy
		problem string
	}{
		{"kind: agent\nname: a\n", OutputStrategy{}, ""},
		{"kind: agent\nname: a\noutput_strategy: {}\n", OutputStrategy{FunctionCalling: true, FallbackToStructuredOutput: true, PromptFormat: "xml"}, ""},
		{"kind: agent\nname: a\noutput_strategy: {prompt_format: json}\n", OutputStrategy{FunctionCalling: true, FallbackToStructuredOutput: true, PromptFormat: "json"}, ""},
		// Both false: the prompt always, which the zero value would not say.
		{"kind: agent\nname: a\noutput_strategy: {function_calling: false, fallback_to_structured_output: false}\n", OutputStrategy{PromptFormat: "xml"}, ""},
		{"kind: agent\nname: a\noutput_strategy:\n  function_calling: true\n  fallback_to_structured_output: false\n  prompt_format: xml\n", OutputStrategy{FunctionCalling: true, PromptFormat: "xml"}, ""},
		{"kind: agent\nname: a\noutput_strategy: {prompt_format: yaml}\n", OutputStrategy{}, `f.yaml:3:34: output_strategy: prompt_format "yaml" is not one of xml, json`},
	} {
		var l Loader
		set, err := l.Load(context.Background(), "f.yaml", []byte(tt.src))
		var problems []string
		for _, p := range set.Problems {
			problems = append(problems, p.String())
		}
		if tt.problem != "" {
			if len(problems) != 1 || problems[0] != tt.problem {
				t.Errorf("%q: problems %q (err %v), want %q", tt.src, problems, err, tt.problem)
			}
			continue
		}
		if err != nil || len(set.Agents) != 1 {
			t.Fatalf("%q: %v, %d agents", tt.src, err, len(set.Agents))
		}
		if diff := cmp.Diff(tt.want, set.Agents[0].OutputStrategy); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.src, diff)
		}
	}
}
