package wield

import (
	"context"
	"math"
	"time"
)

// ProgressInterval is the least time between two execution_progress events
// of one call (once the call has reported for longer than 8 s, a sixteenth
// of that time is: a long call's events stay few, about 77 over five
// minutes): a tool may report as often as it likes (an MCP client that
// asked for progress is told at its own pace), and the event stream, whose
// history every watcher shares, carries the newest report of each interval
// (published at the interval's end) and the first that reaches its total.
const ProgressInterval = 500 * time.Millisecond

type progressKey struct{}

// ProgressKey is the context key under which a running call's
// [ProgressReporter] travels: the engine's handler context answers
// Value(ProgressKey) with one.
var ProgressKey any = progressKey{}

// ProgressReporter takes the progress of one running call.
type ProgressReporter interface {
	ReportProgress(progress, total float64, message string)
}

// Progress is how far a call has got, as an execution_progress event
// carries it: Progress out of Total, Total 0 when the tool does not know.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
}

// ReportProgress tells whoever watches the call running under ctx how far
// it has got: progress out of total (0 when unknown), with an optional
// message. The engine publishes it as an [EventExecutionProgress] event
// (at most one every [ProgressInterval] per call, the newest winning, and
// the first that reaches total at once; nothing after the call has ended),
// which the REST API's event stream and the console show;
// mcpbridge.Progress also sends it to an MCP client that asked for
// progress. Outside the engine, and for a progress or total that is not a
// finite number, it does nothing, so a tool may report unconditionally.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	if !finite(progress) || !finite(total) {
		return
	}
	if r, ok := ctx.Value(ProgressKey).(ProgressReporter); ok {
		r.ReportProgress(progress, total, message)
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
