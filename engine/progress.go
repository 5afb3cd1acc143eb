package engine

import (
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
)

// progress takes a running call's progress reports: it publishes them as
// execution_progress events and passes each on to the reporter of the
// context the call was made from, if any (an MCP server's, which tells its
// client). The handler's context answers wield.ProgressKey with it (see
// wield.ReportProgress).
type progress struct {
	e *Engine
	k *call

	mu     sync.Mutex
	last   time.Time // when the last event was published
	ended  bool      // the call has ended: reports are dropped
	looked bool      // up was looked for
	up     wield.ProgressReporter
}

// progressNow tells the time to the progress reports (tests set it).
var progressNow = time.Now

// maxProgressMessage bounds a progress event's message, in bytes.
const maxProgressMessage = 1 << 10

// ReportProgress passes the report on to the caller's reporter, and
// publishes it unless one was published less than wield.ProgressInterval
// ago (a report that reaches its total is always published: the bar ends
// full). Once the call has ended, reports are dropped.
func (p *progress) ReportProgress(done, total float64, message string) {
	now := progressNow()
	k := p.k
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return
	}
	if !p.looked {
		// The context the call was made from (the run context's parent).
		p.up, _ = k.rctx.Context.Value(wield.ProgressKey).(wield.ProgressReporter)
		p.looked = true
	}
	up := p.up
	final := total > 0 && done >= total
	if p.e.bus != nil && !k.dry && (final || p.last.IsZero() || now.Sub(p.last) >= wield.ProgressInterval) {
		p.last = now
		// Published under mu, so that none follows the call's end (see end).
		p.e.bus.Publish(wield.Event{
			Type:           wield.EventExecutionProgress,
			Time:           now,
			Tool:           k.Tool,
			CallID:         k.ID,
			CallerID:       k.Caller.ID,
			ConversationID: k.Caller.ConversationID,
			// A person reads it (the console, a terminal): control and
			// bidirectional characters shown as escapes, not obeyed.
			Message:  safetext.Line(p.e.redactor.text(clipText(message, maxProgressMessage))),
			Progress: &wield.Progress{Progress: done, Total: total},
		})
	}
	p.mu.Unlock()
	if up != nil {
		up.ReportProgress(done, total, message) // its pace and bounds are its own
	}
}

// end drops the reports that come after the call has ended (a handler
// that outlived its timeout may still report).
func (p *progress) end() {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
}

// clipText cuts s to at most n bytes, on a character boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
