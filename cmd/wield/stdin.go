package main

import (
	"context"
	"errors"
	"io"
)

// errInterrupted is what a read of stdin returns once the command's
// context ends (Ctrl-C, SIGTERM) while it waits for input.
var errInterrupted = errors.New("interrupted while waiting for input on stdin")

// interruptible wraps r, a command's stdin, so that a Read waiting for
// input returns errInterrupted once ctx ends: a read of a terminal or a
// pipe does not end by itself on a signal, and the command would wait for
// a line that may never come, Ctrl-C and SIGTERM notwithstanding. It reads
// only when asked, as much as asked (no read ahead, so that nothing of the
// input is taken from another reader of stdin); the read left waiting on
// an interrupt ends with the process.
func interruptible(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	res  chan readResult // the read under way, nil when none
	buf  []byte          // what it reads into
	left []byte          // what it read that the caller has not had
	err  error           // its error, once left is had
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if len(c.left) > 0 {
		n := copy(p, c.left)
		c.left = c.left[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if c.res == nil {
		c.buf = make([]byte, len(p))
		res := make(chan readResult, 1)
		c.res = res
		go func(b []byte) {
			n, err := c.r.Read(b)
			res <- readResult{n, err}
		}(c.buf)
	}
	select {
	case <-c.ctx.Done():
		return 0, errInterrupted
	case rr := <-c.res:
		c.res = nil
		n := copy(p, c.buf[:rr.n])
		if c.left = c.buf[n:rr.n]; len(c.left) > 0 {
			c.err = rr.err
			return n, nil
		}
		return n, rr.err
	}
}
