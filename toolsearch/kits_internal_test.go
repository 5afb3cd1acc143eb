package toolsearch

import (
	"context"
	"fmt"
	"testing"

	"github.com/wieldhq/wield"
)

// TestKitIndexesBound: the indexes kept for toolkits stay within
// maxKitIndexes however many toolkits search, and the toolkit searched
// last is kept.
func TestKitIndexesBound(t *testing.T) {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("read_file", "Read a file.", func(_ context.Context, in struct{}) (struct{}, error) { return in, nil }))
	k := &kitIndexes{last: map[*wield.Toolkit]*kitIndex{}}
	var last *wield.Toolkit
	for i := range 3 * maxKitIndexes {
		kit, err := reg.CreateToolkit(fmt.Sprintf("a%d", i), "read_file")
		if err != nil {
			t.Fatal(err)
		}
		if k.index(kit).Len() != 1 {
			t.Fatalf("toolkit %d: wrong index", i)
		}
		last = kit
	}
	if len(k.last) > maxKitIndexes || k.last[last] == nil {
		t.Errorf("%d indexes kept (the last one: %v), want at most %d with the last", len(k.last), k.last[last] != nil, maxKitIndexes)
	}
}
