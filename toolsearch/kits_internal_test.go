package toolsearch

import (
	"context"
	"fmt"
	"testing"

	"github.com/wieldhq/wield"
)

// TestKitIndexesBound: the indexes kept for toolkits stay within
// maxKitIndexes however many toolkits of different tools search, and the
// toolkit searched last is kept.
func TestKitIndexesBound(t *testing.T) {
	reg := wield.NewRegistry(nil)
	for i := range 3 * maxKitIndexes {
		reg.MustRegister(wield.Func(fmt.Sprintf("read_file_%d", i), "Read a file.", func(_ context.Context, in struct{}) (struct{}, error) { return in, nil }))
	}
	k := &kitIndexes{last: map[string]*kitIndex{}}
	var last *wield.Toolkit
	for i := range 3 * maxKitIndexes {
		kit, err := reg.CreateToolkit(fmt.Sprintf("a%d", i), fmt.Sprintf("read_file_%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if k.index(kit).Len() != 1 {
			t.Fatalf("toolkit %d: wrong index", i)
		}
		last = kit
	}
	if len(k.last) > maxKitIndexes || k.last[kitKey(last.Tools())] == nil {
		t.Errorf("%d indexes kept (the last one: %v), want at most %d with the last", len(k.last), k.last[kitKey(last.Tools())] != nil, maxKitIndexes)
	}
}

// TestKitIndexesShared: toolkits of the same tools (a scoped request makes
// a new one each time) share one index instead of each building its own.
func TestKitIndexesShared(t *testing.T) {
	reg := wield.NewRegistry(nil)
	for _, n := range []string{"read_file", "write_file", "send_mail"} {
		reg.MustRegister(wield.Func(n, "A tool.", func(_ context.Context, in struct{}) (struct{}, error) { return in, nil }))
	}
	k := &kitIndexes{last: map[string]*kitIndex{}}
	a, _ := reg.CreateToolkit("a", "read_file", "write_file")
	b, _ := reg.CreateToolkit("b", "read_file", "write_file")
	c, _ := reg.CreateToolkit("c", "send_mail")
	if ia, ib := k.index(a), k.index(b); ia != ib {
		t.Error("two toolkits of the same tools got two indexes")
	}
	if k.index(c) == k.index(a) || len(k.last) != 2 {
		t.Errorf("toolkits of other tools share an index: %d kept, want 2", len(k.last))
	}
}
