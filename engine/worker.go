package engine

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/wieldhq/wield"
)

// Handlers run on goroutines of their own, so that one which ignores its
// context cannot hold a call past its timeout. A fresh goroutine for every
// call would start on a small stack and grow it again each time (in
// profiles, stack copying was most of a call's cost), so finished goroutines
// wait a while for the next handler instead of exiting.
//
// The pool belongs to the engine, not the process: an engine made inside a
// testing/synctest bubble keeps its goroutines and channels in the bubble.

// attempt is one run of a handler.
type attempt struct {
	ctx   context.Context
	h     wield.Handler
	args  []byte
	done  chan struct{} // buffered 1: the worker never blocks on a caller that left
	out   json.RawMessage
	err   error
	panic any
	stack []byte

	// state: running, finished (the caller takes the result) or abandoned
	// (the call timed out; the worker gives the permit back when the
	// handler finally returns).
	state atomic.Int32
	slot  *slot
	stray *atomic.Int64
}

const (
	running int32 = iota
	finished
	abandoned
)

type workers struct {
	tasks    chan *attempt // a send succeeds only when a worker waits
	quit     chan struct{}
	stopOnce sync.Once    // Close may be called concurrently
	idle     atomic.Int32 // workers waiting for a task
	attempts sync.Pool
}

func newWorkers() *workers {
	w := &workers{tasks: make(chan *attempt), quit: make(chan struct{})}
	w.attempts.New = func() any { return &attempt{done: make(chan struct{}, 1)} }
	return w
}

// maxIdle is how many workers may wait for work; one that finishes when
// that many already wait exits. Waiting workers cost their stacks only: no
// timer, no polling.
const maxIdle = 128

func (w *workers) get() *attempt { return w.attempts.Get().(*attempt) }

// start runs the attempt on an idle worker, or on a new one.
func (w *workers) start(a *attempt) {
	select {
	case w.tasks <- a:
	default:
		go w.work(a)
	}
}

func (w *workers) work(a *attempt) {
	for {
		a.run()
		if w.idle.Add(1) > maxIdle {
			w.idle.Add(-1)
			return
		}
		select {
		case a = <-w.tasks:
			w.idle.Add(-1)
		case <-w.quit:
			w.idle.Add(-1)
			return
		}
	}
}

// stop lets idle workers exit; busy ones exit when their handler returns.
func (w *workers) stop() { w.stopOnce.Do(func() { close(w.quit) }) }

func (a *attempt) run() {
	defer func() {
		if p := recover(); p != nil {
			a.panic, a.stack = p, debug.Stack()
		}
		if a.state.CompareAndSwap(running, finished) {
			a.done <- struct{}{}
			return
		}
		// The call left without us: its slot is free only now.
		a.slot.finish()
		a.stray.Add(-1)
	}()
	a.out, a.err = a.h.Handle(a.ctx, a.args)
}

// spins is how often a caller yields to the worker before it parks: a
// quick handler finishes within a few yields, and the caller then never
// sleeps and wakes (futex calls that cost more than the handler).
const spins = 64

// wait waits for the attempt to finish, or for ctx to end; it reports
// whether the attempt finished.
func (a *attempt) wait(ctx context.Context) bool {
	for range spins {
		select {
		case <-a.done:
			return true
		default:
			runtime.Gosched()
		}
	}
	select {
	case <-a.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// abandon leaves a running attempt to finish on its own, handing it the
// call's permit so the slot stays taken while the handler really runs. It
// reports false when the attempt finished in the meantime, and then the
// caller takes its result as usual.
func (a *attempt) abandon(s *slot, stray *atomic.Int64) bool {
	a.slot, a.stray = s, stray
	stray.Add(1)
	if a.state.CompareAndSwap(running, abandoned) {
		return true
	}
	stray.Add(-1)
	a.slot, a.stray = nil, nil
	<-a.done
	return false
}

// put returns a finished attempt to the pool. An abandoned attempt is never
// put back: its worker may still write to it.
func (w *workers) put(a *attempt) {
	a.ctx, a.h, a.args, a.out, a.err, a.panic, a.stack = nil, nil, nil, nil, nil, nil, nil
	a.state.Store(running)
	w.attempts.Put(a)
}
