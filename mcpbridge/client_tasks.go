package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
)

// An imported tool that runs as a task on its server is called as any
// other: the wield call starts the task, polls it (tasks/get) at the
// interval the server suggests, bounded to [TaskPollMin, TaskPollMax],
// gets its result, and when the wield call is canceled or times out,
// cancels the task (tasks/cancel). Two forms are spoken:
//
//   - MCP 2025-11-25's tasks: a tool listed with execution.taskSupport
//     "required" or "optional", on a server that declares tasks for
//     tools/call, is called with a task (params.task); the result is read
//     with tasks/result once the task has ended.
//   - The extension io.modelcontextprotocol/tasks of 2026-07-28: a tool
//     whose server refused a plain call with -32021 (missing capability:
//     the extension) is called again, and from then on, with the
//     extension declared in the request; the server may answer with a
//     task (resultType "task"), whose result tasks/get carries.
//
// The go-sdk has no tasks: these requests are made beside its session,
// on the same connection (stdio) or to the same endpoint with the same
// session (HTTP), through the same size limit (MaxResponse). A server
// that asks for input in the middle of a task (status input_required) is
// answered through the importer's [ElicitFunc] when the task's requests
// are elicitations (tasks/update, in the extension); else the call fails
// saying so, and the task is canceled.

// The bounds of polling a task.
const (
	// TaskPollMin and TaskPollMax bound the wait between two tasks/get of
	// a task, whatever pollIntervalMs the server suggests.
	TaskPollMin = 50 * time.Millisecond
	TaskPollMax = 5 * time.Second
	// taskPollDefault is the wait when the server suggests none.
	taskPollDefault = 500 * time.Millisecond
	// taskCancelWait bounds the tasks/cancel sent once the call has ended.
	taskCancelWait = 5 * time.Second
	// taskMaxID bounds a task ID read from a server, in bytes.
	taskMaxID = 256
	// taskMaxInputRounds bounds the input a task may ask for.
	taskMaxInputRounds = 16
	// taskDefaultTTL is the retention asked of a 2025-11-25 task when
	// the call has no deadline.
	taskDefaultTTL = 10 * time.Minute
)

// impTaskInfo is what a session has learnt of its server's tasks.
type impTaskInfo struct {
	mu sync.Mutex
	// core: the server (2025-11-25) declares tasks for tools/call.
	core bool
	// support is each listed tool's execution.taskSupport (2025-11-25),
	// only "optional" and "required", by remote name.
	support map[string]string
	// ext are the tools that asked for the extension (2026-07-28).
	ext map[string]bool
	// max bounds support's and ext's entries.
	max int
}

func newImpTaskInfo(max int) *impTaskInfo {
	return &impTaskInfo{support: map[string]string{}, ext: map[string]bool{}, max: max}
}

// peek reads what a response to initialize or tools/list says of tasks;
// fresh is a listing's first page.
func (ti *impTaskInfo) peek(method string, fresh bool, result json.RawMessage) {
	switch method {
	case "initialize":
		var r struct {
			Capabilities struct {
				Tasks *struct {
					Requests *struct {
						Tools *struct {
							Call json.RawMessage `json:"call"`
						} `json:"tools"`
					} `json:"requests"`
				} `json:"tasks"`
			} `json:"capabilities"`
		}
		if impDecode(result, &r) != nil {
			return
		}
		t := r.Capabilities.Tasks
		ti.mu.Lock()
		ti.core = t != nil && t.Requests != nil && t.Requests.Tools != nil && len(t.Requests.Tools.Call) > 0 && string(t.Requests.Tools.Call) != "null"
		ti.mu.Unlock()
	case "tools/list":
		var r struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution *struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		}
		if impDecode(result, &r) != nil {
			return
		}
		ti.mu.Lock()
		defer ti.mu.Unlock()
		if fresh {
			clear(ti.support)
		}
		for _, t := range r.Tools {
			ts := ""
			if t.Execution != nil {
				ts = t.Execution.TaskSupport
			}
			switch ts {
			case "optional", "required":
				if len(ti.support) < ti.max {
					ti.support[t.Name] = ts
				}
			default:
				delete(ti.support, t.Name)
			}
		}
	}
}

// coreMode is the 2025-11-25 task support of a tool and whether its server
// declares tasks for tools/call.
func (ti *impTaskInfo) coreMode(tool string) (support string, declared bool) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return ti.support[tool], ti.core
}

func (ti *impTaskInfo) extMode(tool string) bool {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return ti.ext[tool]
}

func (ti *impTaskInfo) setExt(tool string) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if len(ti.ext) < ti.max {
		ti.ext[tool] = true
	}
}

// impPeekRequest reads the method of a request body, and whether it asks
// for a listing's first page, when it is one impTaskInfo.peek reads.
func impPeekRequest(body []byte) (method string, fresh bool) {
	var q struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &q) != nil {
		return "", false
	}
	return impPeekMethod(q.Method, q.Params)
}

// impPeekMethod is impPeekRequest of a request already decoded: its params
// are read only for initialize and tools/list (a tools/call's arguments
// are not read at all).
func impPeekMethod(method string, params json.RawMessage) (string, bool) {
	switch method {
	case "initialize", "tools/list":
	default:
		return "", false
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		return "", false
	}
	return method, p.Cursor == ""
}

// impPeekBody is impPeekRequest of an HTTP request's body, read again
// (GetBody): a message's method comes before its params, so a body whose
// head names neither initialize nor tools/list (a tools/call, with its
// arguments) is not read further.
func impPeekBody(r *http.Request) (method string, fresh bool) {
	b, err := r.GetBody()
	if err != nil {
		return "", false
	}
	defer b.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(b, head)
	head = head[:n]
	if !bytes.Contains(head, []byte(`"tools/list"`)) && !bytes.Contains(head, []byte(`"initialize"`)) {
		return "", false
	}
	rest, _ := io.ReadAll(io.LimitReader(b, 64<<10))
	return impPeekRequest(append(head, rest...))
}

// impPeekMessage hands the result of a JSON-RPC response to ti.peek.
func (ti *impTaskInfo) peekMessage(method string, fresh bool, data []byte) {
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if impDecode(data, &m) == nil && len(m.Result) > 0 {
		ti.peek(method, fresh, m.Result)
	}
}

// impSSEPeek hands each event of a stream to peek, as it is read (the
// events are bounded by the impEventLimit it reads from).
type impSSEPeek struct {
	io.ReadCloser
	peek func([]byte)
	line []byte
	data []byte
}

func (p *impSSEPeek) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	for _, c := range b[:n] {
		if c != '\n' {
			p.line = append(p.line, c)
			continue
		}
		line := bytes.TrimSuffix(p.line, []byte("\r"))
		switch {
		case len(line) == 0:
			if len(p.data) > 0 {
				p.peek(p.data)
			}
			p.data = p.data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(p.data) > 0 {
				p.data = append(p.data, '\n')
			}
			p.data = append(p.data, d...)
		}
		p.line = p.line[:0]
	}
	return n, err
}

// impRawCaller makes a request of the server beside the go-sdk's session:
// name is what the Mcp-Name header carries in 2026-07-28 (a tool's name,
// a task's ID), "" for none.
type impRawCaller interface {
	rawCall(ctx context.Context, method, name string, params any) (json.RawMessage, error)
}

// impRawHTTP makes requests of a streamable HTTP server, in its session
// (2025-11-25) or standing alone (2026-07-28).
type impRawHTTP struct {
	hc     *http.Client // the session's: the configured headers, MaxResponse
	url    string
	oauth  auth.OAuthHandler
	cs     atomic.Pointer[mcp.ClientSession]
	relays *impRelays
	elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) // nil without one
	seq    atomic.Uint64
}

func (h *impRawHTTP) rawCall(ctx context.Context, method, name string, params any) (json.RawMessage, error) {
	cs := h.cs.Load()
	if cs == nil {
		return nil, mcp.ErrConnectionClosed
	}
	id := "wield-task-" + strconv.FormatUint(h.seq.Add(1), 10)
	body, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, err
	}
	resp, err := h.post(ctx, cs, body, method, name)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("HTTP %d to %s: %w", resp.StatusCode, method, mcp.ErrSessionMissing)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("HTTP status %d", resp.StatusCode)}
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return h.readStream(ctx, cs, resp.Body, id)
	}
	data, err := io.ReadAll(resp.Body) // bounded by impLimitTransport
	if err != nil {
		return nil, err
	}
	res, ok, err := impRawResponse(data, id)
	if err == nil && !ok {
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the response is not the answer to the request"}
	}
	return res, err
}

// post sends one message of the session's.
func (h *impRawHTTP) post(ctx context.Context, cs *mcp.ClientSession, body []byte, method, name string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if ir := cs.InitializeResult(); ir != nil {
		req.Header.Set("Mcp-Protocol-Version", ir.ProtocolVersion)
		if ir.ProtocolVersion >= srvStatelessEra {
			if method != "" {
				req.Header.Set("Mcp-Method", method)
			}
			if name != "" {
				req.Header.Set("Mcp-Name", name)
			}
		}
	}
	if sid := cs.ID(); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if h.oauth != nil {
		if ts, err := h.oauth.TokenSource(ctx); err == nil && ts != nil {
			if tok, err := ts.Token(); err == nil {
				tok.SetAuthHeader(req)
			}
		}
	}
	return h.hc.Do(req)
}

// readStream reads an event stream until the response to id; the
// progress notices on the way are relayed, anything else is dropped.
func (h *impRawHTTP) readStream(ctx context.Context, cs *mcp.ClientSession, body io.Reader, id string) (json.RawMessage, error) {
	br := bufio.NewReader(body)
	var data []byte
	asked := 0
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// An over-long line: its data is kept whole (the event
			// limit of the transport bounds it).
			for err == bufio.ErrBufferFull {
				data = append(data, line...)
				line, err = br.ReadSlice('\n')
			}
		}
		if err != nil && len(line) == 0 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if len(data) > 0 {
				res, ok, rerr := impRawResponse(data, id)
				if ok || rerr != nil {
					return res, rerr
				}
				if h.onMessage(data) {
					asked++
					h.answer(ctx, cs, data, asked)
				}
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
		}
	}
}

// onMessage relays a progress notice that came on a raw stream, and
// reports whether the message is a request of the server's.
func (h *impRawHTTP) onMessage(data []byte) (request bool) {
	var m struct {
		ID     json.RawMessage                 `json:"id"`
		Method string                          `json:"method"`
		Params *mcp.ProgressNotificationParams `json:"params"`
	}
	if impDecode(data, &m) != nil || m.Method == "" {
		return false
	}
	if h.relays != nil && m.Method == "notifications/progress" && m.Params != nil {
		h.relays.onProgress(m.Params)
	}
	return len(m.ID) > 0 && string(m.ID) != "null"
}

// answer answers a request the server sent on a raw stream (2025-11-25's
// tasks/result carries a task's elicitations so): an elicitation through
// the importer's ElicitFunc, at most taskMaxInputRounds a stream; any other
// request, and one past the bound, with an error.
func (h *impRawHTTP) answer(ctx context.Context, cs *mcp.ClientSession, data []byte, n int) {
	var q struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params *mcp.ElicitParams `json:"params"`
	}
	if impDecode(data, &q) != nil {
		return
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": q.ID}
	var res *mcp.ElicitResult
	var err error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "wield does not answer this request here"}
	if q.Method == "elicitation/create" && q.Params != nil && h.elicit != nil && n <= taskMaxInputRounds {
		res, err = h.elicit(ctx, &mcp.ElicitRequest{Params: q.Params})
	}
	if err != nil {
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) {
			rpc = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "elicitation failed"}
		}
		reply["error"] = rpc
	} else {
		reply["result"] = res
	}
	body, err := json.Marshal(reply)
	if err != nil {
		return
	}
	resp, err := h.post(ctx, cs, body, "", "")
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
}

// impRawResponse reads data as the response to id: ok when it is one,
// its error when the server answered with one.
func impRawResponse(data []byte, id string) (json.RawMessage, bool, error) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := impDecode(data, &m); err != nil {
		return nil, false, nil // not a message this reads; skipped
	}
	var got string
	if impDecode(m.ID, &got) != nil || got != id {
		return nil, false, nil
	}
	if m.Error != nil {
		return nil, true, m.Error
	}
	if len(m.Result) == 0 {
		return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "a response with neither result nor error"}
	}
	return m.Result, true, nil
}

// impTaskView is a task as a server shows it, in either form.
type impTaskView struct {
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	PollIntervalMs *float64                   `json:"pollIntervalMs"` // the extension's
	PollInterval   *float64                   `json:"pollInterval"`   // 2025-11-25's
	Result         json.RawMessage            `json:"result"`         // the extension's, when completed
	Error          *jsonrpc.Error             `json:"error"`          // the extension's, when failed
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`  // the extension's, when input_required
	// ResultType is the extension's "task" when the answer to a
	// tools/call is the task (impTaskAnswer).
	ResultType string `json:"resultType"`
}

// wait is how long to wait before polling again: the server's suggestion,
// within [TaskPollMin, TaskPollMax].
func (v *impTaskView) wait() time.Duration {
	ms := v.PollIntervalMs
	if ms == nil {
		ms = v.PollInterval
	}
	if ms == nil || *ms != *ms { // absent or NaN
		return taskPollDefault
	}
	d := *ms * float64(time.Millisecond)
	switch {
	case d < float64(TaskPollMin):
		return TaskPollMin
	case d > float64(TaskPollMax):
		return TaskPollMax
	}
	return time.Duration(d)
}

var impTaskStatuses = map[string]bool{"working": true, "input_required": true, "completed": true, "failed": true, "cancelled": true}

// check reports what is wrong with a task the server showed, in words for
// the model; want is the ID it must have ("" for a new task).
func (v *impTaskView) check(want string) string {
	switch {
	case v.TaskID == "":
		return "a task without an ID"
	case len(v.TaskID) > taskMaxID:
		return fmt.Sprintf("a task ID of %d bytes (wield reads at most %d)", len(v.TaskID), taskMaxID)
	case strings.IndexFunc(v.TaskID, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0:
		return "a task ID with control characters"
	case want != "" && v.TaskID != want:
		return "a task of another ID than the one asked for"
	case !impTaskStatuses[v.Status]:
		return fmt.Sprintf("a task status %q that MCP does not define", safetext.Clip(v.Status, 32))
	}
	return ""
}

// impTaskCall is one call that runs as a task on its server.
type impTaskCall struct {
	h      *impHandler
	s      *impServer
	sess   *impSession
	raw    impRawCaller
	tool   string
	ext    bool      // the extension's form, else 2025-11-25's
	relay  *impRelay // nil without an MCP client to relay to
	status string    // the last status message relayed
	shown  int
	asked  map[string]bool // input request keys answered
	// questions counts the input requests answered, which
	// taskMaxQuestions bounds.
	questions int
}

// taskMaxQuestions bounds the input requests one task may have answered,
// over all its rounds: a round may hold several, but not thousands.
const taskMaxQuestions = taskMaxInputRounds * 8

// callTask calls the tool as a task and waits for its result.
func (h *impHandler) callTask(ctx context.Context, sess *impSession, params *mcp.CallToolParams, ext bool, relay *impRelay) (json.RawMessage, error) {
	tc := &impTaskCall{h: h, s: h.s, sess: sess, raw: sess.raw, tool: h.remote, ext: ext, relay: relay}
	p := map[string]any{"name": params.Name, "arguments": params.Arguments}
	meta := map[string]any{}
	for k, v := range params.Meta {
		meta[k] = v
	}
	if ext {
		tc.newEraMeta(meta)
	} else {
		ttl := taskDefaultTTL
		if dl, ok := ctx.Deadline(); ok {
			ttl = time.Until(dl) + time.Minute
		}
		p["task"] = map[string]any{"ttl": ttl.Milliseconds()}
	}
	if len(meta) > 0 {
		p["_meta"] = meta
	}
	res, err := tc.raw.rawCall(ctx, "tools/call", params.Name, p)
	if err != nil {
		return nil, h.s.callFailed(ctx, sess, h.remote, err)
	}
	head, v, read := impTaskAnswer(res, ext)
	if !read {
		return nil, tc.bad("a tools/call answer that is not a JSON object", "")
	}
	switch {
	case ext && head.ResultType == "task":
		if v == nil {
			err = errors.New("not a task") // its members did not read as a task's
		}
	case !ext && len(head.Task) > 0 && string(head.Task) != "null":
		v = &impTaskView{}
		err = impDecode(head.Task, v)
	case head.ResultType == "input_required":
		return nil, tc.fail("asked for input before the task began, which wield does not give to calls made as tasks", "")
	default:
		return tc.result(res) // the server chose to answer at once
	}
	if err != nil {
		return nil, tc.bad("a task that does not read as one", "")
	}
	if why := v.check(""); why != "" {
		return nil, tc.bad(why, "")
	}
	return tc.follow(ctx, v)
}

// impTaskHead is what a tools/call answer says of the task it may make.
type impTaskHead struct {
	ResultType string          `json:"resultType"`
	Task       json.RawMessage `json:"task"` // 2025-11-25's
}

// impTaskAnswer reads a tools/call answer made as a task: its head and,
// with the extension (ext), whose answer is the task itself, the task,
// in one decoding; v is nil when the answer's members do not read as a
// task's (then only the head is read, as for 2025-11-25). read is false
// when the answer is not a JSON object.
func impTaskAnswer(res json.RawMessage, ext bool) (head impTaskHead, v *impTaskView, read bool) {
	if ext {
		v = &impTaskView{}
		if impDecode(res, v) == nil {
			return impTaskHead{ResultType: v.ResultType}, v, true
		}
	}
	if impDecode(res, &head) != nil {
		return head, nil, false
	}
	return head, nil, true
}

// newEraMeta fills the per-request _meta of 2026-07-28, with the
// extension declared.
func (tc *impTaskCall) newEraMeta(meta map[string]any) {
	if ir := tc.sess.cs.InitializeResult(); ir != nil {
		meta[mcp.MetaKeyProtocolVersion] = ir.ProtocolVersion
	}
	meta[mcp.MetaKeyClientInfo] = &mcp.Implementation{Name: "wield", Version: "1"}
	meta[mcp.MetaKeyClientCapabilities] = map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}
}

// taskParams are the params of a tasks/* request.
func (tc *impTaskCall) taskParams(id string, more map[string]any) map[string]any {
	p := map[string]any{"taskId": id}
	for k, v := range more {
		p[k] = v
	}
	if tc.ext {
		meta := map[string]any{}
		tc.newEraMeta(meta)
		p["_meta"] = meta
	}
	return p
}

// follow polls the task until it ends, and cancels it when ctx ends
// first.
func (tc *impTaskCall) follow(ctx context.Context, v *impTaskView) (json.RawMessage, error) {
	id := v.TaskID
	timer := time.NewTimer(0)
	defer timer.Stop()
	fetched := false // v came from tasks/get, not from the call that made the task
	for rounds := 0; ; {
		tc.relayStatus(v)
		wait := v.wait()
		switch v.Status {
		case "completed", "failed":
			if tc.ext {
				if v.Status == "failed" {
					msg := "the task failed"
					if v.Error != nil && v.Error.Message != "" {
						msg = v.Error.Message
					}
					return nil, tc.fail("failed the task: "+safetext.Clip(msg, relayMessage), "")
				}
				if len(v.Result) == 0 || string(v.Result) == "null" {
					if !fetched {
						// The answer that makes a task carries no result,
						// even when the tool is done (SEP-2663): tasks/get
						// has it.
						wait = 0
						break
					}
					return nil, tc.bad("a completed task without its result", "")
				}
				return tc.result(v.Result)
			}
			return tc.payload(ctx, id)
		case "cancelled":
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			msg := "cancelled the task"
			if v.StatusMessage != "" {
				msg += ": " + safetext.Clip(v.StatusMessage, relayMessage)
			}
			return nil, tc.fail(msg, "")
		case "input_required":
			rounds++
			if rounds > taskMaxInputRounds {
				return nil, tc.fail(fmt.Sprintf("asked for input more than %d times during one task", taskMaxInputRounds), id)
			}
			if !tc.ext {
				// 2025-11-25: tasks/result carries the server's requests,
				// answered as a call's (the go-sdk's handler over stdio,
				// impRawHTTP.answer over HTTP), and blocks until the end.
				if tc.s.im.opts.Elicit == nil {
					return nil, tc.fail("asked a person for input in the middle of the task, and this wield has no one to ask; the task was canceled", id)
				}
				return tc.payload(ctx, id)
			}
			if err := tc.answer(ctx, id, v.InputRequests); err != nil {
				return nil, err
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			tc.cancel(ctx, id)
			return nil, ctx.Err()
		case <-timer.C:
		}
		res, err := tc.raw.rawCall(ctx, "tasks/get", id, tc.taskParams(id, nil))
		if err != nil {
			if ctx.Err() != nil {
				tc.cancel(ctx, id)
				return nil, ctx.Err()
			}
			tc.cancel(ctx, id)
			return nil, tc.s.callFailed(ctx, tc.sess, tc.tool, err)
		}
		var next impTaskView
		if impDecode(res, &next) != nil {
			return nil, tc.bad("a tasks/get answer that does not read as a task", id)
		}
		if why := next.check(id); why != "" {
			return nil, tc.bad(why, id)
		}
		*v = next
		fetched = true
	}
}

// payload reads an ended task's result with tasks/result (2025-11-25).
func (tc *impTaskCall) payload(ctx context.Context, id string) (json.RawMessage, error) {
	res, err := tc.raw.rawCall(ctx, "tasks/result", id, tc.taskParams(id, nil))
	if err != nil {
		if ctx.Err() != nil {
			tc.cancel(ctx, id)
		}
		return nil, tc.s.callFailed(ctx, tc.sess, tc.tool, err)
	}
	return tc.result(res)
}

// result converts a tool's result as any call's.
func (tc *impTaskCall) result(raw json.RawMessage) (json.RawMessage, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, tc.bad("a tool result that does not read as one", "")
	}
	return tc.h.result(&res)
}

// answer gives the task the input it asks for (tasks/update): an
// elicitation is answered by the importer's ElicitFunc; any other request,
// or an elicitation without an ElicitFunc, fails the call.
func (tc *impTaskCall) answer(ctx context.Context, id string, reqs map[string]json.RawMessage) error {
	elicit := tc.s.impElicitHandler()
	responses := map[string]any{}
	for key, raw := range reqs {
		if tc.asked[key] {
			continue // answered already: the server has not seen it yet
		}
		var q struct {
			Method string            `json:"method"`
			Params *mcp.ElicitParams `json:"params"`
		}
		if impDecode(raw, &q) != nil || q.Method != "elicitation/create" || q.Params == nil {
			return tc.fail(fmt.Sprintf("asked for input wield cannot give (%s) in the middle of the task; the task was canceled", safetext.Clip(q.Method, 64)), id)
		}
		if elicit == nil {
			return tc.fail("asked a person for input in the middle of the task, and this wield has no one to ask; the task was canceled", id)
		}
		if tc.questions++; tc.questions > taskMaxQuestions {
			return tc.fail(fmt.Sprintf("asked for more than %d inputs during one task; the task was canceled", taskMaxQuestions), id)
		}
		res, err := elicit(ctx, &mcp.ElicitRequest{Params: q.Params})
		if err != nil {
			if ctx.Err() != nil {
				tc.cancel(ctx, id)
				return ctx.Err()
			}
			return tc.fail("asked for input that could not be given; the task was canceled", id)
		}
		responses[key] = res
		if tc.asked == nil {
			tc.asked = map[string]bool{}
		}
		tc.asked[key] = true // at most taskMaxQuestions
	}
	if len(responses) == 0 {
		return nil
	}
	if _, err := tc.raw.rawCall(ctx, "tasks/update", id, tc.taskParams(id, map[string]any{"inputResponses": responses})); err != nil {
		if ctx.Err() != nil {
			tc.cancel(ctx, id)
			return ctx.Err()
		}
		tc.cancel(ctx, id)
		return tc.s.callFailed(ctx, tc.sess, tc.tool, err)
	}
	return nil
}

// relayStatus passes a new status message on to the call's MCP client as
// a progress notice.
func (tc *impTaskCall) relayStatus(v *impTaskView) {
	r := tc.relay
	if r == nil || !r.progress || v.StatusMessage == "" || v.StatusMessage == tc.status {
		return
	}
	tc.status = v.StatusMessage
	tc.shown++
	r.mu.Lock()
	r.newest = &mcp.ProgressNotificationParams{Progress: float64(tc.shown), Message: safetext.Clip(v.StatusMessage, relayMessage)}
	r.mu.Unlock()
	r.poke()
}

// cancel asks the server to cancel the task, once the call is over: with
// a context of its own, bounded, that keeps ctx's values (trace).
func (tc *impTaskCall) cancel(ctx context.Context, id string) {
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), taskCancelWait)
	defer stop()
	if _, err := tc.raw.rawCall(cctx, "tasks/cancel", id, tc.taskParams(id, nil)); err != nil {
		tc.s.im.log.Warn("mcp task not canceled", "server", tc.s.cfg.Name, "tool", tc.tool, "task", id, "error", err)
	}
}

// fail is a tool failure the model reads; a task still running (id) is
// canceled.
func (tc *impTaskCall) fail(what, id string) error {
	if id != "" {
		tc.cancel(context.Background(), id)
	}
	return &wield.Error{Type: wield.ErrExecution,
		Message: fmt.Sprintf("MCP server %q %s (tool %q)", tc.s.cfg.Name, what, tc.tool)}
}

// bad is a task answer wield cannot read: the server misbehaves.
func (tc *impTaskCall) bad(what, id string) error {
	tc.s.im.log.Warn("mcp server answered a task wield cannot read", "server", tc.s.cfg.Name, "tool", tc.tool, "problem", what)
	if id != "" {
		tc.cancel(context.Background(), id)
	}
	return &wield.Error{Type: wield.ErrExecution,
		Message: fmt.Sprintf("MCP server %q answered the call of %q as a task with %s, which wield cannot read; the call did not complete. The server is misbehaving: calling it again is unlikely to help", tc.s.cfg.Name, tc.tool, what)}
}

// impWantsExtension reports whether err is the -32021 of a server that
// runs a tool only as a task of the extension.
func impWantsExtension(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == CodeMissingCapability &&
		(bytes.Contains(rpc.Data, []byte(TasksExtension)) || strings.Contains(rpc.Message, TasksExtension))
}

// impRawStdio makes requests on a stdio server's connection, beside the
// go-sdk's: their responses are taken out of what the connection reads
// before the go-sdk sees it.
type impRawStdio struct {
	conn    *impFrameConn
	seq     atomic.Uint64
	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Response
	peeks   map[any]impPeek // initialize and tools/list requests, by ID
}

type impPeek struct {
	method string
	fresh  bool
}

// impMaxPeeks bounds the requests remembered for peeking.
const impMaxPeeks = 64

func (r *impRawStdio) rawCall(ctx context.Context, method, _ string, params any) (json.RawMessage, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	key := "wield-task-" + strconv.FormatUint(r.seq.Add(1), 10)
	id, _ := jsonrpc.MakeID(key)
	ch := make(chan *jsonrpc.Response, 1)
	r.mu.Lock()
	r.pending[key] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.pending, key)
		r.mu.Unlock()
	}()
	if err := r.conn.Connection.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: p}); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-r.conn.dead:
		return nil, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// wrote remembers a request whose response is peeked.
func (r *impRawStdio) wrote(m jsonrpc.Message) {
	q, ok := m.(*jsonrpc.Request)
	if !ok || !q.ID.IsValid() {
		return
	}
	method, fresh := impPeekMethod(q.Method, q.Params) // decoded: not encoded to be read again
	if method == "" {
		return
	}
	r.mu.Lock()
	if len(r.peeks) >= impMaxPeeks {
		clear(r.peeks) // requests never answered: the newest matters
	}
	r.peeks[q.ID.Raw()] = impPeek{method, fresh}
	r.mu.Unlock()
}

// read takes a response to a raw request (true: the go-sdk does not see
// it) and peeks at the responses to initialize and tools/list.
func (r *impRawStdio) read(m jsonrpc.Message, info *impTaskInfo) bool {
	resp, ok := m.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if key, ok := resp.ID.Raw().(string); ok && strings.HasPrefix(key, "wield-task-") {
		if ch := r.pending[key]; ch != nil {
			ch <- resp
			delete(r.pending, key)
		}
		return true // a late answer of a raw request is dropped too
	}
	if pk, ok := r.peeks[resp.ID.Raw()]; ok {
		delete(r.peeks, resp.ID.Raw())
		if resp.Error == nil {
			info.peek(pk.method, pk.fresh, resp.Result)
		}
	}
	return false
}

// impDecode reads what a server sent about its tasks as encoding/json/v2
// does: member names matched exactly, a name given twice and invalid
// UTF-8 refused (so {"status":"working","Status":"completed"} cannot mean
// one thing here and another to a proxy), unknown members ignored (a
// task has more than wield reads).
func impDecode(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v)
}
