package toolsearch_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/toolsearch"
)

// TestOffer: search_tools is registered once a registry holds more tools
// than the threshold, once however many ask at the same time (a second
// registration would be reported as a duplicate), and a registered tool
// of the name is left in place.
func TestOffer(t *testing.T) {
	reg := wield.NewRegistry(nil)
	for i := range 5 {
		reg.MustRegister(wield.Func(fmt.Sprintf("tool_%d", i), "A tool.", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }))
	}
	if got, err := toolsearch.Offer(reg, 5); got != nil || err != nil {
		t.Fatalf("Offer on 5 tools, threshold 5: %v, %v; want nothing registered", got, err)
	}
	const askers = 8
	var wg sync.WaitGroup
	got := make([]*wield.Tool, askers)
	errs := make([]error, askers)
	for i := range askers {
		wg.Go(func() { got[i], errs[i] = toolsearch.Offer(reg, 4) })
	}
	wg.Wait()
	registered, ok := reg.Tool("search_tools")
	if !ok || !reg.IsDefault("search_tools") {
		t.Fatal("search_tools is not registered as a default")
	}
	for i := range askers {
		if errs[i] != nil || got[i] != registered {
			t.Errorf("asker %d: %v, %v; want the registered search_tools", i, got[i], errs[i])
		}
	}
	own := wield.Func("search_tools", "Mine.", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
	reg2 := wield.NewRegistry(nil)
	reg2.MustRegister(own)
	if got, err := toolsearch.Offer(reg2, 0); got != own || err != nil {
		t.Errorf("Offer with a search_tools registered: %v, %v; want that one", got, err)
	}
}
