package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield/internal/jsonenc"
)

// Task status notifications: a 2026-07-28 client that declared the Tasks
// extension opens a subscriptions/listen stream naming, in
// params.notifications.taskIds, the tasks it follows; the server
// acknowledges the IDs it knows, sends each task's state at once, then a
// notifications/tasks (the task as tasks/get would give it) each time its
// status or status message changes, and ends the stream with the listen
// result once every task followed has ended.
//
// Such a stream is wield's own: the go-sdk's subscriptions/listen knows no
// taskIds. It agrees to the task IDs only (list changes are followed on a
// stream of their own, which the go-sdk serves), and it holds a place among
// the client's sessions, as every listen stream does.
//
// The publisher of changes (a task ending, an approval asked or decided)
// only closes a channel: it never waits for a subscriber. Each stream keeps
// the last state it sent of each task, no queue, so a slow client costs
// its own stream only, and a client that reads nothing for
// srvListenWriteTimeout loses it.

// srvMaxListenTasks bounds the task IDs one listen stream follows.
const srvMaxListenTasks = 64

// srvListenWriteTimeout bounds one write to a listen stream: a client that
// does not read is let go.
const srvListenWriteTimeout = 30 * time.Second

// srvTaskSignals wakes those who wait on a task when it changes, and no
// one else, without waiting itself: fire closes the channels of the
// waiters of that task. A waiter is registered under the tasks it
// follows until its done is called, so there are never more than there
// are streams and waits.
type srvTaskSignals struct {
	mu sync.Mutex
	by map[string]map[*srvWaiter]struct{} // by task ID
}

type srvWaiter struct {
	ch    chan struct{}
	fired bool // guarded by srvTaskSignals.mu
}

// wait returns a channel closed at the next change of any of the tasks
// ids, and done, which must be called once the channel is no longer
// waited on.
func (g *srvTaskSignals) wait(ids ...string) (changed <-chan struct{}, done func()) {
	w := &srvWaiter{ch: make(chan struct{})}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.by == nil {
		g.by = map[string]map[*srvWaiter]struct{}{}
	}
	for _, id := range ids {
		m := g.by[id]
		if m == nil {
			m = map[*srvWaiter]struct{}{}
			g.by[id] = m
		}
		m[w] = struct{}{}
	}
	return w.ch, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, id := range ids {
			if m := g.by[id]; m != nil {
				delete(m, w)
				if len(m) == 0 {
					delete(g.by, id)
				}
			}
		}
	}
}

// fire wakes the waiters of task id.
func (g *srvTaskSignals) fire(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for w := range g.by[id] {
		if !w.fired {
			w.fired = true
			close(w.ch)
		}
	}
}

// srvListenTasks serves a subscriptions/listen, q (its envelope checked),
// that asks for task status notifications, and reports whether it did: one
// that asks for none goes on to the go-sdk.
func (s *Server) srvListenTasks(w http.ResponseWriter, r *http.Request, q *srvTaskRequest) bool {
	if q.Params.Notifications == nil || q.Params.Notifications.TaskIDs == nil {
		return false
	}
	if !q.speaksTasks() {
		srvWrite(w, nil, q.ID, nil, &jsonrpc.Error{Code: CodeMissingCapability,
			Message: "Missing required client capability: task status notifications need the extension " + TasksExtension + " in the request's client capabilities",
			Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + TasksExtension + `":{}}}}`)})
		return true
	}
	ids := q.Params.Notifications.TaskIDs
	if len(ids) > srvMaxListenTasks {
		srvHTTPError(w, http.StatusBadRequest, q.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("subscriptions/listen: params.notifications.taskIds names %d tasks; one stream follows at most %d", len(ids), srvMaxListenTasks)})
		return true
	}
	ss := s.sessions
	client := ss.client(r)
	if ok, bound := ss.reserve(client); !ok {
		s.srvRefuseSession(w, r, bound)
		return true
	}
	defer ss.release(client)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(ss.ended, cancel)()

	// The tasks agreed to: those known (to this server or its store), each
	// once, with its state now.
	last := map[string]*srvTaskView{}
	var agreed []string
	for _, id := range ids {
		if len(id) > srvMaxTaskID || last[id] != nil {
			continue
		}
		v, jerr := s.srvTaskState(ctx, id)
		if jerr != nil {
			continue
		}
		last[id] = v
		agreed = append(agreed, id)
	}
	sub := mcp.Meta{mcp.MetaKeySubscriptionID: q.ID}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(msg any) bool {
		b, err := jsonenc.Marshal(msg)
		if err != nil {
			s.log.Error("mcp server: encode task notification", "err", err)
			return false
		}
		_ = rc.SetWriteDeadline(time.Now().Add(srvListenWriteTimeout))
		if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	type note struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}
	ack := struct {
		Meta          mcp.Meta `json:"_meta"`
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}{Meta: sub}
	ack.Notifications.TaskIDs = srvNonNil(agreed)
	if !send(note{"2.0", "notifications/subscriptions/acknowledged", ack}) {
		return true
	}
	notify := func(v *srvTaskView) bool {
		return send(note{"2.0", "notifications/tasks", struct {
			Meta mcp.Meta `json:"_meta"`
			*srvTaskView
		}{sub, v}})
	}
	for _, id := range agreed {
		if !notify(last[id]) {
			return true
		}
	}
	for {
		// A change after the wait is taken is not lost: the states are
		// read after it. Only the changes of the tasks followed wake it.
		changed, done := s.tasks.changed.wait(agreed...)
		open, remote := false, false
		for _, id := range agreed {
			if !s.srvListenStep(ctx, id, last, notify) {
				done()
				return true
			}
			if srvTaskDone(last[id].Status) {
				continue
			}
			open = true
			if s.tasks.local(id) == nil {
				remote = true
			}
		}
		if !open {
			done()
			break
		}
		// A task running here is followed by its signals; one running
		// on another server by reading the store at the polling
		// interval.
		var tick *time.Timer
		var ticked <-chan time.Time
		if remote {
			tick = time.NewTimer(srvTaskPollMs * time.Millisecond)
			ticked = tick.C
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-ticked:
		}
		done()
		if tick != nil {
			tick.Stop()
		}
		if ctx.Err() != nil {
			return true
		}
	}
	send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", q.ID, struct {
		ResultType string   `json:"resultType"`
		Meta       mcp.Meta `json:"_meta"`
	}{"complete", sub}})
	return true
}

// srvListenStep reads a task followed again and sends its state when it
// changed; it reports whether the stream goes on.
func (s *Server) srvListenStep(ctx context.Context, id string, last map[string]*srvTaskView, notify func(*srvTaskView) bool) bool {
	if ctx.Err() != nil {
		return false
	}
	prev := last[id]
	if srvTaskDone(prev.Status) {
		return true
	}
	v, jerr := s.srvTaskState(ctx, id)
	if jerr != nil {
		return ctx.Err() == nil // a store that failed this once: read again later
	}
	if v.Status == prev.Status && v.StatusMessage == prev.StatusMessage {
		return true
	}
	last[id] = v
	return notify(v)
}

// srvTaskDone reports whether a status is terminal.
func srvTaskDone(status string) bool {
	return slices.Contains([]string{"completed", "failed", "cancelled"}, status)
}

// srvNonNil is s, or an empty slice for nil (a JSON array, never null).
func srvNonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
