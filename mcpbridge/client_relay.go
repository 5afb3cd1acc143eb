package mcpbridge

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
)

// An imported tool called by an MCP client of a [Server] passes on what the
// imported server sends while it runs: its progress notifications reach the
// client under the client's own progress token, its log messages reach the
// client at the client's log level, and the client's notifications/cancelled
// cancels the call, which the importer's client passes on as
// notifications/cancelled to the imported server (the go-sdk sends it when
// the call's context ends). The notices go through [Progress] and [Log],
// the path of every tool, so a relayed notice is one a Go tool could have
// sent. Whoever the caller (REST, CLI, an MCP client that asked for no
// progress), a call the engine runs asks the imported server for progress
// too, and what it reports becomes the call's execution_progress events
// (see [wield.ReportProgress]); log messages go to MCP clients only.
//
// A relay never holds the imported session's reader: what comes in is
// stored and sent by the call's own goroutine, at most one progress notice
// every [RelayInterval] (the newest: progress only grows, so the ones in
// between are coalesced; one that goes back is dropped) and at most [RelayLogs] log messages in each
// interval; the log messages past that are counted and the client is told
// how many were dropped. A log message over [RelayLogSize] bytes is
// replaced by a notice of its size. Log messages are not tied to a call in
// MCP: one from an imported server goes to the callers of that server whose
// calls are running when it arrives.

// The bounds of a relay.
const (
	// RelayInterval is the least time between two sends of one call's relay.
	RelayInterval = 100 * time.Millisecond
	// RelayLogs is how many log messages one call's relay sends per interval.
	RelayLogs = 16
	// RelayLogSize bounds one relayed log message's data, in bytes of JSON.
	RelayLogSize = 16 << 10
	// relayMessage bounds a relayed progress message, in bytes.
	relayMessage = 1 << 10
	// relaySend bounds one flush of a relay to its client.
	relaySend = 5 * time.Second
)

// impRelays are the relays of the calls running on one imported session,
// by the progress token sent to the imported server.
type impRelays struct {
	server string
	seq    atomic.Uint64
	mu     sync.Mutex
	calls  map[string]*impRelay
	// active counts the calls; at zero what the server sends is dropped
	// without taking mu (a flood between calls costs a load each).
	active atomic.Int64
	// leveled is set once the imported server has been asked for its
	// log messages (logging/setLevel), on the first relayed call.
	leveled atomic.Bool
}

func newImpRelays(server string) *impRelays {
	return &impRelays{server: server, calls: map[string]*impRelay{}}
}

// impRelay passes one call's notices on to its MCP client.
type impRelay struct {
	ctx      context.Context // the call's: it carries the client's request
	tool     string
	token    string // names the call to the imported server
	progress bool   // someone watches the call's progress, so the server is asked for it
	client   bool   // the call came from an MCP client, which gets the log messages
	wake     chan struct{}
	stop     chan struct{}
	finished chan struct{}

	mu      sync.Mutex
	newest  *mcp.ProgressNotificationParams // the newest not yet sent
	top     float64                         // the greatest progress the server reported (see onProgress)
	topped  bool                            // top is set
	logs    []*mcp.LoggingMessageParams
	dropped int
}

// begin starts the relay of a call made from ctx, or returns nil when
// nothing can be told of it: neither an MCP client that can be sent notices
// nor an engine that takes its progress (a call outside the engine). The
// relay must be ended.
func (rs *impRelays) begin(ctx context.Context, cs *mcp.ClientSession) *impRelay {
	if rs == nil {
		return nil
	}
	req := srvRequestFrom(ctx)
	client := req != nil && req.session != nil
	_, watched := ctx.Value(wield.ProgressKey).(wield.ProgressReporter)
	if !client && !watched {
		return nil
	}
	r := &impRelay{ctx: ctx, client: client, wake: make(chan struct{}, 1), stop: make(chan struct{}), finished: make(chan struct{})}
	if c := wield.CallFrom(ctx); c != nil {
		r.tool = c.Tool
	}
	r.token = "wield-" + strconv.FormatUint(rs.seq.Add(1), 10)
	// Without, an MCP client's logs are still relayed.
	r.progress = watched || (client && req.params.GetProgressToken() != nil)
	rs.mu.Lock()
	rs.calls[r.token] = r
	rs.active.Add(1)
	rs.mu.Unlock()
	if client {
		rs.askLogs(ctx, cs)
	}
	go r.run()
	return r
}

// askLogs asks the imported server, once a session, for all its log
// messages: each client's own level filters them as they are relayed. A
// server of MCP 2026-07-28 (no setLevel) or one without logging is not
// asked.
func (rs *impRelays) askLogs(ctx context.Context, cs *mcp.ClientSession) {
	if rs.leveled.Swap(true) {
		return
	}
	ir := cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil || ir.Capabilities.Logging == nil || ir.ProtocolVersion >= srvNoAskVersion {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = cs.SetLoggingLevel(lctx, &mcp.SetLoggingLevelParams{Level: LevelDebug}) //nolint:staticcheck // deprecated only from 2026-07-28 on, not asked of those
}

// end sends what is still waiting and stops the relay, before the call's
// result goes back: a client sees a call's notices before its result.
func (rs *impRelays) end(r *impRelay) {
	rs.mu.Lock()
	delete(rs.calls, r.token)
	rs.active.Add(-1)
	rs.mu.Unlock()
	close(r.stop)
	<-r.finished
}

// onProgress stores a progress notice of the imported server for the call
// whose token it names; one naming no running call is dropped.
func (rs *impRelays) onProgress(p *mcp.ProgressNotificationParams) {
	if rs.active.Load() == 0 {
		return
	}
	tok, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	rs.mu.Lock()
	r := rs.calls[tok]
	rs.mu.Unlock()
	if r == nil || !r.progress {
		return
	}
	q := &mcp.ProgressNotificationParams{Progress: p.Progress, Total: p.Total, Message: safetext.Clip(p.Message, relayMessage)}
	r.mu.Lock()
	if r.topped && q.Progress < r.top {
		// MCP's progress increases with each notice: one that goes back
		// would take the client's bar (and the console's) back, and
		// break the rule the coalescing relies on. One that stays is
		// kept: servers that give a new message at the same figure are
		// common.
		r.mu.Unlock()
		return
	}
	r.top, r.topped = q.Progress, true
	r.newest = q
	r.mu.Unlock()
	r.poke()
}

// onLog stores a log message of the imported server for every call
// running on it.
func (rs *impRelays) onLog(p *mcp.LoggingMessageParams) {
	if rs.active.Load() == 0 {
		return
	}
	rs.mu.Lock()
	if len(rs.calls) == 0 {
		rs.mu.Unlock()
		return
	}
	calls := make([]*impRelay, 0, len(rs.calls))
	for _, r := range rs.calls {
		calls = append(calls, r)
	}
	rs.mu.Unlock()
	// Marshalled once, and only when some call has room for it: a flood
	// costs a count per message once the queues are full.
	var m *mcp.LoggingMessageParams
	for _, r := range calls {
		if !r.client {
			continue // its caller reads no MCP log
		}
		r.mu.Lock()
		if len(r.logs) >= RelayLogs {
			r.dropped++
			r.mu.Unlock()
			continue
		}
		if m == nil {
			m = rs.logMessage(p)
		}
		one := *m
		one.Logger = cmp.Or(one.Logger, r.tool)
		r.logs = append(r.logs, &one)
		r.mu.Unlock()
		r.poke()
	}
}

// logMessage is what is relayed of a log message: its data as JSON, or a
// notice of its size when it is over RelayLogSize; a level MCP does not
// name as info.
func (rs *impRelays) logMessage(p *mcp.LoggingMessageParams) *mcp.LoggingMessageParams {
	data, err := json.Marshal(p.Data)
	if err != nil || len(data) > RelayLogSize {
		data, _ = json.Marshal(fmt.Sprintf("[wield: a log message of %d bytes from MCP server %q was not relayed: over the %d-byte limit]", len(data), rs.server, RelayLogSize))
	}
	level := p.Level
	if !relayLevels[level] {
		level = LevelInfo
	}
	return &mcp.LoggingMessageParams{Level: level, Logger: safetext.Clip(p.Logger, 200), Data: json.RawMessage(data)}
}

var relayLevels = map[LogLevel]bool{LevelDebug: true, LevelInfo: true, LevelNotice: true, LevelWarning: true,
	LevelError: true, LevelCritical: true, LevelAlert: true, LevelEmergency: true}

func (r *impRelay) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run sends what comes in, at most once an interval, until stopped; then
// sends what is left.
func (r *impRelay) run() {
	defer close(r.finished)
	t := time.NewTimer(RelayInterval)
	t.Stop()
	for {
		select {
		case <-r.wake:
		case <-r.stop:
			r.flush()
			return
		}
		r.flush()
		t.Reset(RelayInterval)
		select {
		case <-t.C:
		case <-r.stop:
			t.Stop()
			r.flush()
			return
		}
	}
}

// flush sends the newest progress and the waiting log messages, and says
// how many were dropped since the last flush.
func (r *impRelay) flush() {
	r.mu.Lock()
	p, logs, dropped := r.newest, r.logs, r.dropped
	r.newest, r.logs, r.dropped = nil, nil, 0
	r.mu.Unlock()
	if r.ctx.Err() != nil || (p == nil && len(logs) == 0 && dropped == 0) {
		return // a canceled call's client reads no more of it
	}
	// A client that does not read its stream cannot hold the call: what
	// cannot be sent within relaySend is given up.
	ctx, cancel := context.WithTimeout(r.ctx, relaySend)
	defer cancel()
	if r.client {
		ss := srvRequestFrom(ctx).session
		for _, m := range logs {
			_ = ss.Log(ctx, m)
		}
		if dropped > 0 {
			_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: LevelWarning, Logger: r.tool,
				Data: fmt.Sprintf("wield dropped %d log messages of this call's MCP server: more than %d in %s", dropped, RelayLogs, RelayInterval)})
		}
	}
	if p != nil {
		_ = Progress(ctx, p.Progress, p.Total, p.Message)
	}
}
