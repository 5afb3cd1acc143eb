package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/llm"
)

// ToolInfo is a tool as the API describes it: its definition with the
// permission the engine applies and the timeout in milliseconds.
type ToolInfo struct {
	Name         string             `json:"name"`
	Version      string             `json:"version,omitempty"`
	Description  string             `json:"description"`
	Category     wield.Category     `json:"category,omitempty"`
	Tags         []string           `json:"tags,omitempty"`
	InputSchema  *jsonschema.Schema `json:"input_schema"`
	OutputSchema *jsonschema.Schema `json:"output_schema,omitempty"`
	Annotations  wield.Annotations  `json:"annotations"`
	Permission   wield.Permission   `json:"permission"`
	TimeoutMS    int64              `json:"timeout_ms,omitempty"`
	MaxOutput    int                `json:"max_output,omitempty"` // the tool's own output budget, bytes
	Status       wield.Status       `json:"status"`
	Source       string             `json:"source,omitempty"`
	// Examples are the tool's example arguments.
	Examples []json.RawMessage `json:"examples,omitempty"`
	// AllowedCallers says who may call the tool: direct, program.
	AllowedCallers []string `json:"allowed_callers"`
}

func toolInfo(t *wield.Tool) ToolInfo {
	st := t.Status
	if st == "" {
		st = wield.StatusActive
	}
	return ToolInfo{Name: t.Name, Version: t.Version, Description: t.Description, Category: t.Category,
		Tags: t.Tags, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations,
		Permission: t.EffectivePermission(), TimeoutMS: t.Timeout.Milliseconds(), MaxOutput: t.MaxOutput, Status: st, Source: t.Source,
		Examples: t.Examples, AllowedCallers: t.EffectiveCallers()}
}

// ToolList is the answer of GET /v1/tools without a format.
type ToolList struct {
	Tools []ToolInfo `json:"tools"`
}

// listTools answers GET /v1/tools?category=&tag=&toolset=&agent=&format=:
// the tools the key reaches as a [ToolList], or with a format the export
// document itself (see [ExportTools]).
func (s *Server) listTools(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	sel := ToolSelection{Category: wield.Category(q.Get("category")), Toolset: q.Get("toolset"), Agent: q.Get("agent")}
	for _, t := range q["tag"] {
		for x := range strings.SplitSeq(t, ",") {
			if x = strings.TrimSpace(x); x != "" {
				sel.Tags = append(sel.Tags, x)
			}
		}
	}
	tools, err := SelectTools(s.reg, sel, s.agentNames())
	var ce *ChoiceError
	if errors.As(err, &ce) {
		if k := KeyFrom(r.Context()); ce.Kind == "toolset" && k != nil && k.Scoped() {
			// A scoped key learns only of its own toolsets.
			ce.Choices = slices.DeleteFunc(ce.Choices, func(n string) bool { return !slices.Contains(k.Toolsets, n) })
		}
		return apiError(http.StatusNotFound, CodeNotFound, ce.Error())
	}
	if err != nil {
		return err
	}
	scope := s.scope(r)
	tools = slices.DeleteFunc(tools, func(t *wield.Tool) bool { return !inScope(scope, t.Name) })
	// A tool the policies deny this key is not shown (nor exported) to it.
	// With ?agent=, as that agent (the principal without a key).
	// run_program lists the functions this key's (and agent's) programs
	// would have.
	var kit *wield.Toolkit
	if sel.Agent != "" {
		kit, _ = s.reg.Toolkit(sel.Agent)
	}
	tools = wield.ListFor(r.Context(), s.eng.Policy(), s.reg, wield.Caller{ID: sel.Agent}, s.reach(r, scope, kit), tools)

	f := q.Get("format")
	if f == "" && (q.Has("deferred") || q.Has("load") || q.Has("namespaces")) {
		return apiError(http.StatusBadRequest, CodeBadRequest, "deferred, load and namespaces apply to an export: give a format (anthropic, anthropic-strict, responses or responses-strict)")
	}
	if f == "" {
		out := ToolList{Tools: make([]ToolInfo, len(tools))}
		for i, t := range tools {
			out.Tools[i] = toolInfo(t)
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	opts, err := exportOptions(q)
	if err != nil {
		return err
	}
	if opts.Namespaces != nil {
		sets := s.reg.Toolsets()
		if k := KeyFrom(r.Context()); k != nil && k.Scoped() {
			// A scoped key's tools are grouped in its own toolsets: it
			// learns of no other (a tool in one sorted first went there).
			sets = slices.DeleteFunc(sets, func(ts wield.Toolset) bool { return !slices.Contains(k.Toolsets, ts.Name) })
		}
		opts.Namespaces = llm.NamespacesOf(sets)
	}
	x, err := ExportToolsWith(f, tools, opts)
	var oe *OptionError
	if errors.As(err, &ce) || errors.As(err, &oe) || errors.Is(err, llm.ErrNoDeferredLoading) || errors.Is(err, llm.ErrNoNamespaces) || errors.Is(err, llm.ErrNamespaceName) {
		return apiError(http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	if err != nil {
		return err
	}
	writeExport(w, x)
	return nil
}

// exportOptions reads deferred=true, load=a,b (repeatable) and
// namespaces=true of an export's query; namespaces comes back as an empty
// non-nil list, for the caller to fill with the registry's toolsets.
func exportOptions(q url.Values) (ExportOptions, error) {
	var opts ExportOptions
	for _, k := range []string{"deferred", "namespaces"} {
		v := q.Get(k)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return opts, apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("%s: %q is not true or false", k, v))
		}
		switch {
		case k == "deferred":
			opts.Deferred = b
		case b:
			opts.Namespaces = []llm.Namespace{}
		}
	}
	for _, l := range q["load"] {
		for x := range strings.SplitSeq(l, ",") {
			if x = strings.TrimSpace(x); x != "" {
				opts.Load = append(opts.Load, x)
			}
		}
	}
	return opts, nil
}

// tool finds a tool the request's key reaches.
func (s *Server) tool(r *http.Request, name string) (*wield.Tool, error) {
	scope := s.scope(r) // made once: a scoped key's is a set of its toolsets' tools
	if !inScope(scope, name) {
		return nil, outOfScope(name)
	}
	t, ok := s.reg.Tool(name)
	if ok {
		// As the list shows it, or as absent.
		if l := wield.ListFor(r.Context(), s.eng.Policy(), s.reg, wield.Caller{}, s.reach(r, scope, nil), []*wield.Tool{t}); len(l) == 1 {
			t = l[0]
		} else {
			ok = false
		}
	}
	if !ok {
		return nil, apiError(http.StatusNotFound, CodeNotFound, "no tool '"+name+"'")
	}
	return t, nil
}

func (s *Server) describeTool(w http.ResponseWriter, r *http.Request) error {
	t, err := s.tool(r, r.PathValue("name"))
	if err != nil {
		return err
	}
	if t.Status == wield.StatusHeld {
		// Its definition changed upstream and was not accepted: only that
		// it is held is told, none of the unpinned text.
		writeJSON(w, http.StatusOK, ToolInfo{Name: t.Name, Category: t.Category, Status: t.Status, Source: t.Source})
		return nil
	}
	writeJSON(w, http.StatusOK, toolInfo(t))
	return nil
}

// CallRequest is the body of POST /v1/tools/{name}/call, and one call of a
// batch (with Tool set).
type CallRequest struct {
	// Tool names the tool in a batch; the call endpoint takes it from the path.
	Tool      string          `json:"tool,omitempty"`
	ID        string          `json:"id,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Caller says who calls, for permissions, limits and records.
	Caller         wield.Caller `json:"caller,omitzero"`
	TimeoutMS      int64        `json:"timeout_ms,omitempty"`
	Priority       int          `json:"priority,omitempty"`
	IdempotencyKey string       `json:"idempotency_key,omitempty"`
	// Agent restricts the call to the tools of the agent's toolkit.
	Agent string `json:"agent,omitempty"`
}

// msgCallIDTaken is the answer (409 call_id_taken) to a call whose chosen
// ID another call has: nothing ran, and nothing was recorded.
const msgCallIDTaken = "another call has this id (recorded, running or waiting for approval); the call did not run: choose another id, or leave id out and the server makes one"

// checkCallID refuses a chosen call ID that has the shape of the IDs the
// server makes (wield.NewID): a client that read such an ID from the event
// stream or the approval inbox, of a call still running or waiting for a
// decision, could run another call under it before the first is recorded
// (the engine checks the IDs clients choose against records and
// reservations, and those calls have neither yet).
func checkCallID(id string) error {
	if wield.LooksLikeNewID(id) {
		return apiError(http.StatusBadRequest, CodeBadRequest, "id '"+id+"' has the shape of the IDs the server makes (27 lowercase base32 characters): choose an id of another shape (a prefix will do), or leave it out")
	}
	return nil
}

// maxTimeoutMS bounds a call's timeout_ms: 24 hours. A larger number would
// overflow the duration it becomes, and no call waits that long.
const maxTimeoutMS = int64(24 * time.Hour / time.Millisecond)

// call turns a request into an engine call, checking what the engine does
// not: the key's scope, the agent, and the shape of a chosen ID.
func (s *Server) call(r *http.Request, scope map[string]bool, req CallRequest) (wield.Call, error) {
	if req.Tool == "" {
		return wield.Call{}, apiError(http.StatusBadRequest, CodeBadRequest, "a call needs a tool")
	}
	if !inScope(scope, req.Tool) {
		return wield.Call{}, outOfScope(req.Tool)
	}
	if req.TimeoutMS < 0 || req.TimeoutMS > maxTimeoutMS {
		return wield.Call{}, apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("timeout_ms: %d is not from 0 (the tool's own timeout) to %d (24 h)", req.TimeoutMS, maxTimeoutMS))
	}
	if err := checkCallID(req.ID); err != nil {
		return wield.Call{}, err
	}
	switch req.Caller.Type {
	case "", wield.CallerConversationAgent, wield.CallerDirect:
	case wield.CallerWorkflowNode:
		if err := s.mayBypass(r); err != nil {
			return wield.Call{}, err
		}
	default:
		return wield.Call{}, apiError(http.StatusBadRequest, CodeBadRequest, "caller.type is not conversation_agent, workflow_node or direct")
	}
	c := wield.Call{ID: req.ID, Tool: req.Tool, Arguments: req.Arguments, Caller: req.Caller,
		Timeout: time.Duration(req.TimeoutMS) * time.Millisecond, Priority: req.Priority, IdempotencyKey: req.IdempotencyKey}
	if k := KeyFrom(r.Context()); k != nil && c.IdempotencyKey != "" {
		// An idempotency key is its API key's own: the engine answers a
		// key from the first call that used it, so one shared by every
		// client let another key read the first one's output (and learn
		// which keys it had used).
		c.IdempotencyKey = "key:" + k.ID + "/" + c.IdempotencyKey
	}
	if req.Agent != "" {
		k, ok := s.reg.Toolkit(req.Agent)
		if !ok {
			return wield.Call{}, apiError(http.StatusNotFound, CodeNotFound, "no agent '"+req.Agent+"'")
		}
		c.Toolkit = k
	}
	// The call carries the key's scope, so that calls made on its behalf
	// (run_program's inner calls) stay within it.
	c.Toolkit = s.reach(r, scope, c.Toolkit)
	return c, nil
}

// reach is the toolkit a request's calls are confined to: the key's scope
// (nil for every tool), within kit when kit is not nil.
func (s *Server) reach(r *http.Request, scope map[string]bool, kit *wield.Toolkit) *wield.Toolkit {
	if scope == nil {
		return kit
	}
	label := "this key"
	if k := KeyFrom(r.Context()); k != nil {
		label = "key " + k.ID
	}
	return s.reg.NarrowToolkit(label, slices.Sorted(maps.Keys(scope)), kit)
}

// callTool answers POST /v1/tools/{name}/call with the call's result: 200
// whether the tool succeeded or failed.
func (s *Server) callTool(w http.ResponseWriter, r *http.Request) error {
	var req CallRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	name := toolOf(r)
	if req.Tool != "" && req.Tool != name {
		return apiError(http.StatusBadRequest, CodeBadRequest, "the body names another tool than the path")
	}
	req.Tool = name
	c, err := s.call(r, s.scope(r), req)
	if err != nil {
		return err
	}
	if r.URL.RawQuery != "" {
		dry, err := dryRunOf(r)
		if err != nil {
			return err
		}
		if dry {
			return s.dryRun(w, r, c)
		}
	}
	res, err := s.eng.Call(r.Context(), c)
	if err != nil {
		return err
	}
	// The result's own encoder, called directly, spares encoding/json a
	// second pass over its output; it writes into a buffer kept from
	// answer to answer, as Write copies what it is given.
	bp := answerBufs.Get().(*[]byte)
	b, err := res.AppendJSON((*bp)[:0])
	if err == nil {
		writeBody(w, http.StatusOK, b)
	}
	if cap(b) <= maxPooledAnswer {
		*bp = b[:0]
		answerBufs.Put(bp)
	}
	return err
}

// answerBufs are the buffers results are encoded in for their answers.
var answerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledAnswer bounds the buffers answerBufs keeps: the answer of a
// large output is encoded in one that goes after it.
const maxPooledAnswer = 64 << 10

// dryRunOf reads the dry_run query parameter of a call: true or 1 asks
// for a dry run, false, 0 or none for the call; anything else is a 400.
func dryRunOf(r *http.Request) (bool, error) {
	q := r.URL.Query()
	v, ok := q["dry_run"]
	if !ok {
		return false, nil
	}
	if len(v) != 1 {
		return false, apiError(http.StatusBadRequest, CodeBadRequest, "dry_run is given more than once")
	}
	switch v[0] {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("dry_run=%q: use true or 1 for a dry run, false or 0 (or leave it out) for the call", v[0]))
}

// dryRun answers POST /v1/tools/{name}/call?dry_run=true: what the call
// would do now (see engine.Engine.DryRun), 200 whether it would run or
// not. Who may decide an approval is said as this server decides it.
func (s *Server) dryRun(w http.ResponseWriter, r *http.Request, c wield.Call) error {
	d, err := s.eng.DryRun(r.Context(), c)
	if err != nil {
		return err
	}
	if a := d.Approval; a != nil && a.Deciders != "" && c.ApprovalID == "" && s.keys != nil {
		a.Deciders = "a person with an API key that has the approve right (wield approvals, /v1/approvals, the console)"
		if !s.selfOK && a.RequestedBy != "" {
			a.Deciders += ", other than the key that asked (" + a.RequestedBy + ")"
		}
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// BatchRequest is the body of POST /v1/batch.
type BatchRequest struct {
	Calls []CallRequest `json:"calls"`
	// Mode is "parallel" (the default) or "sequential".
	Mode string `json:"mode,omitempty"`
	// StopOnError, in sequential mode, stops at the first failed call:
	// the results end with it.
	StopOnError bool `json:"stop_on_error,omitempty"`
}

// BatchResponse is the answer of POST /v1/batch: one result per call run,
// in the order of the calls.
type BatchResponse struct {
	Results []*wield.Result `json:"results"`
}

// maxBatch bounds the calls of one batch.
const maxBatch = 256

func (s *Server) batch(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Has("dry_run") {
		// Ignored, it would run calls the client meant only to try.
		return apiError(http.StatusBadRequest, CodeBadRequest, "dry_run is not offered for batches, and no call ran: dry-run each call with POST /v1/tools/{name}/call?dry_run=true")
	}
	var req BatchRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.Calls) == 0 || len(req.Calls) > maxBatch {
		return apiError(http.StatusBadRequest, CodeBadRequest, "a batch holds 1 to 256 calls")
	}
	scope := s.scope(r)
	calls := make([]wield.Call, len(req.Calls))
	for i, cr := range req.Calls {
		c, err := s.call(r, scope, cr)
		if e, ok := err.(*Error); ok && e.Status == http.StatusBadRequest {
			return apiError(e.Status, e.Code, fmt.Sprintf("calls/%d: %s", i, e.Message))
		}
		if err != nil {
			return err
		}
		calls[i] = c
	}
	if err := s.batchIDs(r, calls); err != nil {
		return err
	}
	var out BatchResponse
	switch req.Mode {
	case "", "parallel":
		res, err := s.eng.CallAll(r.Context(), calls)
		if err != nil {
			return err
		}
		out.Results = res
	case "sequential":
		for _, c := range calls {
			res, err := s.eng.Call(r.Context(), c)
			if err != nil {
				return err
			}
			out.Results = append(out.Results, res)
			if !res.OK && req.StopOnError {
				break
			}
		}
	default:
		return apiError(http.StatusBadRequest, CodeBadRequest, "mode is not parallel or sequential")
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// batchIDs refuses, before any call of a batch runs, a batch whose calls
// share a chosen ID or choose one a recorded call has (409 call_id_taken):
// the engine would refuse those calls alone, after the others ran.
func (s *Server) batchIDs(r *http.Request, calls []wield.Call) error {
	seen := map[string]int{}
	for i, c := range calls {
		if c.ID == "" {
			continue
		}
		if j, ok := seen[c.ID]; ok {
			return apiError(http.StatusConflict, CodeCallIDTaken, fmt.Sprintf("calls %d and %d of the batch have the id '%s'; no call ran: give each call an id of its own, or none", j+1, i+1, c.ID))
		}
		seen[c.ID] = i
		if _, err := s.store.Call(r.Context(), c.ID); err == nil {
			return apiError(http.StatusConflict, CodeCallIDTaken, fmt.Sprintf("call %d of the batch has the id '%s', which a recorded call has; no call ran: choose another id, or none", i+1, c.ID))
		} else if !errors.Is(err, wield.ErrNotFound) {
			return err
		}
	}
	return nil
}

// ToolsetList is the answer of GET /v1/toolsets.
type ToolsetList struct {
	Toolsets []wield.Toolset `json:"toolsets"`
}

// visibleToolset narrows a toolset to the tools the policies let the
// request's key see (a tool denied it is not named to it, as it is not
// listed); a scoped key sees only its own toolsets.
func (s *Server) visibleToolset(r *http.Request, ts wield.Toolset) (wield.Toolset, bool) {
	k := KeyFrom(r.Context())
	if k != nil && k.Scoped() && !slices.Contains(k.Toolsets, ts.Name) {
		return ts, false
	}
	if p := s.eng.Policy(); p != nil {
		var tools []*wield.Tool
		for _, n := range ts.Tools {
			if t, ok := s.reg.Tool(n); ok {
				tools = append(tools, t)
			}
		}
		visible := map[string]bool{}
		for _, t := range wield.VisibleTools(r.Context(), p, s.reg, wield.Caller{}, tools) {
			visible[t.Name] = true
		}
		ts.Tools = slices.DeleteFunc(slices.Clone(ts.Tools), func(n string) bool {
			_, registered := s.reg.Tool(n)
			return registered && !visible[n]
		})
	}
	return ts, true
}

func (s *Server) listToolsets(w http.ResponseWriter, r *http.Request) error {
	out := ToolsetList{Toolsets: []wield.Toolset{}}
	for _, ts := range s.reg.Toolsets() {
		if ts, ok := s.visibleToolset(r, ts); ok {
			out.Toolsets = append(out.Toolsets, ts)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getToolset(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	ts, ok := s.reg.Toolset(name)
	if !ok {
		return apiError(http.StatusNotFound, CodeNotFound, "no toolset '"+name+"'")
	}
	if ts, ok = s.visibleToolset(r, ts); !ok {
		return apiError(http.StatusForbidden, CodeForbidden, "this key does not reach toolset '"+name+"'")
	}
	writeJSON(w, http.StatusOK, ts)
	return nil
}

// Agent is an agent's toolkit as the API describes it; the tools are those
// in the key's scope.
type Agent struct {
	Name  string   `json:"name"`
	Tools []string `json:"tools"`
}

// AgentList is the answer of GET /v1/agents.
type AgentList struct {
	Agents []Agent `json:"agents"`
}

func (s *Server) agent(r *http.Request, name string) (Agent, bool) {
	k, ok := s.reg.Toolkit(name)
	if !ok {
		return Agent{}, false
	}
	scope := s.scope(r)
	a := Agent{Name: name, Tools: []string{}}
	var tools []*wield.Tool
	for _, t := range k.Names() {
		if tl, ok := s.reg.Tool(t); ok && inScope(scope, t) {
			tools = append(tools, tl)
		}
	}
	// Nor does an agent's list name a tool the policies hide from the key.
	visible := map[string]bool{}
	for _, tl := range wield.VisibleTools(r.Context(), s.eng.Policy(), s.reg, wield.Caller{ID: name}, tools) {
		visible[tl.Name] = true
	}
	for _, t := range k.Names() {
		if _, registered := s.reg.Tool(t); inScope(scope, t) && (visible[t] || !registered) {
			a.Tools = append(a.Tools, t)
		}
	}
	return a, true
}

func (s *Server) agentNames() []string {
	names := slices.Clone(s.agents)
	// A registry that can list its toolkits is asked too.
	if l, ok := any(s.reg).(interface{ Toolkits() []*wield.Toolkit }); ok {
		for _, k := range l.Toolkits() {
			names = append(names, k.Agent())
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) error {
	out := AgentList{Agents: []Agent{}}
	for _, n := range s.agentNames() {
		if a, ok := s.agent(r, n); ok {
			out.Agents = append(out.Agents, a)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) error {
	a, ok := s.agent(r, r.PathValue("name"))
	if !ok {
		return apiError(http.StatusNotFound, CodeNotFound, "no agent '"+r.PathValue("name")+"'")
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// LimiterMetrics is the answer of GET /v1/limiter: the limiter's counters
// with the mean execution time in milliseconds.
type LimiterMetrics struct {
	Current        int                       `json:"current_concurrent"`
	QueueLength    int                       `json:"queue_length"`
	Acquired       int64                     `json:"total_acquired"`
	Rejected       int64                     `json:"total_rejected"`
	TimedOut       int64                     `json:"total_timeout"`
	Bypassed       int64                     `json:"total_bypassed"`
	AvgExecutionMS float64                   `json:"avg_execution_ms"`
	Limit          int                       `json:"limit"`
	Buckets        map[string]BucketSnapshot `json:"buckets"`
}

// BucketSnapshot is one bucket of [LimiterMetrics], as the limiter reports it.
type BucketSnapshot = limit.BucketMetrics

func (s *Server) limiter(w http.ResponseWriter, r *http.Request) error {
	m := s.eng.Limiter().Metrics()
	out := LimiterMetrics{Current: m.Current, QueueLength: m.QueueLength, Acquired: m.Acquired, Rejected: m.Rejected,
		TimedOut: m.TimedOut, Bypassed: m.Bypassed, AvgExecutionMS: float64(m.AvgExecution) / float64(time.Millisecond),
		Limit: m.Limit, Buckets: m.Buckets}
	if out.Buckets == nil {
		out.Buckets = map[string]BucketSnapshot{} // {} rather than null
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ParseRequest is the body of POST /v1/parse.
type ParseRequest struct {
	Text string `json:"text"`
	// Format is one of llm.Formats; empty means auto.
	Format string `json:"format,omitempty"`
}

// ParseResponse is the answer of POST /v1/parse: the calls found, and what
// was lost when a call was cut off or unreadable.
type ParseResponse struct {
	Calls      []llm.ParsedCall `json:"calls"`
	Incomplete string           `json:"incomplete,omitempty"`
}

func (s *Server) parse(w http.ResponseWriter, r *http.Request) error {
	var req ParseRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Format != "" && !slices.Contains(llm.Formats, llm.Format(req.Format)) {
		return apiError(http.StatusBadRequest, CodeBadRequest, "unknown format '"+req.Format+"'")
	}
	scope := s.scope(r)
	calls, err := llm.Parse(req.Text, &llm.ParseOptions{Format: llm.Format(req.Format), Schema: func(name string) *jsonschema.Schema {
		if !inScope(scope, name) {
			return nil
		}
		if t, ok := s.reg.Tool(name); ok {
			return t.InputSchema
		}
		return nil
	}})
	out := ParseResponse{Calls: calls}
	var inc *llm.IncompleteError
	switch {
	case errors.As(err, &inc):
		out.Incomplete = inc.Lost
	case err != nil:
		// A provider format whose text is not JSON: the text is the client's.
		return apiError(http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	if out.Calls == nil {
		out.Calls = []llm.ParsedCall{}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
