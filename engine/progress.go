package engine

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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

	mu      sync.Mutex
	first   time.Time // when the first event was published
	last    time.Time // when the last event was published
	full    bool      // a report reaching its total was published out of turn
	ended   bool      // the call has ended: reports are dropped
	looked  bool      // up was looked for
	up      wield.ProgressReporter
	inners  int         // reports of inner calls taken (see inner)
	pending *report     // the newest report not published yet (within the interval)
	timer   *time.Timer // publishes pending once the interval is over
}

// progressRef is the reporter a call's handler context gives
// (wield.ProgressKey): the state behind it is made at the call's first
// report, since most calls make none, and a call carries only this.
type progressRef struct {
	e *Engine
	k *call
	p atomic.Pointer[progress]
}

// endedProgress stands for the state of a call that ended before reporting
// anything: it drops every report.
var endedProgress = &progress{ended: true}

func (r *progressRef) ReportProgress(done, total float64, message string) {
	r.state().ReportProgress(done, total, message)
}

// state returns the call's progress state, made at the first use.
func (r *progressRef) state() *progress {
	if p := r.p.Load(); p != nil {
		return p
	}
	np := &progress{e: r.e, k: r.k}
	if r.p.CompareAndSwap(nil, np) {
		return np
	}
	return r.p.Load()
}

// end ends the call's progress (see progress.end).
func (r *progressRef) end() {
	if old := r.p.Swap(endedProgress); old != nil && old != endedProgress {
		old.end()
	}
}

// report is one progress report, as a handler made it.
type report struct {
	done, total float64
	message     string
}

// progressNow tells the time to the progress reports (tests set it).
var progressNow = time.Now

// maxProgressMessage bounds a progress event's message, in bytes.
const maxProgressMessage = 1 << 10

// ReportProgress passes the report on to the caller's reporter, and
// publishes it unless one was published less than wield.ProgressInterval
// ago (longer in a long call: see due); then it is published when the
// interval is over, unless a newer one
// comes first (the newest wins). The first report that reaches its total is
// published at once (the bar ends full); later ones keep the interval, so
// that a handler repeating it cannot flood the bus, whose history every
// watcher shares. Once the call has ended, reports are dropped, and so is a
// report that is not a finite number (which no event could carry as JSON).
func (p *progress) ReportProgress(done, total float64, message string) {
	p.report(done, total, message, message)
}

// report is ReportProgress with the message of the event (shown) apart from
// the one the caller's reporter is told (see inner).
func (p *progress) report(done, total float64, shown, told string) {
	if !finite(done) || !finite(total) {
		return
	}
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
	if p.e.bus != nil && !k.dry {
		final := total > 0 && done >= total && !p.full
		switch {
		case final || p.last.IsZero() || !now.Before(p.due()):
			p.full = p.full || final
			p.pending = nil
			p.publish(now, report{done, total, shown})
		default:
			p.pending = &report{done, total, shown}
			if p.timer == nil {
				p.timer = time.AfterFunc(p.due().Sub(now), p.flush)
			}
		}
	}
	p.mu.Unlock()
	switch outer := up.(type) {
	case nil:
	case *progressRef:
		outer.state().inner(done, total, told) // told as it leaves the engine, by the outer call
	default:
		// Its pace and bounds are its own; the message is the one an event
		// would carry, so that a secret a tool reports reaches no MCP
		// client either.
		up.ReportProgress(done, total, p.e.progressText(told))
	}
}

// progressText is a progress message as it leaves the engine, on an
// execution_progress event or to the caller's reporter (an MCP client's
// notifications/progress): redacted, then cut to maxProgressMessage (so
// that no cut hides a secret from the redactor), with control and
// bidirectional characters shown as escapes, not obeyed, since a person
// reads it (the console, a terminal, an MCP client's window).
func (e *Engine) progressText(message string) string {
	return safetext.Line(safetext.Clip(e.redactor.text(message), maxProgressMessage))
}

// inner takes the report of an inner call made by this call's handler (a
// program's): its figures are the inner call's, not this call's, so this
// call reports that one more inner report came, with no total, and tells
// its caller the inner figures and message (not the inner tool's name). Its
// event has no message: whoever watches the events may see the program but
// not the inner tool, which a policy may hide from them (the inner call's
// own events, figures and message, go to those who may see it). A
// program's caller thus
// learns that it is getting on (an MCP client's timeout that progress
// resets stays reset) without a bar that goes back at each inner call, or
// ends full while the program goes on, and an MCP client's progress
// increases with each notice, as MCP requires.
func (p *progress) inner(done, total float64, message string) {
	p.mu.Lock()
	p.inners++
	n := p.inners
	p.mu.Unlock()
	text := strconv.FormatFloat(done, 'g', -1, 64)
	if total > 0 {
		text += " of " + strconv.FormatFloat(total, 'g', -1, 64)
	}
	if message != "" {
		text += ": " + message
	}
	p.report(float64(n), 0, "", text)
}

// innerReports takes the reports made for a program's inner call before it
// runs (an approver's, of the wait for a decision), as inner calls' own
// reports reach the program (see progress.inner).
type innerReports struct{ p *progress }

func (r innerReports) ReportProgress(done, total float64, message string) {
	r.p.inner(done, total, message)
}

// flush publishes the report kept back within the interval.
func (p *progress) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = nil
	if p.ended || p.pending == nil {
		return
	}
	now := progressNow()
	if wait := p.due().Sub(now); wait > 0 {
		// Another event was published since the timer was set.
		p.timer = time.AfterFunc(wait, p.flush)
		return
	}
	r := *p.pending
	p.pending = nil
	p.publish(now, r)
}

// due is when the call's next event may be published: wield.ProgressInterval
// after the last, or a sixteenth of the time since the first when that is
// longer, so that a long call's events stay few in the history the bus keeps
// for every watcher (each is 1/16 later than the one before: about
// 16·(1 + ln(T/8 s)) events for reports over T: 77 over five minutes where
// one every 500 ms was 601, TestProgressLongCall). p.mu is held.
func (p *progress) due() time.Time {
	return p.last.Add(max(wield.ProgressInterval, p.last.Sub(p.first)/progressSlowdown))
}

// progressSlowdown: a call's events come at least the time since its first
// one over this apart (see due).
const progressSlowdown = 16

// publish publishes r as an event; p.mu is held, so that none follows the
// call's end (see end).
func (p *progress) publish(now time.Time, r report) {
	k := p.k
	if p.first.IsZero() {
		p.first = now
	}
	p.last = now
	p.e.bus.Publish(wield.Event{
		Type:           wield.EventExecutionProgress,
		Time:           now,
		Tool:           k.Tool,
		CallID:         k.ID,
		CallerID:       k.Caller.ID,
		ConversationID: k.Caller.ConversationID,
		Message:        p.e.progressText(r.message),
		Progress:       &wield.Progress{Progress: r.done, Total: r.total},
	})
}

// end drops the reports that come after the call has ended (a handler
// that outlived its timeout may still report), and the one kept back.
func (p *progress) end() {
	p.mu.Lock()
	p.ended = true
	p.pending = nil
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.mu.Unlock()
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
