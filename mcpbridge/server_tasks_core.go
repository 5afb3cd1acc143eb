package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// The in-core tasks of MCP 2025-11-25, served to the HTTP sessions of that
// revision: the server declares capabilities.tasks at initialize, lists
// execution.taskSupport with the tools marked task, and a tools/call
// carrying params.task answers a CreateTaskResult at once; tasks/get,
// tasks/result (which waits for the end), tasks/list (the session's tasks)
// and tasks/cancel follow it. The go-sdk v1.8.0 knows none of it, so wield
// answers these requests before it, as its fast path does.
//
// One code path, two wire forms: such a task is the same call record as a
// task of the extension (srvLaunchTask, srvTaskState), readable in either
// form, across a restart and from any server sharing the store.

// srvCoreVersion is the revision whose sessions get the in-core tasks.
const srvCoreVersion = "2025-11-25"

// srvCoreTaskCaps are the tasks capabilities the server declares.
const srvCoreTaskCaps = `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}},`

// srvCorePage is the number of tasks one tasks/list page gives, and
// srvCoreSessionTasks how many tasks of a session it remembers (its
// newest); srvCoreSessions bounds the sessions remembered.
const (
	srvCorePage         = 50
	srvCoreSessionTasks = 1000
	srvCoreSessions     = 4096
)

// srvCoreRelated is the _meta key that ties a message to its task.
const srvCoreRelated = "io.modelcontextprotocol/related-task"

// srvCoreRequest is a request of a 2025-11-25 session as the in-core tasks
// path reads it.
type srvCoreRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Task      *struct {
			TTL *int64 `json:"ttl"`
		} `json:"task"`
		TaskID string  `json:"taskId"`
		Cursor *string `json:"cursor"`
	} `json:"params"`
}

// srvCoreSessionList remembers the tasks each session started, for
// tasks/list.
type srvCoreSessionList struct {
	mu    sync.Mutex
	tasks map[string][]string // session ID: its task IDs, oldest first
	order []string            // session IDs, oldest first
	// speaks are the sessions whose client declared capabilities.tasks
	// at initialize, and speakOrder the same, oldest first.
	speaks     map[string]bool
	speakOrder []string
}

// declare notes that a session's client declared tasks.
func (l *srvCoreSessionList) declare(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.speaks == nil {
		l.speaks = map[string]bool{}
	}
	l.speaks[session] = true
	l.speakOrder = append(l.speakOrder, session)
	if len(l.speakOrder) > srvCoreSessions {
		delete(l.speaks, l.speakOrder[0])
		l.speakOrder = l.speakOrder[1:]
	}
}

func (l *srvCoreSessionList) declared(session string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.speaks[session]
}

func (l *srvCoreSessionList) add(session, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tasks == nil {
		l.tasks = map[string][]string{}
	}
	ids, ok := l.tasks[session]
	if !ok {
		l.order = append(l.order, session)
		if len(l.order) > srvCoreSessions {
			delete(l.tasks, l.order[0])
			l.order = l.order[1:]
		}
	}
	ids = append(ids, id)
	if len(ids) > srvCoreSessionTasks {
		ids = ids[len(ids)-srvCoreSessionTasks:]
	}
	l.tasks[session] = ids
}

// forget lets go of an ended session: its tasks stay readable by their
// IDs, but no session lists them any more.
func (l *srvCoreSessionList) forget(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.tasks[session]; ok {
		delete(l.tasks, session)
		l.order = slices.DeleteFunc(l.order, func(id string) bool { return id == session })
	}
	if l.speaks[session] {
		delete(l.speaks, session)
		l.speakOrder = slices.DeleteFunc(l.speakOrder, func(id string) bool { return id == session })
	}
}

func (l *srvCoreSessionList) of(session string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.tasks[session]...)
}

// srvCoreTask is a task in the 2025-11-25 form.
type srvCoreTask struct {
	TaskID        string    `json:"taskId"`
	Status        string    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	LastUpdatedAt time.Time `json:"lastUpdatedAt"`
	TTL           *int64    `json:"ttl"` // null: kept as long as the call's record
	PollInterval  int       `json:"pollInterval"`
}

func srvCoreOf(v *srvTaskView) *srvCoreTask {
	return &srvCoreTask{TaskID: v.TaskID, Status: v.Status, StatusMessage: v.StatusMessage, CreatedAt: v.CreatedAt, LastUpdatedAt: v.LastUpdatedAt, PollInterval: v.PollIntervalMs}
}

// srvKeepsTasks reports whether the server can keep tasks: its store knows
// reserved call IDs.
func (s *Server) srvKeepsTasks() bool {
	_, ok := s.opts.Calls.(wield.CallIDReservations)
	return ok
}

// srvServeCoreTasks answers the in-core tasks requests of a 2025-11-25
// session, and reports whether it did: anything else goes on as it came.
func (s *Server) srvServeCoreTasks(w http.ResponseWriter, r *http.Request, ep *srvEndpoint, sess *srvSession) bool {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Protocol-Version") != srvCoreVersion || !s.srvKeepsTasks() {
		return false
	}
	b, ok := r.Body.(*srvBody)
	if !ok || b.more != nil {
		return false
	}
	body := make([]byte, b.rd.Size())
	if _, err := b.rd.ReadAt(body, 0); err != nil && len(body) > 0 {
		return false
	}
	var q srvCoreRequest
	if json.Unmarshal(body, &q) != nil || q.JSONRPC != "2.0" || !srvPlainID(q.ID) {
		return false
	}
	switch q.Method {
	case "tools/list":
		return s.srvCoreList(w, r, ep, sess, &q)
	case "tools/call":
		if q.Params == nil {
			return false
		}
		if q.Params.Task == nil {
			// A plain call, but of a tool that runs only as a task
			// from a client that knows tasks: -32601, as the
			// revision says. A client that declared no tasks gets
			// the plain call, as before tasks.
			if s.srvTaskSupport(ep, q.Params.Name) != wield.TaskRequired || !s.coreSessions.declared(sess.id) {
				return false
			}
			if s.srvHidden(r.Context(), q.Params.Name, s.srvCaller(sess.ss)) {
				return false // unknown to this caller: the SDK's path, where the engine answers so
			}
			srvWrite(w, sess.ss, q.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: fmt.Sprintf("tool %q runs only as a task (its execution.taskSupport is required): call it with params.task", q.Params.Name)})
			return true
		}
		return s.srvCoreCall(w, r, ep, sess, &q)
	case "tasks/list":
		s.srvCoreTaskList(w, r, sess, &q)
		return true
	case "tasks/get", "tasks/result", "tasks/cancel":
	default:
		return false
	}
	id := ""
	if q.Params != nil {
		id = q.Params.TaskID
	}
	if id == "" || len(id) > srvMaxTaskID {
		srvWrite(w, sess.ss, q.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("%s: params.taskId is required, and at most %d bytes long", q.Method, srvMaxTaskID)})
		return true
	}
	v, jerr := s.srvTaskState(r.Context(), id)
	if jerr != nil {
		srvWrite(w, sess.ss, q.ID, nil, jerr)
		return true
	}
	switch q.Method {
	case "tasks/get":
		s.srvCoreWrite(w, sess, q.ID, srvCoreOf(v))
	case "tasks/result":
		s.srvCoreResult(w, r, sess, q.ID, v)
	case "tasks/cancel":
		if srvTaskDone(v.Status) {
			srvWrite(w, sess.ss, q.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("task %q has already ended (%s): it cannot be canceled", id, v.Status)})
			return true
		}
		s.srvCancelTask(r.Context(), v)
		if v = s.srvCoreAwait(r.Context(), id, 5*time.Second); v == nil {
			srvWrite(w, sess.ss, q.ID, nil, srvInternal)
			return true
		}
		s.srvCoreWrite(w, sess, q.ID, srvCoreOf(v))
	}
	return true
}

// srvCoreList answers tools/list with execution.taskSupport on the tools
// marked task, under a policy too (the caller's own list); a list the fast
// path would not give (a cursor, a long one) goes to the go-sdk, without
// it.
func (s *Server) srvCoreList(w http.ResponseWriter, r *http.Request, ep *srvEndpoint, sess *srvSession, q *srvCoreRequest) bool {
	if q.Params != nil && (q.Params.Cursor != nil || q.Params.Name != "") {
		return false
	}
	s.srvSync(ep)
	list := ep.srvList(s.srvPrivate(r.Context()))
	if list == nil {
		return false
	}
	// Under a policy, or for a scoped key, the list is the caller's own:
	// the tools it may see, run_program described with the functions it
	// reaches, as srvPolicyList lists them on the SDK's path. Any other is
	// the endpoint's, made once per change of its tools (decoding and
	// encoding the list each time cost more than the rest of the request).
	p, kit := s.eng.Policy(), s.srvReach(r.Context())
	if p != nil || kit != nil {
		out, ok := s.srvCoreListing(r, ep, sess, list, p, kit)
		if ok {
			srvWrite(w, sess.ss, q.ID, out, nil)
		}
		return ok
	}
	ep.mu.Lock()
	kept := len(ep.taskFrom) > 0 && &ep.taskFrom[0] == &list[0] // the list it was made from is current
	out, ok := ep.taskList, ep.taskOK
	ep.mu.Unlock()
	if !kept {
		out, ok = s.srvCoreListing(r, ep, sess, list, nil, nil)
		ep.mu.Lock()
		ep.taskFrom, ep.taskList, ep.taskOK = list, out, ok
		ep.mu.Unlock()
	}
	if ok {
		srvWrite(w, sess.ss, q.ID, out, nil)
	}
	return ok
}

// srvCoreListing is list with execution.taskSupport on the tools marked
// task; under the policy p or the scope kit (either not nil), only the
// tools the caller may see, described for it (srvListFor). False when no
// tool is marked (the go-sdk answers, without it), or on a failure.
func (s *Server) srvCoreListing(r *http.Request, ep *srvEndpoint, sess *srvSession, list []byte, p wield.Policy, kit *wield.Toolkit) ([]byte, bool) {
	ep.mu.Lock()
	support := map[string]wield.TaskSupport{}
	for name, t := range ep.synced {
		if t.Task != "" && !ep.headed[name] {
			support[name] = t.Task
		}
	}
	ep.mu.Unlock()
	if len(support) == 0 {
		return nil, false
	}
	var res map[string]json.RawMessage
	var tools []map[string]json.RawMessage
	if json.Unmarshal(list, &res) != nil || json.Unmarshal(res["tools"], &tools) != nil {
		return nil, false
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		if json.Unmarshal(t["name"], &names[i]) != nil {
			return nil, false
		}
	}
	var visible map[string]*wield.Tool
	if p != nil || kit != nil {
		visible = s.srvListFor(r.Context(), p, s.srvCaller(sess.ss), kit, names)
		kept := tools[:0]
		kn := names[:0]
		for i, t := range tools {
			if visible[names[i]] != nil {
				kept, kn = append(kept, t), append(kn, names[i])
			}
		}
		tools, names = kept, kn
	}
	for i, t := range tools {
		name := names[i]
		if support[name] != "" {
			t["execution"] = json.RawMessage(`{"taskSupport":"` + string(support[name]) + `"}`)
		}
		if desc, ok := s.srvDescribedFor(visible[name]); ok {
			d, err := json.Marshal(desc)
			if err != nil {
				return nil, false
			}
			t["description"] = d
		}
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, false
	}
	res["tools"] = b
	out, err := json.Marshal(res)
	if err != nil {
		return nil, false
	}
	return out, true
}

// srvCoreCall answers a tools/call that carries params.task: a task, when
// the tool is marked task; -32601 otherwise, as the revision says for a
// tool whose taskSupport is forbidden.
func (s *Server) srvCoreCall(w http.ResponseWriter, r *http.Request, ep *srvEndpoint, sess *srvSession, q *srvCoreRequest) bool {
	name := q.Params.Name
	ep.mu.Lock()
	_, listed := ep.synced[name]
	ep.mu.Unlock()
	if !listed || (ep.toolset != "" && !s.srvInToolset(ep.toolset, name)) {
		return false // the SDK words the error
	}
	if s.srvHidden(r.Context(), name, s.srvCaller(sess.ss)) {
		// Unknown to this caller: the SDK's path, where the engine
		// answers it as a call of an unknown tool; neither how the tool
		// runs as a task nor a task is told.
		return false
	}
	if s.srvTaskSupport(ep, name) == "" {
		srvWrite(w, sess.ss, q.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: fmt.Sprintf("tool %q does not run as a task (its execution.taskSupport is forbidden): call it without params.task", name)})
		return true
	}
	p := &mcp.CallToolParamsRaw{Name: name, Arguments: q.Params.Arguments}
	task, id, started := s.srvLaunchTask(r, p, s.srvCaller(sess.ss), true, nil)
	if !started {
		srvWrite(w, sess.ss, q.ID, nil, s.srvTasksFull(name))
		return true
	}
	if jerr := s.srvTaskReserved(r.Context(), s.opts.Calls.(wield.CallIDReservations), name, id, task); jerr != nil {
		srvWrite(w, sess.ss, q.ID, nil, jerr)
		return true
	}
	s.coreSessions.add(sess.id, id)
	v, jerr := s.srvTaskState(r.Context(), id)
	if jerr != nil {
		srvWrite(w, sess.ss, q.ID, nil, jerr)
		return true
	}
	s.srvCoreWrite(w, sess, q.ID, struct {
		Task *srvCoreTask `json:"task"`
	}{srvCoreOf(v)})
	return true
}

// srvCoreResult answers tasks/result: once the task has ended, what the
// tools/call would have answered (the result, its _meta naming the task;
// the JSON-RPC error of a failed one). It waits for the end as long as the
// client waits: in an event stream, where notifications/tasks/status tells
// each change of the task's status (or status message) before the
// answer, for a client that accepts one (every streamable HTTP client).
func (s *Server) srvCoreResult(w http.ResponseWriter, r *http.Request, sess *srvSession, id json.RawMessage, v *srvTaskView) {
	if !srvTaskDone(v.Status) && srvAccepts(r.Header.Values("Accept")) {
		s.srvCoreResultStream(w, r, sess, id, v)
		return
	}
	if task := v.TaskID; !srvTaskDone(v.Status) {
		if v = s.srvCoreAwait(r.Context(), task, 0); v == nil || !srvTaskDone(v.Status) {
			if r.Context().Err() == nil && s.srvEnding() {
				s.srvCoreEnded(w, id, task)
			}
			return // else the client left
		}
	}
	out, jerr := s.srvCoreFinal(v)
	srvWrite(w, sess.ss, id, out, jerr)
}

// srvCoreEnded answers a tasks/result whose wait EndWaits ended, for a
// task that runs on another server: HTTP 503, to ask again.
func (s *Server) srvCoreEnded(w http.ResponseWriter, id json.RawMessage, task string) {
	w.Header().Set("Retry-After", "1")
	srvHTTPError(w, http.StatusServiceUnavailable, id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("this server is shutting down before task %q ended; the task runs on another server and goes on there: ask tasks/result again", task)})
}

// srvCoreFinal is the answer of tasks/result for an ended task.
func (s *Server) srvCoreFinal(v *srvTaskView) ([]byte, *jsonrpc.Error) {
	if v.res == nil {
		if v.Error != nil {
			return nil, v.Error
		}
		return nil, srvInternal
	}
	res := s.srvResult(v.res)
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[srvCoreRelated] = map[string]string{"taskId": v.TaskID}
	out, err := jsonenc.Marshal(res)
	if err != nil {
		s.log.Error("mcp server: encode a task's result", "task", v.TaskID, "err", err)
		return nil, srvInternal
	}
	return out, nil
}

// srvCoreResultStream answers tasks/result of a running task in an event
// stream: the task's status now, each change, then the answer.
func (s *Server) srvCoreResultStream(w http.ResponseWriter, r *http.Request, sess *srvSession, id json.RawMessage, v *srvTaskView) {
	ctx := r.Context()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Mcp-Session-Id", sess.ss.ID())
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(srvListenWriteTimeout))
		if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	notify := func(v *srvTaskView) bool {
		b, err := jsonenc.Marshal(struct {
			JSONRPC string       `json:"jsonrpc"`
			Method  string       `json:"method"`
			Params  *srvCoreTask `json:"params"`
		}{"2.0", "notifications/tasks/status", srvCoreOf(v)})
		return err == nil && send(b)
	}
	if !notify(v) {
		return
	}
	for !srvTaskDone(v.Status) {
		if !s.srvCoreStep(ctx, &v, notify) {
			return
		}
	}
	out, jerr := s.srvCoreFinal(v)
	msg := append(srvResponseStart(id, len(out)), out...)
	if jerr != nil {
		e, _ := json.Marshal(jerr)
		msg = append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"error":`...)
		msg = append(msg, e...)
	}
	send(append(msg, '}'))
}

// srvCoreStep reads the task *v again, sends its state when it changed,
// and, when it has not ended, waits for its next change (or the polling
// interval); it reports whether to go on.
func (s *Server) srvCoreStep(ctx context.Context, v **srvTaskView, notify func(*srvTaskView) bool) bool {
	changed, done := s.tasks.changed.wait((*v).TaskID)
	defer done()
	now, jerr := s.srvTaskState(context.WithoutCancel(ctx), (*v).TaskID)
	if jerr != nil {
		return false
	}
	if now.Status != (*v).Status || now.StatusMessage != (*v).StatusMessage {
		if !notify(now) {
			return false
		}
	}
	*v = now
	if srvTaskDone(now.Status) {
		return true
	}
	t := time.NewTimer(srvTaskPollMs * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-s.srvEndingFor(now.TaskID):
		return false // the server is shutting down: the stream closes
	case <-changed:
	case <-t.C:
	}
	return true
}

// srvCoreAwait reads a task until it has ended, for at most limit (zero:
// until ctx ends): followed by the signals of the tasks here, by reading
// the store at the polling interval for another server's. It returns the
// last state read, nil when ctx ended first or the task is unknown.
func (s *Server) srvCoreAwait(ctx context.Context, id string, limit time.Duration) *srvTaskView {
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	for {
		if v, end := s.srvCoreAwaitStep(ctx, id, limit > 0); end {
			return v
		}
	}
}

// srvCoreAwaitStep is one read of srvCoreAwait, and the wait for the
// task's next change: it returns the state and true when the wait ends
// (the task ended, or ctx did, or EndWaits for a task running elsewhere:
// the state read when partial, else nil).
func (s *Server) srvCoreAwaitStep(ctx context.Context, id string, partial bool) (*srvTaskView, bool) {
	changed, done := s.tasks.changed.wait(id)
	defer done()
	v, jerr := s.srvTaskState(context.WithoutCancel(ctx), id)
	if jerr != nil {
		return nil, true
	}
	if srvTaskDone(v.Status) {
		return v, true
	}
	t := time.NewTimer(srvTaskPollMs * time.Millisecond)
	defer t.Stop()
	ending := s.srvEndingFor(id)
	select {
	case <-ctx.Done():
	case <-ending:
	case <-changed:
		return nil, false
	case <-t.C:
		return nil, false
	}
	// ctx ended, or the server is shutting down and the task runs
	// elsewhere (EndWaits).
	if partial {
		return v, true // the state reached within the limit
	}
	return nil, true
}

// srvCoreTaskList answers tasks/list: the tasks this session started, the
// newest first, srvCorePage at a time (the cursor is where the next page
// starts). Other tasks are read by their ID (tasks/get): a task ID is a
// capability, which one session does not list to another.
func (s *Server) srvCoreTaskList(w http.ResponseWriter, r *http.Request, sess *srvSession, q *srvCoreRequest) {
	ids := s.coreSessions.of(sess.id)
	start := 0
	if q.Params != nil && q.Params.Cursor != nil {
		n, err := strconv.Atoi(*q.Params.Cursor)
		if err != nil || n < 0 || n > len(ids) {
			srvWrite(w, sess.ss, q.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tasks/list: params.cursor is not one this server gave"})
			return
		}
		start = n
	}
	out := struct {
		Tasks      []*srvCoreTask `json:"tasks"`
		NextCursor string         `json:"nextCursor,omitempty"`
	}{Tasks: []*srvCoreTask{}}
	i := start
	for ; i < len(ids) && len(out.Tasks) < srvCorePage; i++ {
		v, jerr := s.srvTaskState(r.Context(), ids[len(ids)-1-i])
		if jerr == nil {
			out.Tasks = append(out.Tasks, srvCoreOf(v))
		}
	}
	if i < len(ids) {
		out.NextCursor = strconv.Itoa(i)
	}
	s.srvCoreWrite(w, sess, q.ID, out)
}

// srvCoreWrite answers a request of the session with result.
func (s *Server) srvCoreWrite(w http.ResponseWriter, sess *srvSession, id json.RawMessage, result any) {
	out, err := jsonenc.Marshal(result)
	if err != nil {
		s.log.Error("mcp server: encode a task answer", "err", err)
		srvWrite(w, sess.ss, id, nil, srvInternal)
		return
	}
	srvWrite(w, sess.ss, id, out, nil)
}

// srvCapsWriter holds the answer to an initialize and, when it agrees on
// 2025-11-25, adds the tasks capabilities before the other server
// capabilities (the go-sdk's ServerCapabilities has no such field).
type srvCapsWriter struct {
	http.ResponseWriter
	buf    bytes.Buffer
	status int
}

func (c *srvCapsWriter) WriteHeader(status int)      { c.status = status }
func (c *srvCapsWriter) Write(b []byte) (int, error) { return c.buf.Write(b) }
func (c *srvCapsWriter) Flush()                      {}

// finish writes the answer held, the capabilities added, and reports
// whether it added them.
func (c *srvCapsWriter) finish() bool {
	b := c.buf.Bytes()
	added := false
	if bytes.Contains(b, []byte(`"protocolVersion":"`+srvCoreVersion+`"`)) && !bytes.Contains(b, []byte(`"tasks":{`)) {
		key := []byte(`"capabilities":{`)
		if i := bytes.Index(b, key); i >= 0 {
			caps := srvCoreTaskCaps
			if j := i + len(key); j < len(b) && b[j] == '}' {
				caps = caps[:len(caps)-1] // no other capability: no comma
			}
			b = slices.Concat(b[:i+len(key)], []byte(caps), b[i+len(key):])
			added = true
		}
	}
	h := c.ResponseWriter.Header()
	if h.Get("Content-Length") != "" {
		h.Set("Content-Length", strconv.Itoa(len(b)))
	}
	if c.status != 0 {
		c.ResponseWriter.WriteHeader(c.status)
	}
	c.ResponseWriter.Write(b)
	return added
}

// srvServeInitialize serves a request that opens a session through the
// go-sdk, adding the tasks capabilities to a 2025-11-25 initialize when
// the server keeps tasks.
func (s *Server) srvServeInitialize(w http.ResponseWriter, r *http.Request, h http.Handler) {
	if !s.srvKeepsTasks() || r.Method != http.MethodPost {
		h.ServeHTTP(w, r)
		return
	}
	declares := false
	if b, ok := r.Body.(*srvBody); ok && b.more == nil {
		body := make([]byte, b.rd.Size())
		if _, err := b.rd.ReadAt(body, 0); err == nil || len(body) == 0 {
			var q struct {
				Method string `json:"method"`
				Params struct {
					Capabilities struct {
						Tasks json.RawMessage `json:"tasks"`
					} `json:"capabilities"`
				} `json:"params"`
			}
			declares = json.Unmarshal(body, &q) == nil && q.Method == "initialize" && len(q.Params.Capabilities.Tasks) > 0 && string(q.Params.Capabilities.Tasks) != "null"
		}
	}
	c := &srvCapsWriter{ResponseWriter: w}
	h.ServeHTTP(c, r)
	tasks := c.finish()
	if sid := w.Header().Get("Mcp-Session-Id"); declares && tasks && sid != "" {
		s.coreSessions.declare(sid)
	}
}
