package main

import (
	"io"
	"runtime"
	"sync"
)

// groupWriter writes the server's log lines to w, those that arrive while
// one is being written together with the next write: group commit, for
// log lines. A Write that finds no write under way writes its line at
// once (so a lone line, at start-up or shutdown, is out when Write
// returns); one that finds a write under way adds its line for the writer
// to write next, and returns. Under load that turns the write(2) per call
// of the INFO line into one per few calls, and slog's handler, which holds
// its mutex across the Write, no longer makes every logging call wait for
// the one before it to reach the file. (In CPU profiles of wield serve at
// 8 MCP callers on 2 cores, 2026-11-27, the log's write(2) went from 2.6%
// to 2.2% of the server's CPU: the calls seldom overlap there; the more
// callers, the more lines share a write.) So the Write that writes first
// yields once (runtime.Gosched) for the lines being formatted elsewhere to
// join it: at 8 MCP callers the server's write(2) calls per call went from
// 2.78-2.84 to 2.05-2.12, the log's share from about one a line to one in
// seven (/proc/PID/io, 2026-11-27). Nothing is written twice or lost: the writer takes
// lines until none is left. A failed write is reported to the Write that
// made it, and the lines it held are dropped, as a failed write of each
// would have dropped each.
type groupWriter struct {
	w io.Writer

	mu      sync.Mutex
	taken   *sync.Cond // the writer took pending
	pending []byte     // lines waiting for the writer
	writing bool       // a Write is writing: it takes pending next
	spare   []byte     // the buffer of the last write, for reuse
}

// maxGroupBuffer bounds the lines waiting for the writer: past it, a
// Write waits for the writer to take them, as it would wait for its own
// write (a stalled stderr slows the server down; it never fills its
// memory).
const maxGroupBuffer = 64 << 10

func newGroupWriter(w io.Writer) *groupWriter {
	g := &groupWriter{w: w}
	g.taken = sync.NewCond(&g.mu)
	return g
}

// Write writes p, or hands it to the Write under way; p is not kept.
func (g *groupWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	for g.writing && len(g.pending) >= maxGroupBuffer {
		g.taken.Wait()
	}
	if g.writing {
		g.pending = append(g.pending, p...)
		g.mu.Unlock()
		return len(p), nil
	}
	g.writing = true
	g.mu.Unlock()
	// Let the lines being formatted on other goroutines join this write
	// (as internal/commit's writer lingers): with nothing else to run,
	// Gosched returns at once, so a lone line is out as soon as before.
	runtime.Gosched()
	g.mu.Lock()
	var err error
	if len(g.pending) == 0 {
		g.mu.Unlock()
		_, err = g.w.Write(p)
	} else {
		batch := append(append(g.spare[:0], p...), g.pending...)
		g.pending, g.spare = g.pending[:0], nil
		g.taken.Broadcast()
		g.mu.Unlock()
		_, err = g.w.Write(batch)
		g.mu.Lock()
		if cap(batch) <= 2*maxGroupBuffer {
			g.spare = batch[:0]
		}
		g.mu.Unlock()
	}
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.writing = false
			g.mu.Unlock()
			break
		}
		batch := g.pending
		g.pending = g.spare[:0]
		g.taken.Broadcast()
		g.mu.Unlock()
		_, werr := g.w.Write(batch)
		if err == nil {
			err = werr
		}
		g.mu.Lock()
		if cap(batch) <= 2*maxGroupBuffer {
			g.spare = batch[:0]
		} else {
			g.spare = nil
		}
		g.mu.Unlock()
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}
