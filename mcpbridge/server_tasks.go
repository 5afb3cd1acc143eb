package mcpbridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/internal/jsondec"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// Tasks (the MCP extension io.modelcontextprotocol/tasks, served to
// requests of the stateless era) let a client start a long call and come
// back for it: a tools/call of a tool marked task (wield.Tool.Task) from a
// client that declares the extension answers at once with a task, and
// tasks/get, tasks/update and tasks/cancel follow it.
//
// A task is a call record, never a second store: its ID is the call's ID,
// reserved in the record store before the task is answered (so any server
// sharing the store knows it from then on), its status is read from the
// call running here, else from its record, else from its reservation (a
// call running on another server); its result is the recorded result. A
// task therefore outlives the server that started it (SQLite), and is read
// from any server that shares the store (PostgreSQL).

// TasksExtension is the identifier of the MCP Tasks extension, in the
// capabilities of server/discover and of the client's requests.
const TasksExtension = "io.modelcontextprotocol/tasks"

// CodeMissingCapability is the JSON-RPC error of a request the server can
// serve only with a capability the client did not declare: a call of a tool
// whose calls are always tasks, from a client without the Tasks extension.
const CodeMissingCapability = -32021

// srvTaskMark is the caller variable that marks, in its record, a call
// started as a task: only those are read as tasks.
const srvTaskMark = "wield_mcp_task"

// srvTaskOwnerVar is the caller variable that binds, in its record, a task
// to the requester (API key) that started it: a digest, never the key's
// ID. MCP has a receiver with an authorization context bind tasks to it,
// and refuse them to another: another requester reads such a task as
// unknown. A task started without a requester (a server without keys) has
// none, and its ID is the capability.
const srvTaskOwnerVar = "wield_mcp_task_owner"

// srvTaskOwner is the owner a task started, or read, with ctx has: "" with
// no requester. The digest is kept by requester (srvOwners): a task is
// read by its owner on every tasks/get, and by each listen stream each
// time it changes.
func srvTaskOwner(ctx context.Context) string {
	who := wield.RequesterFrom(ctx)
	if who == "" {
		return ""
	}
	if o, ok := srvOwners.m.Load(who); ok {
		return o.(string)
	}
	o := srvStateWho("task owner\x00" + who)
	if srvOwners.n.Add(1) > srvMaxOwners {
		// Requesters are the server's authenticated keys and users:
		// few, but a long-lived server may see many come and go.
		srvOwners.m.Clear()
		srvOwners.n.Store(1)
	}
	srvOwners.m.Store(who, o)
	return o
}

// srvOwners are the owner digests of the requesters seen, at most
// srvMaxOwners (then forgotten together).
var srvOwners struct {
	m sync.Map // requester → srvTaskOwner
	n atomic.Int64
}

const srvMaxOwners = 4096

// srvTaskPollMs is the polling interval suggested to clients.
const srvTaskPollMs = 1000

// srvMaxTasks bounds the tasks running in one server, and
// srvMaxTasksPerClient those of one client (as [ServerOptions].ClientKey
// names it; its IP address by default): past either a call of a
// task-optional tool runs as a plain call (its client waits), and one of a
// task-required tool is refused until a task ends.
const (
	srvMaxTasks          = 1024
	srvMaxTasksPerClient = 128
)

// srvMaxTaskID bounds the task IDs read (wield's are 26 characters): a
// longer one is refused before any store is asked, and never echoed.
const srvMaxTaskID = 128

// srvTaskReady bounds the wait for a task's ID to be reserved in the store
// before the task is answered.
const srvTaskReady = 10 * time.Second

// srvTasks are the tasks running in this server.
type srvTasks struct {
	mu       sync.Mutex
	running  map[string]*srvTask
	byClient map[string]int // running tasks per client
	// max and maxPerClient are srvMaxTasks and srvMaxTasksPerClient but
	// in tests (zero: those).
	max, maxPerClient int
	wg                sync.WaitGroup
	stopped           bool
	// stopListen ends the listener of other servers' cancellations
	// (listen), started with the first task; nil before.
	stopListen context.CancelFunc
	// stopWatch ends the watch of the approvals tasks wait for
	// (watchApprovals), started with the first task; nil before.
	stopWatch func()
	// changed fires, for its waiters alone, when a task running here
	// changes: it ends, or an approval it waits for is asked or decided
	// (see srvListenTasks).
	changed srvTaskSignals
	// owner names this server in the leases of its tasks, and stopRenew
	// ends their renewal (srvRenewLeases), started with the first lease.
	owner     string
	stopRenew context.CancelFunc
}

// srvTask is a task running here.
type srvTask struct {
	client  string
	owner   string // srvTaskOwner of the request that started it
	p       *engine.Pending
	cancel  context.CancelCauseFunc
	created time.Time
	// approval is the ID of the approval the call waits for, nil when
	// it waits for none.
	approval atomic.Pointer[string]
	// leased is set once the task holds its lease in the store.
	leased atomic.Bool
	// ask holds the questions the task's tool puts to its client, nil
	// when the client declared nothing it can be asked.
	ask atomic.Pointer[srvTaskAsk]
}

// srvTaskCanceled is the cause of a task canceled by tasks/cancel: on
// purpose (a pending approval ends with it), in words a model may read.
var srvTaskCanceled = errors.Join(wield.ErrCallerCanceled, &wield.Error{Type: wield.ErrCanceled, Message: "the client canceled the task (tasks/cancel)"})

// srvTaskRequest is a tools/call, tasks/* or subscriptions/listen request
// as the tasks path reads it (the envelope was checked strictly before: no
// duplicate keys, none in another letter case).
type srvTaskRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		TaskID    string          `json:"taskId"`
		// Notifications are what a subscriptions/listen asks for: the
		// tasks path serves those naming taskIds (srvListenTasks).
		Notifications *struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
		// InputResponses answer questions: a tasks/update's
		// (era_ask_task.go), or a tools/call retry's. RequestState
		// retries a call that answered input_required. Neither call
		// becomes a task past TaskAfter.
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage            `json:"requestState"`
		Meta           struct {
			ClientInfo *struct {
				Name string `json:"name"`
			} `json:"io.modelcontextprotocol/clientInfo"`
			ClientCapabilities *struct {
				Extensions  map[string]json.RawMessage   `json:"extensions"`
				Elicitation *mcp.ElicitationCapabilities `json:"elicitation"`
				Sampling    json.RawMessage              `json:"sampling"`
				Roots       json.RawMessage              `json:"roots"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
			// ProgressToken and LogLevel ask for notifications on the
			// call's response stream: such a call never becomes a task
			// past TaskAfter (a task carries none).
			ProgressToken json.RawMessage `json:"progressToken"`
			LogLevel      json.RawMessage `json:"io.modelcontextprotocol/logLevel"`
		} `json:"_meta"`
	} `json:"params"`
}

// srvTaskCall is a tools/call as the tasks path starts it: read from the
// decoding the era's fast path made of the body when it made one
// (srvTaskCallOfEra), else from srvTaskRequest (srvTaskRequest.call).
type srvTaskCall struct {
	id     json.RawMessage
	name   string
	args   json.RawMessage
	tasks  bool   // the client declared the Tasks extension
	client string // its name in clientInfo, or ""
	// in holds what the client can be asked and the answers the call
	// carries; retry is set when it carries a requestState.
	in    srvEraInput
	retry bool
	// notes is set when the call asks for progress or logs on its
	// response stream: it never becomes a task past TaskAfter.
	notes bool
}

// call is q, a tools/call, as the tasks path starts it.
func (q *srvTaskRequest) call() *srvTaskCall {
	m := &q.Params.Meta
	c := &srvTaskCall{id: q.ID, name: q.Params.Name, args: q.Params.Arguments, tasks: q.speaksTasks(),
		retry: q.Params.RequestState != nil, notes: m.ProgressToken != nil || m.LogLevel != nil}
	c.in.responses = q.Params.InputResponses
	if ci := m.ClientInfo; ci != nil {
		c.client = ci.Name
	}
	if cc := m.ClientCapabilities; cc != nil {
		c.in.canElicit, c.in.canSample, c.in.canRoots = srvCanElicitCaps(cc.Elicitation), len(cc.Sampling) > 0 && cc.Sampling[0] == '{', len(cc.Roots) > 0 && cc.Roots[0] == '{'
	}
	return c
}

// srvTaskCallOfEra is the tools/call e as the tasks path starts it: what
// srvEraDecode read, with no second decoding of the body. It decodes the
// extensions alone, and reports false when they are not an object.
func srvTaskCallOfEra(e *srvEraRequest) (*srvTaskCall, bool) {
	c := &srvTaskCall{id: e.ID, name: e.Params.Name, args: e.Params.Arguments, client: e.client, in: e.input, retry: e.input.state != ""}
	c.in.state = "" // the tasks path reads retry alone
	if e.extensions != nil {
		var ext map[string]json.RawMessage
		if jsondec.Decode(e.extensions, &ext) != nil {
			return nil, false
		}
		_, c.tasks = ext[TasksExtension]
	}
	return c, true
}

// speaksTasks reports whether the request's client declared the Tasks
// extension (in this request: the stateless era has no session to
// remember it in).
func (q *srvTaskRequest) speaksTasks() bool {
	c := q.Params.Meta.ClientCapabilities
	if c == nil {
		return false
	}
	_, ok := c.Extensions[TasksExtension]
	return ok
}

// srvServeTasks answers the requests of the Tasks extension, in the
// stateless era, and reports whether it did: tasks/get, tasks/update and
// tasks/cancel, and a tools/call that becomes a task. Anything else (and
// a request whose Mcp-Method or Mcp-Name headers do not match its body,
// which the go-sdk refuses with the error the revision defines) goes on
// as it came.
func (s *Server) srvServeTasks(w http.ResponseWriter, r *http.Request, ep *srvEndpoint) bool {
	if r.Method != http.MethodPost || !srvIsStatelessEra(r) || !s.srvOffersStatelessEra() {
		return false
	}
	method := r.Header.Get("Mcp-Method")
	switch method {
	case "tasks/get", "tasks/update", "tasks/cancel", "subscriptions/listen":
	case "tools/call":
		if s.srvTaskSupport(ep, r.Header.Get("Mcp-Name")) == "" && !s.srvMayTaskAfter(ep, r.Header.Get("Mcp-Name")) {
			return false
		}
	default:
		return false
	}
	b, ok := r.Body.(*srvBody)
	if !ok || b.more != nil {
		return false // not read whole: the SDK answers
	}
	var c *srvTaskCall
	if method == "tools/call" && b.era {
		// Decoded already, as strictly (srvCheckEnvelope): read once.
		if b.eraReq.Method != method {
			return false
		}
		if c, ok = srvTaskCallOfEra(&b.eraReq); !ok {
			return false
		}
	}
	var q srvTaskRequest
	if c == nil {
		// json.Unmarshal copies what it keeps: the body is not held.
		if json.Unmarshal(b.body, &q) != nil || q.JSONRPC != "2.0" || q.Method != method || !srvPlainID(q.ID) {
			return false
		}
	}
	if method == "subscriptions/listen" {
		return s.srvListenTasks(w, r, &q)
	}
	if method == "tools/call" {
		if c == nil {
			c = q.call()
		}
		if c.name != r.Header.Get("Mcp-Name") {
			return false
		}
		if s.srvTaskSupport(ep, c.name) == "" {
			return s.srvTaskAfter(w, r, ep, c)
		}
		return s.srvStartTask(w, r, ep, c, 0)
	}
	if len(q.Params.TaskID) > srvMaxTaskID {
		srvHTTPError(w, http.StatusBadRequest, q.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("%s: params.taskId is %d bytes long; task IDs are at most %d", method, len(q.Params.TaskID), srvMaxTaskID)})
		return true
	}
	if !q.speaksTasks() {
		// The extension's methods are the extension: a client that did
		// not declare it in this request is refused as SEP-2575 refuses
		// a request needing a capability the client did not declare.
		srvHTTPError(w, http.StatusBadRequest, q.ID, srvNeedsTasks(method+" is a method of the Tasks extension"))
		return true
	}
	if q.Params.TaskID == "" {
		srvHTTPError(w, http.StatusBadRequest, q.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: method + ": params.taskId is required"})
		return true
	}
	if r.Header.Get("Mcp-Name") != q.Params.TaskID {
		// The headers must say what the body says (2026-07-28,
		// streamable HTTP, "Server validation"): HeaderMismatch.
		srvHTTPError(w, http.StatusBadRequest, q.ID, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch,
			Message: fmt.Sprintf("%s: the Mcp-Name header is not the body's params.taskId %q", method, q.Params.TaskID)})
		return true
	}
	task, jerr := s.srvTaskState(r.Context(), q.Params.TaskID)
	if jerr != nil {
		srvWrite(w, nil, q.ID, nil, jerr)
		return true
	}
	switch method {
	case "tasks/get":
		s.srvWriteTask(w, q.ID, task, "complete")
	case "tasks/update":
		// The answers to the task's questions (era_ask_task.go); keys
		// not outstanding are ignored, as the extension says. A confirm
		// tool's approval is no question of the client's: it waits in
		// the inbox.
		if t := s.tasks.local(q.Params.TaskID); t != nil {
			if ta := t.ask.Load(); ta != nil {
				if err := ta.answer(q.Params.InputResponses); err != nil {
					var jerr *jsonrpc.Error
					if !errors.As(err, &jerr) {
						jerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
					}
					srvHTTPError(w, http.StatusBadRequest, q.ID, jerr)
					return true
				}
			}
		}
		s.srvWriteEmpty(w, q.ID)
	case "tasks/cancel":
		s.srvCancelTask(r.Context(), task)
		s.srvWriteEmpty(w, q.ID)
	}
	return true
}

// srvTaskSupport is whether a tool the endpoint lists runs as a task: its
// Task, "" for a tool not listed or whose arguments bind headers (the
// go-sdk checks those).
func (s *Server) srvTaskSupport(ep *srvEndpoint, name string) wield.TaskSupport {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	t, ok := ep.synced[name]
	if !ok || ep.headed[name] {
		return ""
	}
	return t.Task
}

// srvNeedsTasks is the error -32021 of a request that needs the Tasks
// extension from a client that did not declare it (HTTP 400, as the
// revision answers it): what says what needs it.
func srvNeedsTasks(what string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeMissingCapability,
		Message: fmt.Sprintf("%s: declare the extension %s in the request's client capabilities", what, TasksExtension),
		Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + TasksExtension + `":{}}}}`)}
}

// srvStartTask answers a tools/call of a task tool: with a task from a
// client that speaks them, after the call's ID is reserved in the store.
// A client that does not gets the plain call (task optional) or error
// -32021 (task required).
func (s *Server) srvStartTask(w http.ResponseWriter, r *http.Request, ep *srvEndpoint, q *srvTaskCall, after time.Duration) bool {
	if s.srvHidden(r.Context(), q.name, s.srvCallerNamed(q.client)) {
		// Unknown to this caller: a plain call, which the engine answers
		// as a call of an unknown tool. Nothing the tool's task support
		// says (-32021, input_required before the task, a task, past
		// TaskAfter or not) is told.
		return false
	}
	support := s.srvTaskSupport(ep, q.name)
	if after > 0 {
		support = wield.TaskOptional // past TaskAfter, or a plain call
	}
	if !q.tasks {
		if support == wield.TaskOptional {
			return false // a plain call
		}
		srvHTTPError(w, http.StatusBadRequest, q.id, srvNeedsTasks(fmt.Sprintf("tool %q runs only as a task", q.name)))
		return true
	}
	if ep.toolset != "" && !s.srvInToolset(ep.toolset, q.name) {
		return false // the SDK words the error
	}
	reserver, ok := s.opts.Calls.(wield.CallIDReservations)
	if !ok {
		// Without a store that knows running calls, a task would not
		// outlive this process nor be known to another: no task.
		if support == wield.TaskOptional {
			return false
		}
		srvWrite(w, nil, q.id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("tool %q runs only as a task, and this server keeps no call records to keep tasks in", q.name)})
		return true
	}
	client, in := q.client, q.in
	if err := s.srvEraStaticNeeds(r.Context(), q.name, s.srvCallerNamed(client), in); err != nil {
		// Known before the task exists (a tool file's steps): refused
		// as a plain call is, no task made.
		var jerr *jsonrpc.Error
		errors.As(err, &jerr)
		srvHTTPError(w, http.StatusBadRequest, q.id, jerr)
		return true
	}
	ta := s.srvTaskAsker(in.canElicit, in.canSample, in.canRoots)
	if ta != nil && after == 0 {
		// A task tool's questions asked before its task is made
		// (before_task): the tools/call itself answers input_required.
		missing, first, err := s.srvTaskFirst(q.name, q.args, q.in.responses)
		if err != nil {
			var jerr *jsonrpc.Error
			if !errors.As(err, &jerr) {
				jerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			}
			srvHTTPError(w, http.StatusBadRequest, q.id, jerr)
			return true
		}
		if missing != nil {
			s.srvWriteInputRequired(w, q.id, missing)
			return true
		}
		ta.a.first = first
	}
	p := &mcp.CallToolParamsRaw{Name: q.name, Arguments: q.args}
	// A call that may end before TaskAfter reserves no ID up front (a
	// store write each call): only once it becomes a task.
	task, id, started := s.srvLaunchTask(r, p, s.srvCallerNamed(client), after == 0, ta)
	if !started {
		if support == wield.TaskOptional {
			return false
		}
		srvWrite(w, nil, q.id, nil, s.srvTasksFull(q.name))
		return true
	}
	if after > 0 {
		if s.srvAnswerBefore(w, r, q, task, after) {
			return true
		}
		s.srvReserveLate(r.Context(), p.Name, id)
	}
	if jerr := s.srvTaskReserved(r.Context(), reserver, p.Name, id, task); jerr != nil {
		srvWrite(w, nil, q.id, nil, jerr)
		return true
	}
	state, jerr := s.srvTaskState(r.Context(), id)
	if jerr != nil {
		srvWrite(w, nil, q.id, nil, jerr)
		return true
	}
	s.srvWriteTask(w, q.id, state, "task")
	return true
}

// srvLaunchTask starts the call p as a task made by caller, under a new
// ID, unless srvMaxTasks run (or the server stops): see srvTasks.start.
// With reserve, the engine reserves the ID in the store before the call
// runs; without, the ID is the engine's own, reserved by srvReserveLate
// if the call becomes a task. ta, when not nil, carries the questions
// the task's tool puts to its client (era_ask_task.go).
func (s *Server) srvLaunchTask(r *http.Request, p *mcp.CallToolParamsRaw, caller wield.Caller, reserve bool, ta *srvTaskAsk) (*srvTask, string, bool) {
	id := ""
	if reserve {
		id = wield.NewID()
	}
	created := srvTaskTime(time.Now())
	task, started := s.tasks.start(r.Context(), s.sessions.client(r), func(ctx context.Context) *engine.Pending {
		ctx = context.WithValue(ctx, srvRequestKey{}, &srvRequest{params: p})
		if ta != nil {
			ctx = context.WithValue(ctx, srvEraAskerKey{}, ta.a)
			go ta.serve(ctx)
		}
		caller.Variables = maps.Clone(caller.Variables)
		if caller.Variables == nil {
			caller.Variables = map[string]any{}
		}
		caller.Variables[srvTaskMark] = true
		if owner := srvTaskOwner(ctx); owner != "" {
			caller.Variables[srvTaskOwnerVar] = owner
		}
		// The call's span (when the server traces) lasts as long as
		// the task, not the request that started it.
		ctx, end := s.srvTrace(ctx, nil, p)
		pending := s.eng.Go(ctx, wield.Call{ID: id, Tool: p.Name, Arguments: p.Arguments, Caller: caller, Toolkit: s.srvReach(ctx)})
		if s.opts.Trace != nil {
			go func() {
				<-pending.Done()
				res, err, _ := pending.TryResult()
				end(res, err)
			}()
		}
		return pending
	}, id, created, s.srvTaskListener(), s.reg.Bus())
	if !started {
		return nil, "", false
	}
	if ta != nil {
		task.ask.Store(ta)
	}
	return task, task.p.ID(), true
}

// srvReserveLate reserves the ID of a call that has just become a task
// (past TaskAfter), for every server sharing the store; a call recorded
// meanwhile has its ID taken already, by its record.
func (s *Server) srvReserveLate(ctx context.Context, tool, id string) {
	rs, ok := s.opts.Calls.(wield.CallIDReserver)
	if !ok {
		return
	}
	if err := rs.ReserveCallID(ctx, id); err != nil && !errors.Is(err, wield.ErrCallIDTaken) {
		s.log.Warn("mcp server: reserve the ID of a call become a task", "tool", tool, "task", id, "err", err)
	}
}

// srvTasksFull is the error of a task-required call refused because the
// server runs as many tasks as it takes.
func (s *Server) srvTasksFull(tool string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("tool %q runs only as a task, and this server runs as many tasks as it takes (%d, %d per client), or is stopping: try again once a task has ended", tool, cmp.Or(s.tasks.max, srvMaxTasks), cmp.Or(s.tasks.maxPerClient, srvMaxTasksPerClient))}
}

// srvTaskReserved waits until a task just started may be answered: once a
// tasks/get of it would resolve on any server sharing the store (its ID
// reserved, or the call ended: recorded, or refused before it was
// reserved); then it takes the task's lease. Past srvTaskReady it cancels
// the task and returns the error to answer.
func (s *Server) srvTaskReserved(ctx context.Context, reserver wield.CallIDReservations, tool, id string, task *srvTask) *jsonrpc.Error {
	ready, stop := context.WithTimeout(ctx, srvTaskReady)
	defer stop()
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		if _, err := reserver.CallIDReservedAt(ready, id); err == nil {
			break
		}
		if _, _, done := task.p.TryResult(); done {
			break
		}
		select {
		case <-task.p.Done():
		case <-time.After(wait):
		case <-ready.Done():
			task.cancel(srvTaskCanceled)
			s.log.Error("mcp server: task not reserved in time", "tool", tool, "task", id)
			return srvInternal
		}
	}
	if _, _, done := task.p.TryResult(); !done {
		s.srvHoldLease(ctx, id, task)
	}
	return nil
}

// srvTaskListener is the listener of other servers' cancellations, nil
// when the store carries no notes between servers.
func (s *Server) srvTaskListener() func(context.Context) {
	n, ok := s.opts.Calls.(wield.DecisionNotifier)
	if !ok {
		return nil
	}
	return func(ctx context.Context) { s.tasks.listen(ctx, n, s.log) }
}

// start runs a task unless srvMaxTasks are running or the server stops;
// the task leaves running when its call ends.
func (ts *srvTasks) start(parent context.Context, client string, run func(context.Context) *engine.Pending, id string, created time.Time, listen func(context.Context), bus *wield.Bus) (*srvTask, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.stopped || len(ts.running) >= cmp.Or(ts.max, srvMaxTasks) || ts.byClient[client] >= cmp.Or(ts.maxPerClient, srvMaxTasksPerClient) {
		return nil, false
	}
	if ts.byClient == nil {
		ts.byClient = map[string]int{}
	}
	if ts.stopWatch == nil && bus != nil {
		ts.stopWatch = ts.watchApprovals(bus)
	}
	if ts.stopListen == nil && listen != nil {
		lctx, stop := context.WithCancel(context.Background())
		ts.stopListen = stop
		go listen(lctx)
	}
	if ts.running == nil {
		ts.running = map[string]*srvTask{}
	}
	// The task is no request's: it runs on after the tools/call that
	// started it is answered, until it ends, is canceled, or the server
	// stops (DrainTasks). It keeps the request's values (who asked, for
	// an approval), not its end.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	t := &srvTask{client: client, owner: srvTaskOwner(parent), cancel: cancel, created: created}
	t.p = run(ctx)
	if id == "" {
		id = t.p.ID() // the engine's
	}
	ts.running[id] = t
	ts.byClient[client]++
	ts.wg.Add(1)
	go func() {
		defer ts.wg.Done()
		<-t.p.Done()
		cancel(nil)
		ts.mu.Lock()
		delete(ts.running, id)
		if ts.byClient[client]--; ts.byClient[client] <= 0 {
			delete(ts.byClient, client) // no key left behind per client
		}
		ts.mu.Unlock()
		ts.changed.fire(id)
	}()
	return t, true
}

// watchApprovals follows the approvals the tasks running here ask for, on
// the registry's bus, so that tasks/get says which one a task waits for.
// Its filter only looks a task up: the publisher is never held.
func (ts *srvTasks) watchApprovals(bus *wield.Bus) (stop func()) {
	return bus.Listen(func(e *wield.Event) bool {
		return (e.Type == wield.EventPermissionRequested || e.Type == wield.EventPermissionDecided) && e.ApprovalID != "" && ts.local(e.CallID) != nil
	}, func(e wield.Event) {
		t := ts.local(e.CallID)
		if t == nil {
			return
		}
		if e.Type == wield.EventPermissionRequested {
			id := e.ApprovalID
			t.approval.Store(&id)
		} else {
			t.approval.Store(nil)
		}
		ts.changed.fire(e.CallID)
	})
}

// local is the task of that ID running here, or nil.
func (ts *srvTasks) local(id string) *srvTask {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.running[id]
}

// DrainTasks lets the tasks running on this server finish until ctx ends,
// then cancels those left, with ctx's cause (a server that shuts down says
// why in the records), and waits for them to be recorded. No task starts
// after it is called; it returns once none runs.
func (s *Server) DrainTasks(ctx context.Context) {
	ts := &s.tasks
	ts.mu.Lock()
	ts.stopped = true
	ts.mu.Unlock()
	done := make(chan struct{})
	go func() { ts.wg.Wait(); close(done) }()
	defer func() {
		// Called unlocked: the watch's stop may wait for its callback,
		// which looks tasks up under ts.mu.
		ts.mu.Lock()
		stopListen, stopWatch, stopRenew := ts.stopListen, ts.stopWatch, ts.stopRenew
		ts.stopListen, ts.stopWatch, ts.stopRenew = nil, nil, nil
		ts.mu.Unlock()
		if stopRenew != nil {
			stopRenew()
		}
		if stopListen != nil {
			stopListen()
		}
		if stopWatch != nil {
			stopWatch()
		}
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	cause := context.Cause(ctx)
	ts.mu.Lock()
	for _, t := range ts.running {
		t.cancel(cause)
	}
	ts.mu.Unlock()
	<-done
}

// srvCancelTask cancels a task: at once when it runs here (answered once
// it is recorded), else by asking the server that runs it, when the store
// carries notes between servers (PostgreSQL); that note is not kept, so a
// server that does not hear it (its listener reconnecting) runs the task
// to its end. An ended task is left as it is: the extension makes
// cancellation a request the server may decline.
func (s *Server) srvCancelTask(ctx context.Context, v *srvTaskView) {
	if t := s.tasks.local(v.TaskID); t != nil {
		t.cancel(srvTaskCanceled)
		<-t.p.Done() // recorded before the acknowledgement
		return
	}
	if v.Status == "working" {
		s.srvAskOwnerToCancel(ctx, v.TaskID)
	}
}

// srvTaskView is a task as tasks/get (and the answer to tools/call) shows
// it.
type srvTaskView struct {
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	StatusMessage  string              `json:"statusMessage,omitempty"`
	CreatedAt      time.Time           `json:"createdAt"`
	LastUpdatedAt  time.Time           `json:"lastUpdatedAt"`
	TTLMs          *int64              `json:"ttlMs"` // null: kept as long as the call's record
	PollIntervalMs int                 `json:"pollIntervalMs"`
	Result         *mcp.CallToolResult `json:"result,omitempty"`
	Error          *jsonrpc.Error      `json:"error,omitempty"`
	// res is the call's recorded result, nil before it ends (tasks/result
	// of the 2025-11-25 form answers it, whatever the status).
	res *wield.Result
	// InputRequests are the questions an input_required task waits for.
	InputRequests mcp.InputRequestMap `json:"inputRequests,omitempty"`
}

// srvTaskState reads a task: from the call running here, else its record,
// else its reservation (running on another server sharing the store, or
// cut short with its server before it was recorded). An ID none of them
// knows is an invalid-params error, and so is a task another requester
// started (srvTaskOwnerVar) than ctx's. A task running on another server
// and not yet recorded is read by its reservation, and is its owner's by
// the lease its server holds on it (srvReservedFor).
func (s *Server) srvTaskState(ctx context.Context, id string) (*srvTaskView, *jsonrpc.Error) {
	v := &srvTaskView{TaskID: id, PollIntervalMs: srvTaskPollMs}
	owner := srvTaskOwner(ctx)
	if t := s.tasks.local(id); t != nil {
		if !t.cancelableBy(owner) {
			return nil, srvUnknownTask(id)
		}
		res, err, done := t.p.TryResult()
		if !done {
			v.Status, v.CreatedAt, v.LastUpdatedAt = "working", t.created, t.created
			if ta := t.ask.Load(); ta != nil {
				if m := ta.requests(); m != nil {
					v.Status, v.InputRequests = "input_required", m
				}
			}
			if a := t.approval.Load(); a != nil {
				// Not input_required: the extension would have the
				// client answer it (tasks/update), and a person
				// decides wield's approvals.
				v.StatusMessage = "waiting for a person's approval " + *a + " (the console's inbox, `wield approvals`, or POST /v1/approvals/" + *a + "/approve)"
			}
			return v, nil
		}
		v.CreatedAt = t.created
		s.srvTaskEnded(v, res, err)
		return v, nil
	}
	if s.opts.Calls == nil {
		return nil, srvUnknownTask(id)
	}
	rec, err := s.opts.Calls.Call(ctx, id)
	if err == nil && (rec.Call == nil || rec.Call.Caller.Variables[srvTaskMark] != true) {
		// A call that was no task (a REST call, a plain MCP call) is
		// not read through the tasks of a client that learnt its ID.
		return nil, srvUnknownTask(id)
	}
	if err == nil {
		if o, _ := rec.Call.Caller.Variables[srvTaskOwnerVar].(string); o != "" && o != owner {
			return nil, srvUnknownTask(id)
		}
	}
	if err == nil {
		v.CreatedAt = srvTaskTime(rec.QueuedAt)
		s.srvTaskEnded(v, rec.Result, nil)
		return v, nil
	}
	if !errors.Is(err, wield.ErrNotFound) {
		if ctx.Err() == nil { // a request that ended (a listen stream let go) is no failure
			s.log.Error("mcp server: read task", "task", id, "err", err)
		}
		return nil, srvInternal
	}
	if rs, ok := s.opts.Calls.(wield.CallIDReservations); ok {
		at, err := rs.CallIDReservedAt(ctx, id)
		if err == nil {
			v.Status, v.CreatedAt, v.LastUpdatedAt = "working", srvTaskTime(at), srvTaskTime(at)
			mine, err := s.srvReservedFor(ctx, v, owner)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("mcp server: read a task's lease", "task", id, "err", err)
				}
				return nil, srvInternal
			}
			if !mine {
				return nil, srvUnknownTask(id)
			}
			return v, nil
		}
		if !errors.Is(err, wield.ErrNotFound) {
			if ctx.Err() == nil {
				s.log.Error("mcp server: read task", "task", id, "err", err)
			}
			return nil, srvInternal
		}
	}
	return nil, srvUnknownTask(id)
}

// srvTaskTime is a task's time as it shows it: UTC, to the millisecond (a
// task read from the call running here and, later, from its record gives
// the same createdAt but for the rare call that arrives across a
// millisecond's edge).
func srvTaskTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// srvTaskEnded fills v with a call's end: completed with its result
// (isError for a tool's failure, which the model reads), cancelled with
// why, failed only when the system failed or could not run the tool.
func (s *Server) srvTaskEnded(v *srvTaskView, res *wield.Result, err error) {
	v.res = res
	switch {
	case err != nil || res == nil:
		v.Status, v.Error = "failed", srvInternal
		v.LastUpdatedAt = v.CreatedAt
		return
	case res.ErrorType == wield.ErrCanceled:
		v.Status, v.StatusMessage = "cancelled", res.Error
	case res.ErrorType == wield.ErrExecutorNotFound:
		// The server could not run the tool at all (no executor loaded
		// for its entry): a failure of the server's, not of the tool's,
		// which SEP-2663 reports as failed with a JSON-RPC error. Its
		// message is wield's own ("Tool 'x' has no executor loaded").
		v.Status, v.Error = "failed", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: res.Error}
	default:
		v.Status, v.Result = "completed", s.srvResult(res)
	}
	v.LastUpdatedAt = srvTaskTime(res.FinishedAt)
	if v.LastUpdatedAt.IsZero() {
		v.LastUpdatedAt = v.CreatedAt
	}
}

func srvUnknownTask(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown task %q: no call with this ID runs or is recorded", id)}
}

// srvWriteTask answers with a task, its resultType "task" when a
// tools/call made it, "complete" for tasks/get.
func (s *Server) srvWriteTask(w http.ResponseWriter, id json.RawMessage, v *srvTaskView, resultType string) {
	if resultType == "task" && (v.Result != nil || v.Error != nil || v.InputRequests != nil) {
		// A CreateTaskResult is the task alone, even when it has ended
		// already or asks already: its result, error or questions are
		// read with tasks/get (SEP-2663).
		task := *v
		task.Result, task.Error, task.InputRequests = nil, nil, nil
		v = &task
	}
	out, err := jsonenc.Marshal(struct {
		ResultType string   `json:"resultType"`
		Meta       mcp.Meta `json:"_meta"`
		*srvTaskView
	}{resultType, mcp.Meta{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}}, v})
	if err != nil {
		s.log.Error("mcp server: encode task", "task", v.TaskID, "err", err)
		srvWrite(w, nil, id, nil, srvInternal)
		return
	}
	srvWrite(w, nil, id, out, nil)
}

// srvWriteInputRequired answers a task tool's tools/call with the
// questions it asks before its task is made (srvTaskFirst).
func (s *Server) srvWriteInputRequired(w http.ResponseWriter, id json.RawMessage, irs mcp.InputRequestMap) {
	out, err := jsonenc.Marshal(struct {
		ResultType    string              `json:"resultType"`
		Meta          mcp.Meta            `json:"_meta"`
		InputRequests mcp.InputRequestMap `json:"inputRequests"`
	}{"input_required", mcp.Meta{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}}, irs})
	if err != nil {
		s.log.Error("mcp server: encode input_required", "err", err)
		srvWrite(w, nil, id, nil, srvInternal)
		return
	}
	srvWrite(w, nil, id, out, nil)
}

// srvWriteEmpty answers with the empty result of tasks/update and
// tasks/cancel.
func (s *Server) srvWriteEmpty(w http.ResponseWriter, id json.RawMessage) {
	srvWrite(w, nil, id, []byte(`{"resultType":"complete"}`), nil)
}

// srvTaskCancelNote prefixes the task ID in a note of the decision
// notifier ([wield.DecisionNotifier]) that asks the server running the
// task to cancel it: the news approvals travel by between servers
// (PostgreSQL's LISTEN/NOTIFY), carried for tasks too. The approval inbox
// finds no approval of such an ID and ignores it. After the ID, a space
// and the asker's srvTaskOwner: the server running the task cancels it
// only for its owner, as it would a tasks/cancel sent to it (the asking
// server read the task from its reservation, which names no owner).
const srvTaskCancelNote = "wield-task-cancel:"

// srvAskOwnerToCancel asks the server that runs a task to cancel it, when
// the store carries notes between servers; it reports whether it could.
func (s *Server) srvAskOwnerToCancel(ctx context.Context, id string) bool {
	n, ok := s.opts.Calls.(wield.DecisionNotifier)
	if !ok {
		return false
	}
	if err := n.NotifyDecision(ctx, srvTaskCancelNote+id+" "+srvTaskOwner(ctx)); err != nil {
		s.log.Warn("mcp server: ask another server to cancel a task", "task", id, "err", err)
		return false
	}
	return true
}

// listen hears, while tasks run here, the notes of other servers asking
// to cancel one of them (see srvTaskCancelNote), and listens again after a
// pause when the notifier fails. It runs from the first task started until
// the server drains its tasks.
func (ts *srvTasks) listen(ctx context.Context, n wield.DecisionNotifier, log interface{ Warn(string, ...any) }) {
	for ctx.Err() == nil {
		ch, err := n.Decisions(ctx)
		if err != nil {
			log.Warn("mcp server: listen for task cancellations", "err", err)
		} else {
			for note := range ch {
				id, owner, ok := srvReadCancelNote(note)
				if !ok {
					continue
				}
				if t := ts.local(id); t != nil && t.cancelableBy(owner) {
					t.cancel(srvTaskCanceledElsewhere)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// srvReadCancelNote reads a note of srvAskOwnerToCancel: the task's ID and
// the asker's owner digest ("" for none).
func srvReadCancelNote(note string) (id, owner string, ok bool) {
	rest, ok := strings.CutPrefix(note, srvTaskCancelNote)
	if !ok {
		return "", "", false
	}
	id, owner, _ = strings.Cut(rest, " ")
	return id, owner, id != ""
}

// cancelableBy reports whether a request of owner (srvTaskOwner) may read,
// answer or cancel the task: any, for a task started without a requester;
// else its owner's only.
func (t *srvTask) cancelableBy(owner string) bool { return t.owner == "" || t.owner == owner }

// srvTaskCanceledElsewhere is the cause of a task canceled by a tasks/cancel
// sent to another server.
var srvTaskCanceledElsewhere = errors.Join(wield.ErrCallerCanceled, &wield.Error{Type: wield.ErrCanceled, Message: "the client canceled the task (tasks/cancel, on another server)"})
