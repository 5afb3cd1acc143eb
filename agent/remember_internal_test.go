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
// a loop's memory of refusals past maxRemembered; a model that cannot be a
// map key is never remembered, and says so each time rather than panic.
func TestRememberBound(t *testing.T) {
	l := NewLoop(nil, nil)
	for i := range maxRemembered + 500 {
		if !l.remember(&pointerModel{n: i}) {
			t.Fatalf("model %d: not news", i)
		}
	}
	if len(l.noTools) != maxRemembered {
		t.Errorf("%d models remembered, want at most %d", len(l.noTools), maxRemembered)
	}
	m := &pointerModel{}
	l = NewLoop(nil, nil)
	if !l.remember(m) || l.remember(m) || !l.refused(m) {
		t.Error("a model's refusal is news once, then remembered")
	}
	v := valueModel{tags: []string{"x"}}
	if !l.remember(v) || !l.remember(v) || l.refused(v) {
		t.Error("a model that cannot be a map key is not remembered")
	}
}
