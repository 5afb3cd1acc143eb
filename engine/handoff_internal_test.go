package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wieldhq/wield"
)

// BenchmarkHandoff is what running a handler on a worker costs: hand over,
// run a no-op, take the result back.
func BenchmarkHandoff(b *testing.B) {
	w := newWorkers()
	defer w.stop()
	h := wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		a := w.get()
		a.ctx, a.h = ctx, h
		w.start(a)
		if !a.wait(ctx) {
			b.Fatal("not done")
		}
		w.put(a)
	}
}
