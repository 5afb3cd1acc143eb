package wield_test

import (
	"context"
	"slices"
	"testing"

	"github.com/wieldhq/wield"
)

// TestScopeFrom: no scope is nil; a scope is read without a copy (a scoped
// key's every request reads it), and an append to what was read leaves
// the context's scope as it was.
func TestScopeFrom(t *testing.T) {
	if s := wield.ScopeFrom(context.Background()); s != nil {
		t.Errorf("no scope: %v, want nil", s)
	}
	ctx := wield.WithScope(context.Background(), []string{"db", "web"})
	if n := testing.AllocsPerRun(100, func() { _ = wield.ScopeFrom(ctx) }); n != 0 {
		t.Errorf("ScopeFrom allocates %v times a read, want 0", n)
	}
	got := wield.ScopeFrom(ctx)
	_ = append(got, "files")
	if s := wield.ScopeFrom(ctx); !slices.Equal(s, []string{"db", "web"}) {
		t.Errorf("after an append to a read: %v, want [db web]", s)
	}
}
