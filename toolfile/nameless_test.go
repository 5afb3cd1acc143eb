package toolfile

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNamelessDocuments: a tool, a toolset or an agent without a name is
// one error saying what the document needs, not that error and then each
// of its references to a toolset "" or the rules a name "" breaks.
func TestNamelessDocuments(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want []string
	}{
		{"tools: [tools, other]\n", []string{"f.yaml:1:1: toolset: missing name (expected name, description and tools, the names of its tools)"}},
		{"kind: toolset\ntools: [echo]\n---\nkind: toolset\ntools: [echo]\n", []string{
			"f.yaml:1:1: toolset: missing name (expected name, description and tools, the names of its tools)",
			"f.yaml:4:1: toolset: missing name (expected name, description and tools, the names of its tools)",
		}},
		{"tool_sets: [nowhere]\n", []string{"f.yaml:1:1: agent: missing name (expected name, description, tools and tool_sets)"}},
		{"description: d\nentry: {type: builtin, handler: echo}\n", []string{"f.yaml:1:1: tool: missing name"}},
	} {
		l := Loader{Importable: func(string, bool) bool { return false }}
		set, _ := l.Load(context.Background(), "f.yaml", []byte(tt.src))
		var got []string
		for _, p := range set.Problems {
			got = append(got, p.String())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q: problems (-want +got):\n%s", tt.src, diff)
		}
	}
}
