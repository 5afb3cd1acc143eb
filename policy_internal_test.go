package wield

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// policyRegistry is a registry of 200 tools in 20 toolsets of 30 tools
// each (some tools in several).
func policyRegistry(tb testing.TB) *Registry {
	tb.Helper()
	reg := NewRegistry(nil)
	for i := range 200 {
		reg.MustRegister(Func(fmt.Sprintf("tool_%03d", i), "A tool.", func(context.Context, struct{}) (string, error) { return "", nil }))
	}
	for s := range 20 {
		var names []string
		for i := range 30 {
			names = append(names, fmt.Sprintf("tool_%03d", (s*10+i)%200))
		}
		if err := reg.DefineToolset(Toolset{Name: fmt.Sprintf("set_%02d", 19-s), Tools: names}); err != nil {
			tb.Fatal(err)
		}
	}
	return reg
}

// TestToolsetsHolding: a policy request names the toolsets that hold its
// tool, sorted, as the toolsets the registry lists do.
func TestToolsetsHolding(t *testing.T) {
	reg := policyRegistry(t)
	for _, name := range []string{"tool_000", "tool_015", "tool_199", "nowhere"} {
		want := toolsetsOf(reg.Toolsets(), name)
		got := reg.toolsetsHolding(name)
		if !slices.Equal(want, got) || !slices.IsSorted(got) {
			t.Errorf("%s: toolsets %v, want %v", name, got, want)
		}
	}
	req := NewPolicyRequest(context.Background(), reg, &Tool{Name: "tool_015"}, Caller{}, nil)
	if !slices.Equal(req.Toolsets, []string{"set_00", "set_18", "set_19"}) {
		t.Errorf("request's toolsets %v, want [set_00 set_18 set_19]", req.Toolsets)
	}
}

// BenchmarkPolicyToolsets compares finding a call's toolsets for its
// policy request: now (toolsetsHolding) and before (a sorted copy of every
// toolset, then a search).
func BenchmarkPolicyToolsets(b *testing.B) {
	reg := policyRegistry(b)
	b.Run("holding", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(reg.toolsetsHolding("tool_015")) != 3 {
				b.Fatal("wrong toolsets")
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(toolsetsOf(reg.Toolsets(), "tool_015")) != 3 {
				b.Fatal("wrong toolsets")
			}
		}
	})
}
