package mcpbridge

import "testing"

// TestTaskSignalsWakeTheirOwn: a task's change wakes the waiters that
// follow it, alone (a stream following other tasks sleeps on), a waiter
// of several tasks once however many change, and the waiters are
// forgotten once done.
func TestTaskSignalsWakeTheirOwn(t *testing.T) {
	var g srvTaskSignals
	a, doneA := g.wait("a")
	b, doneB := g.wait("b")
	ab, doneAB := g.wait("a", "b")
	woken := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	g.fire("a")
	g.fire("a")
	if !woken(a) || woken(b) || !woken(ab) {
		t.Errorf("after a's change: a %v, b %v, a+b %v; want true, false, true", woken(a), woken(b), woken(ab))
	}
	g.fire("b") // ab fired already: not closed twice
	if !woken(b) {
		t.Error("b's change did not wake b's waiter")
	}
	doneA()
	doneB()
	doneAB()
	if len(g.by) != 0 {
		t.Errorf("waiters left after done: %v", g.by)
	}
}
