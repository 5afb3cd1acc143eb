package agent

import (
	"context"
	"testing"

	"github.com/wieldhq/wield/llm"
)

type pointerModel struct{ n int }

func (*pointerModel) SupportsFunctionCalling() bool { return true }
func (*pointerModel) Generate(context.Context, *llm.ModelRequest) (*llm.ModelResponse, error) {
	return nil, llm.ErrToolsUnsupported
}

type valueModel struct{ tags []string } // not comparable: no map key

func (valueModel) SupportsFunctionCalling() bool { return true }
func (valueModel) Generate(context.Context, *llm.ModelRequest) (*llm.ModelResponse, error) {
	return nil, llm.ErrToolsUnsupported
}

// TestRememberBound: a program that makes a model per request cannot grow
// the memory of refusals past maxRemembered; a model that cannot be a map
// key is never remembered, and says so each time rather than panic.
func TestRememberBound(t *testing.T) {
	refusals.mu.Lock()
	saved := refusals.m
	refusals.m = nil
	refusals.mu.Unlock()
	t.Cleanup(func() {
		refusals.mu.Lock()
		refusals.m = saved
		refusals.mu.Unlock()
	})
	m := &pointerModel{}
	if !remember(m) || remember(m) || !refused(m) {
		t.Error("a model's refusal is news once, then remembered")
	}
	for i := range maxRemembered + 500 {
		remember(&pointerModel{n: i})
	}
	if n := len(refusals.m); n != maxRemembered || !refused(m) {
		t.Errorf("%d models remembered (the first one: %v), want at most %d with the first", n, refused(m), maxRemembered)
	}
	if remember(&pointerModel{n: -1}) != true || refused(&pointerModel{n: -1}) {
		t.Error("past the bound a refusal is news and not remembered")
	}
	v := valueModel{tags: []string{"x"}}
	if !remember(v) || !remember(v) || refused(v) {
		t.Error("a model that cannot be a map key is not remembered")
	}
}
