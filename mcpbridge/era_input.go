package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/internal/safetext"
)

// Approvals in the protocol (Multi Round-Trip Requests of 2026-07-28).
//
// A confirm tool called by a client of the stateless era that declared
// elicitation is not left waiting in the approval inbox: the call goes
// through the engine as any other (validated, permitted, limited), its
// approval is stored pending as the inbox stores it, and the request is
// answered at once with resultType "input_required": an elicitation asking
// the person at the client to approve (the tool and its arguments), and a
// signed requestState (see srvState). The client's retry carries the
// answer (inputResponses) and the state: the approval is decided, as the
// console decides it, and the call runs once under the call ID the first
// request gave it, through the engine's own check of an approval named by a
// call (wield.Call.ApprovalID), which claims it. It is the one durable
// approval of the inbox: approving it from the console, the CLI or REST
// first works too, and the retry then gets the result of that run.

// InputRequiredOptions turn on approvals in the protocol (see
// [ServerOptions].InputRequired).
type InputRequiredOptions struct {
	// Key signs the requestState of input_required results (HMAC-SHA256):
	// at least 32 bytes, kept secret. Servers that share it accept each
	// other's states; see [LoadStateKey].
	Key []byte
	// Approvals is the approval store the inbox keeps its approvals in: a
	// retry decides the approval its state names there.
	Approvals wield.ApprovalStore
	// SelfApproval lets a client that presented an API key answer for the
	// calls of that key (server.self_approval). Without it such a client's
	// confirm calls wait in the inbox for another key's decision, as over
	// REST; a client without a key is the local user and is asked.
	SelfApproval bool
	// TTL bounds how long a requestState is accepted (10 minutes when
	// zero), and never past the approval's own expiry; a tool's question
	// (see [Elicit]) waits as long for its answer.
	TTL time.Duration
	// MaxWaiting bounds the calls whose tool asked its client a question
	// ([Elicit], [Sample]) and waits for the retry with the answer, held
	// in this server's memory: 256 when zero. MaxWaitingPerClient bounds
	// those of one client, as [ServerOptions].ClientKey names it (else
	// its IP address; never its clientInfo name): 16 when zero. A
	// question past either fails in the tool with [ErrTooManyWaiting].
	MaxWaiting          int
	MaxWaitingPerClient int
}

// srvInputKey names the approval's input request in inputRequests and
// inputResponses.
const srvInputKey = "wield_approval"

// srvAnsweredBy marks, in a decision's By, an answer given in the protocol:
// a state whose approval was decided so is spent.
const srvAnsweredBy = " (input_required)"

// srvEraAsk travels in the context of a call of the stateless era whose
// client can be asked: the approver parks the call's approval here rather
// than wait for it (see [srvApprover]).
type srvEraAsk struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	req    *wield.ApprovalRequest
}

type srvEraAskKey struct{}

func srvEraAskFrom(ctx context.Context) *srvEraAsk {
	a, _ := ctx.Value(srvEraAskKey{}).(*srvEraAsk)
	return a
}

// park has durable, an inbox, store req pending and leaves it so: once it
// is stored the call's context ends (a plain cancellation, as of a client
// that left, so the approval stays pending) and the engine parks the call
// unrecorded, to be run when the approval is decided.
func (a *srvEraAsk) park(ctx context.Context, req *wield.ApprovalRequest, durable wield.Approver) (wield.Decision, error) {
	prev := req.Pending
	req.Pending = func() {
		if prev != nil {
			prev()
		}
		a.mu.Lock()
		a.req = req
		a.mu.Unlock()
		a.cancel()
	}
	return durable.Approve(ctx, req)
}

func (a *srvEraAsk) parked() *wield.ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.req
}

// srvEraInput is what a request of the stateless era says about asking:
// whether the client declared form elicitation, and the retry's answer.
type srvEraInput struct {
	canElicit bool
	canSample bool
	canRoots  bool
	responses map[string]json.RawMessage
	state     string
}

// srvCanElicitCaps reports whether capabilities declare form elicitation
// (neither form nor url means form, as for older clients).
func srvCanElicitCaps(e *mcp.ElicitationCapabilities) bool {
	return e != nil && (e.Form != nil || e.URL == nil)
}

// srvEraCall runs a tools/call of the stateless era: as srvCallAs, except
// that a confirm tool whose client can be asked answers input_required, and
// a retry with a requestState decides and runs the approved call. The
// result is complete or input_required (resultType set by the caller).
func (s *Server) srvEraCall(ctx context.Context, ep *srvEndpoint, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw, caller wield.Caller, in srvEraInput) (*mcp.CallToolResult, error) {
	o := s.opts.InputRequired
	who := wield.RequesterFrom(ctx)
	if who == "" {
		who = caller.ID
	}
	needs := &srvEraNeeds{}
	ctx = context.WithValue(ctx, srvEraNeedsKey{}, needs)
	if in.state != "" {
		if o == nil {
			return nil, srvStateError("this server issues no requestState (approvals in the protocol are off): send the call without one")
		}
		return s.srvEraRetry(ctx, ep, ss, p, caller, who, in)
	}
	if err := s.srvEraStaticNeeds(ctx, p.Name, caller, in); err != nil {
		return nil, err
	}
	asks := o != nil && in.canElicit && (wield.RequesterFrom(ctx) == "" || o.SelfApproval)
	talks := s.srvEraTalks(in)
	if !talks {
		res, err := s.srvCallAs(ctx, ep, ss, p, caller)
		if err != nil {
			return nil, err
		}
		if err := needs.refusal(p.Name, res); err != nil {
			return nil, err
		}
		return s.srvResult(res), nil
	}
	// The tool may ask its client (era_ask.go), and a confirm tool's
	// approval may be asked: the call runs apart from the request.
	var ask *srvEraAsk
	res, asked, err := s.srvEraRun(ctx, in, who, p, func(ctx context.Context) (*wield.Result, error) {
		if asks {
			callCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			ask = &srvEraAsk{cancel: cancel}
			ctx = context.WithValue(callCtx, srvEraAskKey{}, ask)
		}
		return s.srvCallAs(ctx, ep, ss, p, caller)
	})
	if asked != nil {
		return asked, nil
	}
	var req *wield.ApprovalRequest
	if ask != nil {
		req = ask.parked()
	}
	if req == nil || err != nil || res.ErrorType != wield.ErrCanceled {
		// Not parked: no approval was asked, or the call failed, or a
		// decision came between the approval's creation and the end of
		// its wait (the call then ran, or was refused, here).
		if err != nil {
			return nil, err
		}
		if err := needs.refusal(p.Name, res); err != nil {
			return nil, err
		}
		return s.srvResult(res), nil
	}
	exp := time.Now().Add(o.ttl())
	if req.ExpiresAt.Before(exp) && !req.ExpiresAt.IsZero() {
		exp = req.ExpiresAt
	}
	st := srvState{V: 1, Approval: req.ID, Call: req.CallID, Tool: p.Name, Digest: engine.Digest(p.Arguments), Who: srvStateWho(who), Exp: exp.UnixMilli()}
	return srvInputRequired(req.Tool, req.Arguments, st.seal(o.Key)), nil
}

func (o *InputRequiredOptions) ttl() time.Duration {
	if o.TTL > 0 {
		return o.TTL
	}
	return 10 * time.Minute
}

// srvInputRequired is the input_required result asking the person to
// approve the call of tool with args.
func srvInputRequired(tool string, args json.RawMessage, state string) *mcp.CallToolResult {
	msg := srvApprovalMessage(&wield.ApprovalRequest{Tool: tool, Arguments: args})
	return &mcp.CallToolResult{
		Meta:    mcp.Meta{},
		Content: []mcp.Content{},
		InputRequests: mcp.InputRequestMap{srvInputKey: &mcp.ElicitParams{
			Mode:            "form",
			Message:         safetext.Text(msg),
			RequestedSchema: srvApprovalSchema,
		}},
		RequestState: state,
	}
}

// srvStateError is the JSON-RPC error of a requestState refused.
func srvStateError(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState refused: " + msg}
}

// srvEraRetry is the retry of a call answered input_required: its state is
// checked against the request (signature, expiry, tool, arguments, caller),
// the answer decides the approval, and the call runs, or is refused, once.
func (s *Server) srvEraRetry(ctx context.Context, ep *srvEndpoint, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw, caller wield.Caller, who string, in srvEraInput) (*mcp.CallToolResult, error) {
	o := s.opts.InputRequired
	st, err := srvStateRead(o.Key, in.state, time.Now())
	if err != nil {
		return nil, srvStateError(err.Error())
	}
	switch {
	case st.Tool != p.Name:
		return nil, srvStateError(fmt.Sprintf("it was issued for tool '%s', not '%s'", st.Tool, p.Name))
	case st.Digest != engine.Digest(p.Arguments):
		return nil, srvStateError("it was issued for other arguments: retry with the arguments of the first request")
	case st.Who != srvStateWho(who):
		return nil, srvStateError("it was issued to another client or key")
	}
	if st.Park != "" {
		return s.srvEraResume(ctx, st, in, in.state)
	}
	a, err := o.Approvals.Approval(ctx, st.Approval)
	if err != nil {
		if errors.Is(err, wield.ErrNotFound) {
			return nil, srvStateError(fmt.Sprintf("approval %s does not exist in this server's store", st.Approval))
		}
		s.log.Error("mcp server: read approval", "approval_id", st.Approval, "err", err)
		return nil, srvInternal
	}
	if a.Status == wield.ApprovalPending {
		d, ok, err := srvEraAnswer(in.responses)
		if err != nil {
			return nil, err
		}
		if !ok {
			// No answer: ask again, with the same state (the spec's
			// advice for a retry missing what was asked).
			return srvInputRequired(a.Tool, a.Arguments, in.state), nil
		}
		d.By = who + srvAnsweredBy
		if _, err := o.Approvals.DecideApproval(ctx, a.ID, a.Digest, d); err != nil {
			if !errors.Is(err, wield.ErrAlreadyDecided) {
				s.log.Error("mcp server: decide approval", "approval_id", a.ID, "err", err)
				return nil, srvInternal
			}
			// Decided meanwhile (the console, another retry): as below.
			if a, err = o.Approvals.Approval(ctx, st.Approval); err != nil {
				s.log.Error("mcp server: read approval", "approval_id", st.Approval, "err", err)
				return nil, srvInternal
			}
		} else {
			s.srvNotifyDecision(ctx, a.ID)
			a = nil // ours: run it
		}
	}
	if a != nil {
		switch {
		case a.Status == wield.ApprovalExpired:
			return nil, srvStateError(fmt.Sprintf("approval %s expired before it was answered: call the tool again", a.ID))
		case a.Decision != nil && strings.HasSuffix(a.Decision.By, srvAnsweredBy):
			return nil, srvStateError(fmt.Sprintf("approval %s was already answered with this state: it is used once; its call's record is %s, or call the tool again", a.ID, ResourceURI(a.CallID, false)))
		}
	}
	// The call runs under the ID the first request gave it, naming its
	// approval: the engine checks it is this call's, claims it (once,
	// among every server sharing the store) and runs it or records the
	// refusal; when another run claimed it first (an approval from the
	// console taken up meanwhile), that run's result is returned.
	if ep.toolset != "" && !s.srvInToolset(ep.toolset, p.Name) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	}
	if t, ok := s.reg.Tool(p.Name); ok && t.EffectivePermission() != wield.PermissionConfirm {
		// The tool no longer needs approval, so the engine would not look
		// at this one: it is claimed here, or a server taking up decided
		// approvals would run the call a second time.
		if c, ok := o.Approvals.(wield.ApprovalClaimer); ok {
			if err := c.ClaimApproval(ctx, st.Approval); errors.Is(err, wield.ErrAlreadyDecided) {
				return nil, srvStateError(fmt.Sprintf("approval %s was already taken up: call the tool again", st.Approval))
			} else if err != nil {
				s.log.Error("mcp server: claim approval", "approval_id", st.Approval, "err", err)
				return nil, srvInternal
			}
		}
	}
	run := func(ctx context.Context) (*wield.Result, error) {
		ctx = context.WithValue(ctx, srvRequestKey{}, &srvRequest{session: ss, params: p})
		ctx, end := s.srvTrace(ctx, ss, p)
		res, err := s.eng.Call(ctx, wield.Call{ID: st.Call, Tool: p.Name, Arguments: p.Arguments, Caller: caller, ApprovalID: st.Approval, Toolkit: s.srvReach(ctx)})
		end(res, err)
		return res, err
	}
	var res *wield.Result
	if in.canElicit || in.canSample || in.canRoots {
		// The approved tool may ask its client in turn (era_ask.go).
		var asked *mcp.CallToolResult
		if res, asked, err = s.srvEraRun(ctx, in, who, p, run); asked != nil {
			return asked, nil
		}
	} else {
		res, err = run(ctx)
	}
	if err != nil {
		s.log.Error("mcp server: call failed", "tool", p.Name, "err", err)
		return nil, srvInternal
	}
	if n, _ := ctx.Value(srvEraNeedsKey{}).(*srvEraNeeds); n != nil {
		if err := n.refusal(p.Name, res); err != nil {
			return nil, err
		}
	}
	return s.srvResult(res), nil
}

// srvNotifyDecision tells other servers sharing the store of a decision, when
// the store carries such news.
func (s *Server) srvNotifyDecision(ctx context.Context, id string) {
	if n, ok := s.opts.InputRequired.Approvals.(wield.DecisionNotifier); ok {
		if err := n.NotifyDecision(ctx, id); err != nil {
			s.log.Warn("mcp server: tell other servers of a decision; they will see it by polling", "approval_id", id, "err", err)
		}
	}
}

// srvEraAnswer reads the person's answer from inputResponses: ok false when
// it is absent; an error when it is not an elicitation result.
func srvEraAnswer(responses map[string]json.RawMessage) (wield.Decision, bool, error) {
	raw, ok := responses[srvInputKey]
	if !ok {
		return wield.Decision{}, false, nil
	}
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return wield.Decision{}, false, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses.%s: not an elicitation result: %v", srvInputKey, err)}
	}
	var d wield.Decision
	switch r.Action {
	case ActionAccept:
		v, isBool := r.Content["approve"].(bool)
		if !isBool {
			return d, false, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses.%s: an accepted answer needs content.approve, true or false", srvInputKey)}
		}
		d.Approved = v
		d.Reason, _ = r.Content["reason"].(string)
	case ActionDecline, ActionCancel:
		d.Reason = "declined in the MCP client"
	default:
		return d, false, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses.%s: action %q is not accept, decline or cancel", srvInputKey, safetext.Line(r.Action))}
	}
	return d, true, nil
}

// srvEraInputOf reads, from a tools/call the go-sdk routes, what the fast
// path reads from the body (see srvEraDecode): the client's name, whether
// it can elicit and the retry's answer, when the request is of the
// stateless era (its session stands for the request alone). ok is false
// for a session of the handshake era.
func srvEraInputOf(req *mcp.CallToolRequest) (in srvEraInput, client string, ok bool) {
	ip := req.Session.InitializeParams()
	if ip == nil || ip.ProtocolVersion < srvStatelessEra {
		return in, "", false
	}
	if ip.ClientInfo != nil {
		client = ip.ClientInfo.Name
	}
	if ip.Capabilities != nil {
		in.canElicit = srvCanElicitCaps(ip.Capabilities.Elicitation)
		in.canSample = ip.Capabilities.Sampling != nil
		in.canRoots = ip.Capabilities.RootsV2 != nil || ip.Capabilities.Roots.ListChanged
	}
	in.state = req.Params.RequestState
	if req.Params.InputResponses != nil {
		in.responses = make(map[string]json.RawMessage, len(req.Params.InputResponses))
		for k, v := range req.Params.InputResponses {
			b, err := json.Marshal(v)
			if err != nil {
				continue // left out: an answer missing is asked again
			}
			in.responses[k] = b
		}
	}
	return in, client, true
}
