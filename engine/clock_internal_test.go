package engine

import (
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

// TestNow checks the engine's clock against time.Now: the same instant,
// in wall and monotonic time, from its base and after it is read again.
func TestNow(t *testing.T) {
	e := New(wield.NewRegistry(nil), nil)
	defer e.Close(t.Context())
	check := func(what string) time.Time {
		t.Helper()
		before := time.Now()
		got := e.now()
		after := time.Now()
		if got.Before(before) || got.After(after) {
			t.Errorf("%s: now = %v, outside [%v, %v]", what, got, before, after)
		}
		// The wall clock (Round(0) drops the monotonic reading) agrees too,
		// unless the system's clock was stepped meanwhile.
		if w := got.Round(0); w.Before(before.Round(0).Add(-time.Millisecond)) || w.After(after.Round(0).Add(time.Millisecond)) {
			t.Errorf("%s: wall time %v, outside [%v, %v]", what, w, before.Round(0), after.Round(0))
		}
		return got
	}
	first := check("first reading")
	second := check("from the base")
	if e.base.Load().Compare(first) != 0 || !second.After(first) {
		t.Errorf("base %v, readings %v then %v", e.base.Load(), first, second)
	}
	old := time.Now().Add(-2 * rebaseEvery)
	e.base.Store(&old)
	check("after a rebase")
	if !e.base.Load().After(old) {
		t.Error("a base older than rebaseEvery was kept")
	}
}
