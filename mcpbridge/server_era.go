package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsondec"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// MCP has two eras, and a [Server] serves both on every endpoint, choosing
// per request:
//
//   - the handshake era (2025-11-25 and older): initialize opens a session
//     (Mcp-Session-Id), whose requests the fast path answers or the go-sdk's
//     stateful handler routes, and in which wield can ask the client
//     things in the middle of a call (elicitation, sampling);
//   - the stateless era (2026-07-28): no initialize and no session; every
//     request names its protocol version in the Mcp-Protocol-Version header
//     and in _meta, with the client's name and capabilities beside it, and
//     server/discover says what the server offers.
//
// A request of the stateless era goes to a stateless go-sdk handler over the
// same mcp.Server, so the same tools (registered with the SDK, run by the
// engine), resources and prompts answer it. The go-sdk tells the eras apart
// by the header too, and its stateful handler refuses the new one, which is
// why the route is chosen before it.

// srvStatelessEra is the first protocol revision without sessions.
const srvStatelessEra = srvNoAskVersion

// srvIsStatelessEra reports whether a request speaks 2026-07-28 or later: its
// Mcp-Protocol-Version header says so. A revision the server does not
// offer is routed there too, where the go-sdk answers it with the error
// the revision defines (-32022, naming the versions offered).
func srvIsStatelessEra(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= srvStatelessEra
}

// srvOffersStatelessEra reports whether the server offers a revision of the
// stateless era at all: when ProtocolVersions leave them all out, such a
// request goes where it went before, to the handshake era's handler, which
// refuses it.
func (s *Server) srvOffersStatelessEra() bool {
	return slices.ContainsFunc(s.opts.ProtocolVersions, func(v string) bool { return v >= srvStatelessEra })
}

// srvStatelessHandler is the go-sdk's stateless streamable handler of an
// endpoint's mcp.Server: each request stands alone, on a session the SDK
// makes for it and closes when it is answered.
func (s *Server) srvStatelessHandler(ep *srvEndpoint) *mcp.StreamableHTTPHandler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ep.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        s.opts.JSONResponse,
		Logger:              srvQuiet(s.log),
		MaxRequestBodyBytes: s.opts.MaxBody,
		// A request of this era is the whole call: a client cancels it
		// by ending the request (there is no session for a
		// notifications/cancelled to reach it through), which cancels
		// the call on purpose, as that notification does in a session
		// (a confirm tool's approval is then withdrawn; see
		// srvCancelOnPurpose).
		PropagateRequestCancellation: true,
		DisableLocalhostProtection:   true, // Handler's guard checks Host
	})
}

// srvServeStatelessEra serves a request of the stateless era. A
// subscriptions/listen stream stays open as long as the client wants it,
// so it takes a place among the sessions of its client (see
// [ServerOptions].MaxSessions): a client cannot hold more streams than it
// could sessions.
func (s *Server) srvServeStatelessEra(w http.ResponseWriter, r *http.Request, ep *srvEndpoint) {
	if r.Method == http.MethodPost && srvIsListen(r) {
		ss := s.sessions
		client := ss.client(r)
		if ok, bound := ss.reserve(client); !ok {
			s.srvRefuseSession(w, r, bound)
			return
		}
		defer ss.release(client)
		// Close ends the stream, as it ends sessions.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(ss.ended, cancel)()
		r = r.WithContext(ctx)
	}
	if !s.opts.DisableFastPath && r.Method == http.MethodPost && s.srvEraFast(w, r, ep) {
		return
	}
	r.Header.Set(srvClientHeader, s.sessions.client(r))
	ep.stateless.ServeHTTP(w, r)
}

// srvIsListen reports whether a request is a subscriptions/listen, by the
// Mcp-Method header the revision requires (the go-sdk checks it matches
// the body).
func srvIsListen(r *http.Request) bool {
	return r.Header.Get("Mcp-Method") == "subscriptions/listen"
}

// srvSteerToHandshake answers the server/discover of a client that declared
// elicitation or sampling with the error of a revision not offered
// (-32022), naming the handshake-era revisions only, when the server
// offers any and cannot ask in the protocol: such a client then
// initialises a session, in which a tool's own Elicit and Sample reach it
// mid-call. A server with InputRequired asks a client of the stateless era
// in the protocol, for a confirm tool's approval (era_input.go) and for a
// tool's own Elicit and Sample (era_ask.go), so it steers no one. A client
// that declared neither is served the stateless era. It reports whether
// it answered.
func (s *Server) srvSteerToHandshake(req mcp.Request) (*jsonrpc.Error, bool) {
	dr, ok := req.(*mcp.ServerRequest[*mcp.DiscoverParams])
	if !ok || s.opts.InputRequired != nil {
		return nil, false
	}
	caps := dr.ClientCapabilities()
	if caps == nil || (caps.Elicitation == nil && caps.Sampling == nil) {
		return nil, false
	}
	legacy := slices.DeleteFunc(slices.Clone(s.opts.ProtocolVersions), func(v string) bool { return v >= srvStatelessEra })
	if len(legacy) == 0 {
		return nil, false // nowhere to steer to: the stateless era it is
	}
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: legacy, Requested: dr.ProtocolVersion()})
	return &jsonrpc.Error{
		Code:    mcp.CodeUnsupportedProtocolVersion,
		Message: "this server asks clients that can elicit or sample through the initialize handshake: initialize with one of the supported versions",
		Data:    data,
	}, true
}

// srvEraMiddleware is the receiving middleware of the stateless era's
// requests: server/discover steers some clients to the handshake (see
// srvSteerToHandshake).
func (s *Server) srvEraMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "server/discover" {
			if err, ok := s.srvSteerToHandshake(req); ok {
				return nil, err
			}
		}
		return next(ctx, method, req)
	}
}

// srvBindsHeaders reports whether a tool's input schema binds arguments
// to Mcp-Param-* headers (x-mcp-header), which the go-sdk checks against
// the body: such calls go to it.
func srvBindsHeaders(t *mcp.Tool) bool {
	b, err := json.Marshal(t.InputSchema)
	return err != nil || bytes.Contains(b, []byte("x-mcp-header"))
}

// srvEraRequest is a request of the stateless era as its fast path reads
// it.
type srvEraRequest struct {
	srvFastRequest
	client string // the name in _meta's clientInfo, or ""
	input  srvEraInput
	// extensions are the client's capabilities' extensions, as written
	// (an object), read only by the tasks path (srvTaskCallOfEra).
	extensions json.RawMessage
}

// srvEraMessage is a request of the stateless era as srvEraDecode reads
// it, strictly (jsondec.DecodeStrict): the members JSON-RPC defines, the
// params of tools/call and tools/list, and in _meta the members the fast
// path answers with. Any other key, in any letter case, fails the decoding,
// and the request goes to the go-sdk. What only some requests carry stays
// raw, read when it is there.
type srvEraMessage struct {
	JSONRPC json.RawMessage `json:"jsonrpc"` // "2.0", as written
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name           string          `json:"name"`
		Arguments      json.RawMessage `json:"arguments"`
		Meta           *srvEraMeta     `json:"_meta"`
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage `json:"requestState"`
	} `json:"params"`
}

// srvEraMeta is the _meta of a request of the stateless era the fast path
// answers: any other member (a progress token, a log level) needs the
// go-sdk, which can send notifications before the result.
type srvEraMeta struct {
	ProtocolVersion    string                     `json:"io.modelcontextprotocol/protocolVersion"`
	ClientInfo         json.RawMessage            `json:"io.modelcontextprotocol/clientInfo"`
	ClientCapabilities map[string]json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
}

// srvEraDecode reads a tools/call or tools/list of the stateless era the
// fast path can answer: keys matched exactly, none it does not know, and in
// _meta the protocol version (version, as the header says), the client's
// capabilities (an object of objects) and optionally its name. Anything
// else goes to the go-sdk, which has the last word on what is valid.
//
// It reads the message once, strictly and without encoding/json's
// reflection, and the rare members (clientInfo, elicitation,
// inputResponses, requestState) as encoding/json reads them
// (jsondec.Decode): FuzzServerEraDecodeSame holds it to the
// encoding/json reading it replaced, which took maps of every level.
func srvEraDecode(body []byte, version string) (srvEraRequest, bool) {
	var req srvEraRequest
	var m srvEraMessage
	if jsondec.DecodeStrict(body, &m) != nil || string(m.JSONRPC) != `"2.0"` || m.Method == "" || !srvPlainID(m.ID) {
		return req, false
	}
	p, meta := &m.Params, m.Params.Meta
	if meta == nil || meta.ProtocolVersion != version || meta.ClientCapabilities == nil {
		return req, false
	}
	req.ID, req.Method = m.ID, m.Method
	req.Params.Name, req.Params.Arguments = p.Name, p.Arguments
	if p.InputResponses != nil {
		if jsondec.Decode(p.InputResponses, &req.input.responses) != nil || req.input.responses == nil {
			return req, false // null, or not an object
		}
	}
	if p.RequestState != nil {
		if jsondec.Decode(p.RequestState, &req.input.state) != nil || req.input.state == "" {
			return req, false // null, empty, or not a string
		}
	}
	caps := meta.ClientCapabilities
	for _, c := range caps {
		if len(c) == 0 || c[0] != '{' {
			return req, false
		}
	}
	if e, ok := caps["elicitation"]; ok {
		var ec mcp.ElicitationCapabilities
		if jsondec.Decode(e, &ec) != nil {
			return req, false
		}
		req.input.canElicit = srvCanElicitCaps(&ec)
	}
	_, req.input.canSample = caps["sampling"]
	_, req.input.canRoots = caps["roots"]
	req.extensions = caps["extensions"]
	if ci := meta.ClientInfo; ci != nil {
		var info mcp.Implementation
		if string(ci) == "null" || jsondec.Decode(ci, &info) != nil {
			return req, false
		}
		req.client = info.Name
	}
	return req, true
}

// srvEraTalks reports whether a call of the stateless era may talk with
// its client, which in says what it can do: ask it for a confirm tool's
// approval, or for a tool's own Elicit and Sample (srvEraCall).
func (s *Server) srvEraTalks(in srvEraInput) bool {
	return s.opts.InputRequired != nil && (in.canElicit || in.canSample || in.canRoots)
}

// srvEraFast answers the plain tools/call and tools/list of the stateless
// era itself, as the fast path answers a session's (see [Server.Handler]),
// and reports whether it did; when it did not, r is as it came. The go-sdk
// would make a session for the request, decode it several times and
// answer in an event stream: for the same answer, as JSON, a fraction of
// the CPU and no session (BenchmarkServerEraCall).
func (s *Server) srvEraFast(w http.ResponseWriter, r *http.Request, ep *srvEndpoint) bool {
	h := r.Header
	if ct := h.Get("Content-Type"); ct != "application/json" {
		if base, _, err := mime.ParseMediaType(ct); err != nil || base != "application/json" {
			return false
		}
	}
	pv := h.Get("Mcp-Protocol-Version")
	if !slices.Contains(s.opts.ProtocolVersions, pv) || !srvAccepts(h.Values("Accept")) {
		return false
	}
	for k := range h {
		if strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	var req srvEraRequest
	if checked, ok := r.Body.(*srvBody); ok && checked.more == nil {
		// Read whole by srvCheckEnvelope, and decoded there when it
		// could be (for the version in the header, as here).
		if !checked.era || len(checked.body) > srvFastMax {
			return false
		}
		req = checked.eraReq
	} else {
		body, err := io.ReadAll(io.LimitReader(r.Body, srvFastMax+1))
		if err != nil || len(body) > srvFastMax {
			r.Body = newSrvBody(body, r.Body, true)
			return false
		}
		r.Body = newSrvBody(body, r.Body, false)
		if req, ok = srvEraDecode(body, pv); !ok {
			return false
		}
	}
	if h.Get("Mcp-Method") != req.Method {
		return false
	}
	switch req.Method {
	case "tools/list":
		info := &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}
		if req.Params.Name != "" || req.Params.Arguments != nil || req.input.responses != nil || req.input.state != "" || s.eng.Policy() != nil || wield.ScopeFrom(r.Context()) != nil {
			return false // a policy's list is the requester's own (srvPolicyList)
		}
		s.srvSync(ep)
		list := ep.srvList(s.srvPrivate(r.Context()))
		if len(list) < 2 || list[0] != '{' || list[1] == '}' {
			return false
		}
		head, err := json.Marshal(mcp.Meta{mcp.MetaKeyServerInfo: info})
		if err != nil {
			return false
		}
		out := make([]byte, 0, len(list)+len(head)+64)
		out = append(out, `{"resultType":"complete","_meta":`...)
		out = append(out, head...)
		out = append(out, ',')
		out = append(out, list[1:]...)
		srvWrite(w, nil, req.ID, out, nil)
		return true
	case "tools/call":
		if h.Get("Mcp-Name") != req.Params.Name {
			return false
		}
		ep.mu.Lock()
		_, listed := ep.synced[req.Params.Name]
		headed := ep.headed[req.Params.Name]
		ep.mu.Unlock()
		if !listed || headed {
			return false // the SDK words the error, or checks the headers
		}
		p := &mcp.CallToolParamsRaw{Name: req.Params.Name, Arguments: req.Params.Arguments}
		caller := s.srvCallerNamed(req.client)
		var result *mcp.CallToolResult
		var err error
		if req.input.state == "" && !s.srvEraTalks(req.input) {
			// What srvEraCall does for such a call, written as the
			// handshake era's fast path writes its results, without the
			// SDK's types (the same bytes: TestServerAppendResult).
			// A tool file whose steps need what the client did not
			// declare is refused before it runs, and a Go tool that
			// failed for asking it anyway is refused after (-32021), as
			// srvEraCall does.
			if err = s.srvEraStaticNeeds(r.Context(), p.Name, caller, req.input); err == nil {
				c := newSrvEraCtx(r, p)
				defer c.end()
				var res *wield.Result
				if res, err = s.srvCallIn(c.ctx, ep, nil, &c.params, caller); err == nil {
					if err = c.needs.refusal(p.Name, res); err == nil {
						bp := srvResponseBufs.Get().(*[]byte)
						if out, ok := s.srvAppendResult(srvAppendResponseStart((*bp)[:0], req.ID), res, true); ok {
							srvPutResponse(bp, srvWriteResponse(w, nil, out))
							return true
						}
						srvResponseBufs.Put(bp)
						result = s.srvResult(res)
					}
				}
			}
		} else {
			// The request is the call: a client that ends it cancels the
			// call on purpose, as over the go-sdk's path.
			ctx, stop := srvCancelOnPurpose(r.Context())
			defer stop()
			result, err = s.srvEraCall(context.WithValue(ctx, srvClientKey{}, s.sessions.client(r)), ep, nil, p, caller, req.input)
		}
		if err != nil {
			if srvUnknownToolTold(r, err, p.Name) {
				return false
			}
			var jerr *jsonrpc.Error
			if !errors.As(err, &jerr) {
				jerr = srvInternal
			}
			if jerr.Code == jsonrpc.CodeInvalidParams || jerr.Code == CodeMissingCapability {
				// The revision answers invalid params, and a capability
				// missing, with HTTP 400.
				srvHTTPError(w, http.StatusBadRequest, req.ID, jerr)
				return true
			}
			srvWrite(w, nil, req.ID, nil, jerr)
			return true
		}
		result.Meta[mcp.MetaKeyServerInfo] = &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}
		out, err := jsonenc.Marshal(result)
		if err != nil || len(out) < 2 || out[len(out)-1] != '}' {
			s.log.Error("mcp server: encode result", "tool", p.Name, "err", err)
			srvWrite(w, nil, req.ID, nil, srvInternal)
			return true
		}
		kind := srvComplete
		if result.InputRequests != nil {
			kind = `,"resultType":"input_required"`
		}
		out = append(append(out[:len(out)-1], kind...), '}')
		srvWrite(w, nil, req.ID, out, nil)
		return true
	}
	return false
}

// srvEraCtx is the context of a plain call of the stateless era's fast
// path, made as srvCancelOnPurpose makes it, with the srvRequest that
// srvCallAs would add, its params and the srvEraNeeds the call notes: in
// one allocation, where those were eight. The request is the call: a
// client that ends it cancels the call on purpose, as over the go-sdk's
// path (requestEnded). srvEraCtx itself gives the request's values
// without its cancellation, as context.WithoutCancel does; it is the
// parent of ctx, the call's, and never handed out: its Done is nil, so
// that ctx registers nothing with it, and context.Cause stops at ctx.
type srvEraCtx struct {
	r      *http.Request
	req    srvRequest
	params mcp.CallToolParamsRaw
	needs  srvEraNeeds

	ctx       context.Context
	cancel    context.CancelCauseFunc
	stopAfter func() bool
	stopDL    context.CancelFunc // the request's deadline, when it has one
}

func newSrvEraCtx(r *http.Request, p *mcp.CallToolParamsRaw) *srvEraCtx {
	c := &srvEraCtx{r: r, params: *p}
	c.req.params = &c.params
	var parent context.Context = c
	if dl, ok := r.Context().Deadline(); ok {
		parent, c.stopDL = context.WithDeadline(c, dl)
	}
	c.ctx, c.cancel = context.WithCancelCause(parent)
	c.stopAfter = context.AfterFunc(r.Context(), c.requestEnded)
	return c
}

func (c *srvEraCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *srvEraCtx) Done() <-chan struct{}       { return nil }
func (c *srvEraCtx) Err() error                  { return nil }

func (c *srvEraCtx) Value(key any) any {
	switch key {
	case srvRequestKey{}:
		return &c.req
	case srvEraNeedsKey{}:
		return &c.needs
	}
	return c.r.Context().Value(key)
}

// requestEnded cancels the call as srvCancelOnPurpose does.
func (c *srvEraCtx) requestEnded() {
	cause := context.Cause(c.r.Context())
	if cause == context.Canceled { //nolint:errorlint // exactly the SDK's cancellation by ID, not one that wraps it
		cause = wield.ErrCallerCanceled
	}
	c.cancel(cause)
}

// end releases what c holds once the call is over.
func (c *srvEraCtx) end() {
	c.stopAfter()
	c.cancel(nil)
	if c.stopDL != nil {
		c.stopDL()
	}
}
