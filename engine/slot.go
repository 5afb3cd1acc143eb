package engine

import (
	"context"
	"sync"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/limit"
)

// slot is the concurrency slot of a call while its handler runs. A program
// (run_program) is one thread that waits while each of its inner calls
// runs, so it lends its slot to them: an inner call of a program gives the
// program's slot back to the limiter for as long as it is in the pipeline
// (its own acquire, an approval wait, its run) and takes one again before
// the program goes on. With max_concurrent N, N programs at once then leave
// room for their inner calls instead of waiting on each other until the
// queue timeout. Each program holds at most one slot at any time: its own
// or, while it waits, none (its inner call holds its own).
type slot struct {
	e      *Engine
	req    limit.Request
	mu     sync.Mutex
	permit limit.Permit
	held   bool // permit is the slot's and not yet given back
	done   bool // the call's run is over: nothing is taken again
}

// slotKey is the context key of a running call's *slot.
type slotKey struct{}

// hold makes p the slot of a call that starts to run.
func (s *slot) hold(e *Engine, req limit.Request, p limit.Permit) {
	s.e, s.req, s.permit, s.held = e, req, p, true
}

// finish gives the slot back for good, when the call's handler returned.
func (s *slot) finish() {
	s.mu.Lock()
	p, held := s.permit, s.held
	s.held, s.done, s.permit = false, true, limit.Permit{}
	s.mu.Unlock()
	if held {
		p.Release()
	}
}

// lend gives the slot back while an inner call runs; it reports whether
// there was one to give.
func (s *slot) lend() bool {
	s.mu.Lock()
	p, held := s.permit, s.held
	if held && !s.done {
		s.held, s.permit = false, limit.Permit{}
	}
	s.mu.Unlock()
	if !held || s.done {
		return false
	}
	p.Release()
	return true
}

// retake takes a slot again after an inner call. When none frees up (the
// queue is full or its timeout passes, or ctx ends) the program goes on
// without one until its next inner call, and this is logged: it stops
// itself at its deadline, and stopping it here would lose the result of a
// call that did run.
func (s *slot) retake(ctx context.Context, tool string) {
	p, err := s.e.lim.Acquire(ctx, s.req)
	s.mu.Lock()
	if err == nil && !s.done && !s.held {
		s.permit, s.held = p, true
		s.mu.Unlock()
		return
	}
	done := s.done
	s.mu.Unlock()
	if err == nil {
		p.Release() // the program's run ended meanwhile
		return
	}
	if !done && ctx.Err() == nil {
		s.e.log.Warn("a program goes on without a concurrency slot: none became free after its inner call", "tool", tool, "err", err)
	}
}

// lendSlot lends the slot of the program whose inner call k is, when ctx
// is that program's handler context in this engine; the function returned
// takes it back (a no-op when nothing was lent).
func (e *Engine) lendSlot(ctx context.Context, k *call) func() {
	if k.Caller.Type != wield.CallerProgram || k.dry {
		return func() {}
	}
	s, ok := ctx.Value(slotKey{}).(*slot)
	if !ok || s.e != e || !s.lend() {
		return func() {}
	}
	return func() { s.retake(ctx, k.Tool) }
}
