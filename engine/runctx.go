package engine

import (
	"context"
	"sync"
	"time"

	"github.com/wieldhq/wield"
)

// runCtx is the context a handler runs under: its parent's values and
// cancellation, plus the call's deadline. Unlike context.WithTimeout it arms
// no timer until someone asks for Done (a handler that does I/O, or the
// engine once a handler has run longer than a few yields), so a quick handler
// costs no timer and no channel.
type runCtx struct {
	context.Context // the parent; gives Value but for the call
	call            *wield.Call
	deadline        time.Time
	slot            *slot        // the call's concurrency slot, lent to a program's inner calls
	policy          wield.Policy // the engine's, for tools that list tools
	progress        *progressRef // takes the handler's progress reports

	mu    sync.Mutex
	err   error
	armed *armed // made by the first Done
}

// armed is what a runCtx needs once someone waits on it.
type armed struct {
	done  chan struct{}
	timer *time.Timer
	stop  func() bool
}

// init prepares c, which the caller keeps (inside its call, saving an
// allocation).
func (c *runCtx) init(parent context.Context, call *wield.Call, start time.Time, timeout time.Duration) *runCtx {
	d := start.Add(timeout)
	if pd, ok := parent.Deadline(); ok && pd.Before(d) {
		d = pd
	}
	c.Context, c.call, c.deadline = parent, call, d
	return c
}

// Value answers wield.CallKey with the call, and the rest as the parent does.
func (c *runCtx) Value(key any) any {
	if key == wield.CallKey {
		return c.call
	}
	if key == (slotKey{}) && c.slot != nil {
		return c.slot
	}
	if key == wield.PolicyKey && c.policy != nil {
		return c.policy
	}
	if key == wield.ProgressKey && c.progress != nil {
		return c.progress
	}
	return c.Context.Value(key)
}

func (c *runCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *runCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed == nil {
		a := &armed{done: make(chan struct{})}
		c.armed = a
		if c.err == nil {
			c.errLocked()
		}
		if c.err != nil {
			close(a.done)
			return a.done
		}
		a.timer = time.AfterFunc(time.Until(c.deadline), func() { c.cancel(context.DeadlineExceeded) })
		if c.Context.Done() != nil {
			a.stop = context.AfterFunc(c.Context, func() { c.cancel(c.Context.Err()) })
		}
	}
	return c.armed.done
}

func (c *runCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errLocked()
}

// errLocked notices an ended parent or a passed deadline even when no timer
// runs.
func (c *runCtx) errLocked() error {
	if c.err == nil {
		if err := c.Context.Err(); err != nil {
			c.err = err
		} else if !time.Now().Before(c.deadline) {
			c.err = context.DeadlineExceeded
		}
	}
	return c.err
}

func (c *runCtx) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	if a := c.armed; a != nil {
		select {
		case <-a.done:
		default:
			close(a.done)
		}
	}
}

// release ends the context after the call: its timer and its watch on the
// parent stop, and a handler still running sees it canceled.
func (c *runCtx) release() {
	c.mu.Lock()
	if c.err == nil {
		c.err = context.Canceled
	}
	a := c.armed
	if a != nil {
		select {
		case <-a.done:
		default:
			close(a.done)
		}
	}
	c.mu.Unlock()
	if a != nil {
		// A timer that fires meanwhile finds the context ended already.
		if a.timer != nil {
			a.timer.Stop()
		}
		if a.stop != nil {
			a.stop()
		}
	}
}
