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

// Pending is a call running in the background.
type Pending struct {
	done chan struct{}
	res  *wield.Result
	err  error
}

// Go starts a call in the background and returns at once.
func (e *Engine) Go(ctx context.Context, c wield.Call) *Pending {
	p := &Pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.res, p.err = e.Call(ctx, c)
	}()
	return p
}

// Done is closed when the call has finished.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait waits for the call to finish, or for ctx to end (the call goes on).
func (p *Pending) Wait(ctx context.Context) (*wield.Result, error) {
	select {
	case <-p.done:
		return p.res, p.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
