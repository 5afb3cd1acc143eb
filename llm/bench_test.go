package llm_test

import (
	"fmt"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// benchTools returns n tools made from the representative ones, renamed so
// that every name is unique and accepted by every provider.
func benchTools(tb testing.TB, n int) []*wield.Tool {
	base := representativeTools(tb)
	out := make([]*wield.Tool, n)
	for i := range out {
		t := *base[i%len(base)]
		t.Name = fmt.Sprintf("tool_%04d", i)
		out[i] = &t
	}
	return out
}

// BenchmarkExport exports 1,000 tools to each dialect.
func BenchmarkExport(b *testing.B) {
	tools := benchTools(b, 1000)
	for _, tc := range dialects {
		b.Run(tc.d.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				vs, _ := llm.Export(tc.d, tools)
				if len(vs) == 0 {
					b.Fatal("nothing exported")
				}
			}
		})
	}
}

// BenchmarkInstructions writes the prompt fallbacks for 1,000 tools.
func BenchmarkInstructions(b *testing.B) {
	tools := benchTools(b, 1000)
	for name, f := range map[string]func([]*wield.Tool) string{"xml": llm.XMLInstructions, "json": llm.JSONInstructions} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if f(tools) == "" {
					b.Fatal("empty instructions")
				}
			}
		})
	}
}
