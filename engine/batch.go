package engine

import (
	"context"
	"errors"
	"sync"

	"github.com/wieldhq/wield"
)

// CallAll runs calls in parallel, under the same limits as single calls, and
// returns their results in the order of calls. A result is nil only where the
// system failed for that call; the error joins those failures.
func (e *Engine) CallAll(ctx context.Context, calls []wield.Call) ([]*wield.Result, error) {
	results := make([]*wield.Result, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = e.Call(ctx, calls[i])
		}()
	}
	wg.Wait()
	return results, errors.Join(errs...)
}

// Pending is a call running in the background. Its ID is known at once, so
// a caller can follow it in events and records, or approve it, before it
// ends; its result can be waited for, polled, or given up with Cancel.
type Pending struct {
	id     string
	done   chan struct{}
	cancel context.CancelFunc
	res    *wield.Result
	err    error
}

// Go starts a call in the background and returns at once. The call's ID is
// c.ID when the caller chose one, else one the engine makes now (see
// [Pending.ID]). After Close, the call ends at once with [wield.ErrClosed].
func (e *Engine) Go(ctx context.Context, c wield.Call) *Pending {
	k := &call{Call: c}
	if k.ID == "" {
		k.ID = wield.NewIDAt(e.now())
		k.minted = true
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Pending{id: k.ID, done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.done)
		defer cancel()
		if !e.enter() {
			p.err = wield.ErrClosed
			return
		}
		defer e.leave()
		p.res, p.err = e.pipeline(ctx, k)
	}()
	return p
}

// ID is the call's ID, known from the start: the one in its events, its
// record, its result and its approval.
func (p *Pending) ID() string { return p.id }

// Done is closed when the call has finished.
func (p *Pending) Done() <-chan struct{} { return p.done }

// TryResult returns the call's result without waiting: ok is false while
// the call runs.
func (p *Pending) TryResult() (res *wield.Result, err error, ok bool) {
	select {
	case <-p.done:
		return p.res, p.err, true
	default:
		return nil, nil, false
	}
}

// Cancel ends the call: as the context passed to [Engine.Go] ending would,
// it ends with error type canceled (a handler that ignores its context
// still runs to its end, its result discarded), and is recorded. Cancel
// after the end does nothing.
func (p *Pending) Cancel() { p.cancel() }

// Wait waits for the call to finish, or for ctx to end (the call goes on).
func (p *Pending) Wait(ctx context.Context) (*wield.Result, error) {
	select {
	case <-p.done:
		return p.res, p.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
