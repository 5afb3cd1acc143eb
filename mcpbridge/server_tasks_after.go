package mcpbridge

import (
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// A task for any call past a time ([ServerOptions].TaskAfter): the Tasks
// extension lets the server answer any request of a client that declared it
// with a task, at its own discretion. A tools/call of a tool not marked
// task, from such a client, starts as a task would (its ID reserved in the
// store, its caller marked) and the request waits for it up to TaskAfter:
// a call that ends by then is answered as a plain call would be; one that
// does not is answered with its task, and goes on as that task, the same
// call under the same ID, recorded once.
//
// Left to the plain path: a retry carrying inputResponses or requestState,
// a call asking for progress or logs on its response stream, and, when approvals are asked in the protocol (InputRequired), a tool
// whose permission is confirm (its input_required round trip is no task's).

// srvMayTaskAfter reports, from the headers, whether a tools/call of name
// may become a task past TaskAfter.
func (s *Server) srvMayTaskAfter(ep *srvEndpoint, name string) bool {
	if s.opts.TaskAfter <= 0 {
		return false
	}
	if _, ok := s.opts.Calls.(wield.CallIDReservations); !ok {
		return false
	}
	ep.mu.Lock()
	t, ok := ep.synced[name]
	headed := ep.headed[name]
	ep.mu.Unlock()
	if !ok || headed {
		return false
	}
	return s.opts.InputRequired == nil || t.EffectivePermission() != wield.PermissionConfirm
}

// srvTaskAfter starts a call that becomes a task past TaskAfter, or
// reports false (the plain path answers) for a request that may not.
func (s *Server) srvTaskAfter(w http.ResponseWriter, r *http.Request, ep *srvEndpoint, q *srvTaskCall) bool {
	if !q.tasks || q.in.responses != nil || q.retry || q.notes {
		return false
	}
	return s.srvStartTask(w, r, ep, q, s.opts.TaskAfter)
}

// srvCallerLeft is the cause of a call canceled because its client ended
// the request before the call became a task.
var srvCallerLeft error = wield.ErrCallerCanceled

// srvAnswerBefore waits up to after for a call started as a task: ended by
// then, it answers the request with the call's result, as a plain call
// would be answered, and reports true; a client that ends the request
// first cancels the call, on purpose, as it would a plain call (true).
// Otherwise it reports false: the call is answered as its task.
func (s *Server) srvAnswerBefore(w http.ResponseWriter, r *http.Request, q *srvTaskCall, task *srvTask, after time.Duration) bool {
	t := time.NewTimer(after)
	defer t.Stop()
	select {
	case <-task.p.Done():
	case <-r.Context().Done():
		task.cancel(srvCallerLeft)
		<-task.p.Done() // recorded canceled before the request ends
		return true
	case <-t.C:
		return false
	}
	res, err, _ := task.p.TryResult()
	if err != nil || res == nil {
		if !errors.Is(err, wield.ErrCallIDTaken) {
			s.log.Error("mcp server: call failed", "tool", q.name, "err", err)
		}
		srvWrite(w, nil, q.id, nil, srvInternal)
		return true
	}
	result := s.srvResult(res)
	if result.Meta == nil {
		result.Meta = mcp.Meta{}
	}
	result.Meta[mcp.MetaKeyServerInfo] = &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}
	out, err := jsonenc.Marshal(result)
	if err != nil || len(out) < 2 || out[len(out)-1] != '}' {
		s.log.Error("mcp server: encode result", "tool", q.name, "err", err)
		srvWrite(w, nil, q.id, nil, srvInternal)
		return true
	}
	out = append(out[:len(out)-1], `,"resultType":"complete"}`...)
	srvWrite(w, nil, q.id, out, nil)
	return true
}
