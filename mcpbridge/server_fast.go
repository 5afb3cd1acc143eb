package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsondec"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// srvFastMax is the largest request body the fast path reads; larger ones
// go to the SDK.
const srvFastMax = 1 << 20

// srvFastRequest is a JSON-RPC request as the fast path reads it.
type srvFastRequest struct {
	ID     json.RawMessage
	Method string
	Params srvFastParams
}

// srvFastParams are the params of tools/list and tools/call together, as
// the strict check reads them: a key it does not know (or in another
// letter case) fails their decoding, and the message goes to the SDK.
// _meta is read so that a request that carries one (every request of
// protocol 2026-07-28 does) is told apart from a mistake at no extra cost;
// the fast path leaves it to the SDK.
type srvFastParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Cursor    string          `json:"cursor"`
	Meta      json.RawMessage `json:"_meta"`
}

// srvDecode reads a request the fast path can answer: keys matched exactly
// (encoding/json would take "Method" for "method"), none it does not know,
// no _meta, nothing the strict check refuses. Anything else is left to the
// SDK, which has the last word on what is valid.
func srvDecode(body []byte) (srvFastRequest, bool) {
	var id json.RawMessage
	req, ok, err := srvStrictEnvelope(body, &id)
	return req, ok && err == nil
}

// srvEnvelope is a JSON-RPC message as the strict check reads it: the
// members JSON-RPC 2.0 defines, and no others.
type srvEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// srvParamNames are the params of tools/call a key in another letter case
// is refused for: the go-sdk would ignore "Arguments" and call the tool
// without them, not what the client meant.
var srvParamNames = []string{"name", "arguments", "_meta"}

// srvCheckEnvelope refuses a POST whose JSON-RPC envelope is ambiguous,
// before the fast path or the go-sdk reads it, and reports whether it did.
// The envelope is read as strictly as REST bodies and tool arguments
// are: a duplicate key anywhere in the message (params and arguments
// included), invalid UTF-8 or a lone surrogate, a member JSON-RPC does not
// define (a "Method" beside "method" among them), and a tools/call param
// spelled in another letter case are a 400 with a JSON-RPC error
// (-32600, Invalid Request) naming the key. A lenient reader takes the last
// of two "arguments", or ignores "ARGUMENTS": a body would mean one thing
// to wield and another to whatever inspected it first. A body that is not
// JSON at all is left to the go-sdk, which says so as it always has.
func (s *Server) srvCheckEnvelope(w http.ResponseWriter, r *http.Request) bool {
	r.Header.Del(srvRPCIDHeader) // only this server writes it
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	// Read no more than MaxBody: a larger body is refused here (413),
	// unread past that, so nothing holds more, and neither the fast path
	// (which reads up to srvFastMax) nor the go-sdk sees it. A bound in
	// front of this handler (httpapi's MaxBody, through
	// http.MaxBytesReader) ends the read with its own limit.
	limit := s.opts.MaxBody
	body, err := srvReadAll(r.Body, limit+1, r.ContentLength)
	if int64(len(body)) > limit {
		srvTooLarge(w, r, limit)
		return true
	}
	if err != nil {
		if n, ok := srvOverLimit(err); ok {
			srvTooLarge(w, r, n)
			return true
		}
	}
	back := newSrvBody(body, r.Body, false)
	r.Body = back
	if err != nil {
		return false
	}
	// Read to its end: closed now, and given back to the request once it
	// is answered (srvBodyBack), net/http sees a body read whole instead
	// of reading on to find its end (io.CopyN: an io.LimitReader and a
	// buffer from a pool, for every request).
	_ = back.orig.Close()
	back.whole = true
	if srvIsStatelessEra(r) && !s.opts.DisableFastPath {
		// A request of the stateless era its fast path can answer is read
		// as strictly (srvEraDecode), and read once: whatever it accepts
		// passes the check below (FuzzServerEraDecodeSame).
		if era, ok := srvEraDecode(body, r.Header.Get("Mcp-Protocol-Version")); ok {
			back.era, back.eraReq = true, era
			if s.opts.Trace != nil {
				srvNoteRPCID(r, body)
			}
			return false
		}
	}
	var id json.RawMessage
	req, fast, err := srvStrictEnvelope(body, &id)
	if err != nil {
		if !json.Valid(body) {
			return false // not JSON at all: the go-sdk says so
		}
		if !srvPlainID(id) {
			id = json.RawMessage("null")
		}
		srvHTTPError(w, http.StatusBadRequest, id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + err.Error()})
		return true
	}
	if fast {
		back.fast, back.req = true, req
	} else if s.opts.Trace != nil {
		srvNoteRPCID(r, body)
	}
	return false
}

// srvTooLarge answers a request whose body is over limit bytes: 413, with
// a JSON-RPC error (-32600, Invalid Request) that names the limit. Its ID
// is null: the body was not read to its end.
func srvTooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	// The rest of the body is not worth reading: net/http closes the
	// connection rather than read on (HTTP/2 has no such header, and
	// resets the stream instead).
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
	srvHTTPError(w, http.StatusRequestEntityTooLarge, json.RawMessage("null"), &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("the request body is over the limit of %d bytes", limit)})
}

// srvOverLimit reports whether err is that of an http.MaxBytesReader put in
// front of the handler, and its limit. Apart from srvCheckEnvelope, so that
// the target errors.As needs, which escapes, is allocated only on an error.
func srvOverLimit(err error) (int64, bool) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe.Limit, true
	}
	return 0, false
}

// srvReadAll is io.ReadAll of io.LimitReader(r, limit), with its first
// buffer the size of the body when the request says it (and it is no
// larger than srvFastMax): an MCP request of a few hundred bytes no longer
// takes io.ReadAll's 512 bytes, nor a large one its doublings. (The limit
// is kept here, not in an io.LimitedReader, which was an allocation of
// every request.)
func srvReadAll(r io.Reader, limit, size int64) ([]byte, error) {
	n := 512
	if size > 0 && size < srvFastMax {
		n = int(size) + 1 // the read that finds the end needs room
	}
	b := make([]byte, 0, n)
	for {
		p := b[len(b):cap(b)]
		left := limit - int64(len(b))
		if left <= 0 {
			return b, nil // as io.LimitedReader ends: io.EOF
		}
		if int64(len(p)) > left {
			p = p[:left]
		}
		k, err := r.Read(p)
		b = b[:len(b)+k]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// srvStrictEnvelope checks a message, or each message of a batch, and sets
// *id to the ID of the one at fault when it can be read. A single message
// the fast path can answer (tools/list or tools/call, with a plain ID and
// the params it knows) is returned with ok: the check has read all of it,
// strictly, and nothing needs to read the body again.
func srvStrictEnvelope(body []byte, id *json.RawMessage) (req srvFastRequest, ok bool, err error) {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		var msgs []srvEnvelope
		if err := jsondec.DecodeStrict(body, &msgs); err != nil {
			return req, false, err
		}
		for i := range msgs {
			if _, err := srvCheckMessage(&msgs[i], &req.Params, id); err != nil {
				return srvFastRequest{}, false, err
			}
		}
		return srvFastRequest{}, false, nil // a batch goes to the SDK
	}
	// A single message is checked as it is, not as a batch of one: that
	// slice was an allocation of every call, 2026-11-27.
	var m srvEnvelope
	if err := jsondec.DecodeStrict(body, &m); err != nil {
		var loose struct{ ID json.RawMessage }
		if json.Unmarshal(body, &loose) == nil {
			*id = loose.ID
		}
		return req, false, err
	}
	fastParams, err := srvCheckMessage(&m, &req.Params, id)
	if err != nil {
		return srvFastRequest{}, false, err
	}
	if !fastParams || m.JSONRPC != "2.0" || !srvPlainID(m.ID) || m.Result != nil || m.Error != nil || req.Params.Meta != nil {
		return srvFastRequest{}, false, nil
	}
	req.ID, req.Method = m.ID, m.Method
	return req, true, nil
}

// srvCheckMessage reads the params of a tools/call or tools/list into p,
// strictly, and reports whether it could; it refuses params of tools/call
// with a key of srvParamNames in another letter case, and then sets *id to
// the message's.
func srvCheckMessage(m *srvEnvelope, p *srvFastParams, id *json.RawMessage) (fastParams bool, err error) {
	if m.Method == "tools/call" || m.Method == "tools/list" {
		switch {
		case len(m.Params) == 0 || string(m.Params) == "null":
			fastParams = true
		case m.Params[0] == '{':
			// Decoded strictly, the params hold only keys spelled as
			// srvFastParams spells them: none in another letter case.
			fastParams = jsondec.DecodeStrict(m.Params, p) == nil
		}
	}
	if !fastParams && m.Method == "tools/call" && len(m.Params) > 0 && m.Params[0] == '{' {
		if err := srvParamCase(m.Params); err != nil {
			*id = m.ID
			return false, err
		}
	}
	return fastParams, nil
}

// srvParamCase refuses params of tools/call with a key that is one of
// srvParamNames in another letter case.
func srvParamCase(raw json.RawMessage) error {
	var params map[string]json.RawMessage
	if json.Unmarshal(raw, &params) != nil {
		return nil // the go-sdk says what is wrong
	}
	for k := range params {
		for _, name := range srvParamNames {
			if k != name && strings.EqualFold(k, name) {
				return fmt.Errorf("unknown key %q in params (keys are case-sensitive: did you mean %q?)", k, name)
			}
		}
	}
	return nil
}

// srvFast answers tools/call and tools/list when nothing in the request
// needs the SDK, and reports whether it did. When it did not, r is as it
// came, body included. sess is the request's open session, nil for a
// stateless server (or an ID no session of ep has).
func (s *Server) srvFast(w http.ResponseWriter, r *http.Request, ep *srvEndpoint, sess *srvSession) bool {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		// Parameters, or another spelling: read as the SDK reads them.
		if base, _, err := mime.ParseMediaType(ct); err != nil || base != "application/json" {
			return false
		}
	}
	if !srvAccepts(r.Header.Values("Accept")) {
		return false // the SDK says what is missing
	}
	if pv := r.Header.Get("Mcp-Protocol-Version"); pv != "" && (pv >= srvNoAskVersion || !slices.Contains(s.opts.ProtocolVersions, pv)) {
		return false
	}
	var ss *mcp.ServerSession
	if !s.opts.Stateless {
		if sess == nil {
			return false // the SDK says the session is unknown
		}
		ss = sess.ss
		if srvCanElicit(ss) || srvCanSample(ss) {
			return false
		}
	}
	var req srvFastRequest
	if checked, ok := r.Body.(*srvBody); ok && checked.fast && checked.rd.Size() <= srvFastMax {
		// Read and checked by srvCheckEnvelope: an unread copy is in place
		// for the SDK, should this path leave the request to it.
		req = checked.req
	} else {
		body, err := io.ReadAll(io.LimitReader(r.Body, srvFastMax+1))
		if err != nil || len(body) > srvFastMax {
			r.Body = newSrvBody(body, r.Body, true)
			return false
		}
		r.Body = newSrvBody(body, r.Body, false)
		if sess != nil {
			srvCancelFast(sess, body) // and on to the SDK, which words its answer
		}
		if req, ok = srvDecode(body); !ok {
			return false
		}
	}
	p := req.Params
	switch req.Method {
	case "tools/list":
		if p.Cursor != "" || s.eng.Policy() != nil || wield.ScopeFrom(r.Context()) != nil {
			return false // a policy's list is the requester's own (srvPolicyList)
		}
		s.srvSync(ep)
		list := ep.srvList(s.srvPrivate(r.Context()))
		if list == nil {
			return false
		}
		srvWrite(w, ss, req.ID, list, nil)
		return true
	case "tools/call":
		ep.mu.Lock()
		_, listed := ep.synced[p.Name]
		ep.mu.Unlock()
		if !listed {
			return false // the SDK words the error
		}
		var (
			res *wield.Result
			err error
		)
		if sess == nil {
			res, err = s.srvFastCall(r, ep, req.ID, &mcp.CallToolParamsRaw{Name: p.Name, Arguments: p.Arguments})
		} else {
			res, err = s.srvFastSessionCall(r, ep, sess, req.ID, p.Name, p.Arguments)
		}
		if err != nil {
			if srvUnknownToolTold(r, err, p.Name) {
				return false
			}
			var jerr *jsonrpc.Error
			if !errors.As(err, &jerr) {
				jerr = srvInternal
			}
			srvWrite(w, ss, req.ID, nil, jerr)
			return true
		}
		bp := srvResponseBufs.Get().(*[]byte)
		b := srvAppendResponseStart((*bp)[:0], req.ID)
		if out, ok := s.srvAppendResult(b, res, false); ok {
			srvPutResponse(bp, srvWriteResponse(w, ss, out))
			return true
		}
		srvResponseBufs.Put(bp)
		// jsonenc, not json.Marshal: the result is text a model reads, so
		// <, > and & go as they are, not escaped for HTML.
		out, err := jsonenc.Marshal(s.srvResult(res))
		if err != nil {
			s.log.Error("mcp server: encode result", "tool", p.Name, "err", err)
			srvWrite(w, ss, req.ID, nil, srvInternal)
			return true
		}
		srvWrite(w, ss, req.ID, out, nil)
		return true
	}
	return false
}

// srvPlainFastCall reports whether r is a tools/call that srvCheckEnvelope
// read for the fast path, of a tool that need not run as a task: the
// in-core tasks (srvServeCoreTasks) would leave it alone, so its body is
// not read a second time to learn so. (That second reading, with
// encoding/json, was 7% of the server's CPU and 12 allocations of every
// 2025-11-25 call, 2026-11-27.) The strict check read params into
// srvFastParams, whose decoding refuses any other key: params.task is
// absent.
func (s *Server) srvPlainFastCall(r *http.Request, ep *srvEndpoint) bool {
	b, ok := r.Body.(*srvBody)
	return ok && b.fast && b.req.Method == "tools/call" && s.srvTaskSupport(ep, b.req.Params.Name) != wield.TaskRequired
}

// srvFastCall runs a tools/call of the fast path of a stateless server:
// its context ends with the request's.
func (s *Server) srvFastCall(r *http.Request, ep *srvEndpoint, id json.RawMessage, p *mcp.CallToolParamsRaw) (*wield.Result, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	if s.opts.Trace != nil {
		ctx = context.WithValue(ctx, srvRPCIDKey{}, srvIDText(id))
	}
	return s.srvCall(ctx, ep, nil, p)
}

// srvFastCtx is the context of a session's tools/call on the fast path,
// and what watches it, in one allocation: the request's values (the key's
// scope among them) without its cancellation, as context.WithoutCancel
// gives them, with the srvRequest that srvCallAs would add, and its
// params. It is the parent of the call's cancelable context, never handed
// out itself: its Done is nil, so that context registers nothing with it,
// and context.Cause stops at that context.
type srvFastCtx struct {
	r      *http.Request
	req    srvRequest
	params mcp.CallToolParamsRaw
	rpcID  string // the JSON-RPC ID as text, when traced
	ctx    context.Context
	cancel context.CancelCauseFunc
	ended  atomic.Bool // requestEnded ran
}

func (c *srvFastCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *srvFastCtx) Done() <-chan struct{}       { return nil }
func (c *srvFastCtx) Err() error                  { return nil }

func (c *srvFastCtx) Value(key any) any {
	switch key {
	case srvRequestKey{}:
		return &c.req
	case srvRPCIDKey{}:
		if c.rpcID != "" {
			return c.rpcID
		}
	}
	return c.r.Context().Value(key)
}

// requestEnded runs when the request's context ends while the call runs:
// a client that cancels on purpose may drop the request before its
// notifications/cancelled arrives, so the end is taken for a disconnect
// only if no such notice follows soon. It acts once, however often it is
// told (a connection's watch may tell it twice).
func (c *srvFastCtx) requestEnded() {
	if c.ended.Swap(true) {
		return
	}
	t := time.AfterFunc(srvCancelNotice, func() { c.cancel(context.Cause(c.r.Context())) })
	context.AfterFunc(c.ctx, func() { t.Stop() })
}

// srvFastSessionCall runs a session's tools/call of the fast path: its
// context ends when the client cancels it (notifications/cancelled, by
// its JSON-RPC ID: srvCancelFast) or disconnects (see requestEnded), which
// its connection tells it when it came through WatchConns's listener, and
// its request's context otherwise. (One
// context per call, 2026-11-27: a first one derived from the request and
// dropped cost a sixth of the fast path's allocated bytes and 1.4% of the
// server's CPU. The request's values, the srvRequest, the params and the
// watch's state are one allocation, where they were four.)
func (s *Server) srvFastSessionCall(r *http.Request, ep *srvEndpoint, sess *srvSession, id json.RawMessage, name string, args json.RawMessage) (*wield.Result, error) {
	c := &srvFastCtx{r: r, params: mcp.CallToolParamsRaw{Name: name, Arguments: args}}
	c.req = srvRequest{session: sess.ss, params: &c.params}
	if s.opts.Trace != nil {
		c.rpcID = srvIDText(id)
	}
	c.ctx, c.cancel = context.WithCancelCause(c)
	defer c.cancel(nil)
	if conn := srvConnOf(r); conn != nil {
		conn.watch(c)
		defer conn.unwatch(c)
	} else {
		defer context.AfterFunc(r.Context(), c.requestEnded)()
	}
	sess.mu.Lock()
	if sess.calls == nil {
		sess.calls = map[string]context.CancelCauseFunc{}
	}
	sess.calls[string(id)] = c.cancel
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		delete(sess.calls, string(id))
		sess.mu.Unlock()
	}()
	return s.srvCallIn(c.ctx, ep, sess.ss, &c.params, sess.caller(s))
}

// srvResponseBufs are the buffers of the fast path's responses, which
// net/http copies as they are written.
var srvResponseBufs = sync.Pool{New: func() any { return new([]byte) }}

// srvPutResponse keeps b, written, in bp for the next response, unless it
// grew large.
func srvPutResponse(bp *[]byte, b []byte) {
	if cap(b) <= 16<<10 {
		*bp = b[:0]
		srvResponseBufs.Put(bp)
	}
}

// srvAccepts reports whether the Accept values name both JSON and event
// streams, read as the SDK reads them.
func srvAccepts(values []string) bool {
	var jsonOK, streamOK bool
	for _, v := range values {
		for rest := v; rest != ""; {
			var token string
			token, rest, _ = strings.Cut(rest, ",")
			base, _, _ := strings.Cut(token, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// srvBody is a request body put back after reading, closing the original.
// When the strict check read it as a request the fast path can answer,
// fast is set and req holds what it says, so that it is read once (era
// and eraReq likewise for a request of the stateless era). It is
// one allocation (the reader, the request and the box of r.Body together;
// they were four).
type srvBody struct {
	body []byte       // the bytes read
	rd   bytes.Reader // reading body
	more io.Reader    // rd, then the rest of orig; nil: rd alone
	orig io.ReadCloser
	fast bool
	req  srvFastRequest
	// era is set when srvEraDecode read the body as a request of the
	// stateless era its fast path can answer, eraReq.
	era    bool
	eraReq srvEraRequest
	// whole: orig was read to its end and closed (see srvCheckEnvelope).
	whole bool
}

// srvBodyBack gives r back the body net/http gave it, once srvCheckEnvelope
// read it whole and closed it, for net/http to find it so as it finishes
// the answer. Nothing reads r once it is answered.
func srvBodyBack(r *http.Request) {
	if b, ok := r.Body.(*srvBody); ok && b.whole {
		r.Body = b.orig
	}
}

// newSrvBody puts body back in front of orig: alone, or followed by what
// orig has not yet given when rest is true (a read stopped early).
func newSrvBody(body []byte, orig io.ReadCloser, rest bool) *srvBody {
	b := &srvBody{body: body, orig: orig}
	b.rd.Reset(body)
	if rest {
		b.more = io.MultiReader(&b.rd, orig)
	}
	return b
}

func (b *srvBody) Read(p []byte) (int, error) {
	if b.more != nil {
		return b.more.Read(p)
	}
	return b.rd.Read(p)
}

func (b *srvBody) Close() error { return b.orig.Close() }

// srvPlainID accepts the IDs clients send: a number or a string.
func srvPlainID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false // a notification
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// srvList returns the encoded tools/list result, as the SDK builds it:
// the tools sorted by name, in one page; its cacheScope private when the
// list is a caller's (see srvPrivate), public otherwise. It returns nil
// when they do not fit one page of the SDK's.
func (ep *srvEndpoint) srvList(private bool) []byte {
	i := 0
	if private {
		i = 1
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.lists[i] != nil {
		return ep.lists[i]
	}
	if len(ep.listed) > mcp.DefaultPageSize {
		return nil
	}
	tools := make([]*mcp.Tool, 0, len(ep.listed))
	for _, t := range ep.listed {
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	scope := "public"
	if private {
		scope = "private"
	}
	b, err := json.Marshal(&mcp.ListToolsResult{Cacheable: mcp.Cacheable{CacheScope: scope}, Tools: tools})
	if err != nil {
		return nil // the SDK will fail the same way, and say so
	}
	ep.lists[i] = b
	return b
}

// srvPrivate says whether a list answered to the request of ctx is its
// caller's own, to be cached by its client only (cacheScope "private"):
// under a policy, or on a server with keys (whose keys may be scoped to
// toolsets), callers see different lists, and a cache shared between them
// must not hand one caller's list to another.
func (s *Server) srvPrivate(ctx context.Context) bool {
	return s.eng.Policy() != nil || wield.RequesterFrom(ctx) != "" || wield.ScopeFrom(ctx) != nil
}

// srvWrite writes a JSON-RPC response: result, or else jerr.
func srvWrite(w http.ResponseWriter, ss *mcp.ServerSession, id json.RawMessage, result []byte, jerr *jsonrpc.Error) {
	if jerr == nil {
		bp := srvResponseBufs.Get().(*[]byte)
		b := append(srvAppendResponseStart((*bp)[:0], id), result...)
		srvPutResponse(bp, srvWriteResponse(w, ss, b))
		return
	}
	e, _ := json.Marshal(jerr)
	b := make([]byte, 0, len(id)+len(e)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	srvWriteResponse(w, ss, append(b, e...))
}

// srvResponseStart returns a response up to its result, with room for a
// result of about n bytes and the response's end.
func srvResponseStart(id json.RawMessage, n int) []byte {
	return srvAppendResponseStart(make([]byte, 0, len(id)+2*n+192), id)
}

// srvAppendResponseStart appends a response up to its result to b.
func srvAppendResponseStart(b []byte, id json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	return append(b, `,"result":`...)
}

// srvJSONType is the Content-Type of the fast path's responses.
var srvJSONType = []string{"application/json"}

// srvWriteResponse ends the response b (the result or error written) and
// writes it with its headers. It returns b as written, for reuse.
func srvWriteResponse(w http.ResponseWriter, ss *mcp.ServerSession, b []byte) []byte {
	b = append(b, "}\n"...)
	h := w.Header()
	// One allocation for the values of the two headers that vary; the
	// content type's is shared, its capacity its length, so that an Add
	// copies it rather than writing into it.
	vals := make([]string, 2)
	h["Content-Type"] = srvJSONType[:1:1]
	vals[0] = strconv.Itoa(len(b))
	h["Content-Length"] = vals[0:1:1]
	if ss != nil {
		vals[1] = ss.ID()
		h["Mcp-Session-Id"] = vals[1:2:2]
	}
	w.Write(b)
	return b
}

// srvAppendResult appends r's tools/call result to b as jsonenc.Marshal
// writes s.srvResult(r) (TestServerAppendResult and FuzzServerAppendResult
// hold it to that, byte for byte), without building the SDK's types on the
// way: for an echo call, that was a fifth of the fast path's time. It
// reports false, for the caller to take that way, for rich content, for
// a cut output with a link to the whole one, and for structured content
// with U+2028 or U+2029 in it. With era, the result is the stateless
// era's (srvEraFast): the server's name and version in _meta too, and
// the resultType of a complete result.
func (s *Server) srvAppendResult(b []byte, r *wield.Result, era bool) ([]byte, bool) {
	if r.OK && bytes.Contains(r.Output, []byte(`"`+ContentKey+`"`)) {
		return b, false // perhaps rich content: srvContent decides
	}
	if s.opts.Calls != nil && r.Metadata["truncated"] == true {
		return b, false
	}
	b = append(b, `{"_meta":{`...)
	if era {
		// As the SDK's Meta map is written: its keys sorted.
		b = append(b, `"`+mcp.MetaKeyServerInfo+`":{"name":`...)
		b = jsonenc.AppendString(b, s.opts.Name)
		b = append(b, `,"version":`...)
		b = jsonenc.AppendString(b, s.opts.Version)
		b = append(b, `},`...)
	}
	b = append(b, `"`+MetaCallID+`":`...)
	b = jsonenc.AppendString(b, r.CallID)
	b = append(b, `},"content":[{"type":"text","text":`...)
	b = jsonenc.AppendString(b, srvText(r))
	b = append(b, `}]`...)
	if r.OK && srvFirst(r.Output) == '{' {
		// As llm.MCPResult: an object is also the structured content,
		// when it is valid JSON. The SDK's types write U+2028 and U+2029
		// escaped there (through json.Marshal), jsonenc as they are.
		if bytes.Contains(r.Output, []byte("\u2028")) || bytes.Contains(r.Output, []byte("\u2029")) {
			return b, false
		}
		start := len(b)
		b = append(b, `,"structuredContent":`...)
		out, ok := jsonenc.AppendRaw(b, r.Output)
		if !ok {
			var err error
			if out, err = jsonenc.Compact(b, r.Output); err != nil {
				out = b[:start]
			}
		}
		b = out
	}
	if !r.OK {
		b = append(b, `,"isError":true`...)
	}
	if era {
		b = append(b, srvComplete...)
	}
	return append(b, '}'), true
}

// srvComplete ends the result of a call of the stateless era that needs
// nothing more from its client.
const srvComplete = `,"resultType":"complete"`

// srvText is r.Text() without its cost for an object: encoding/json
// failing to read one as a string, which it can read only from a string
// or a null.
func srvText(r *wield.Result) string {
	if r.OK {
		if c := srvFirst(r.Output); c != '"' && c != 'n' {
			return string(jsonenc.Unescape(r.Output))
		}
	}
	return r.Text()
}

// srvFirst returns the first byte of raw that is not JSON space, or 0.
func srvFirst(raw []byte) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// srvCancelNotice is how long a call of the fast path whose request ended
// waits for the client's notifications/cancelled before it is taken for a
// disconnect.
const srvCancelNotice = 500 * time.Millisecond

// srvCancelFast cancels the fast path's call that a notifications/cancelled
// in body names, with [wield.ErrCallerCanceled] as the cause, as the SDK's
// path does (see srvCancelOnPurpose): a call the client cancels on purpose
// while it waits for approval ends that approval. Any other body is left
// alone.
func srvCancelFast(sess *srvSession, body []byte) {
	if !bytes.Contains(body, []byte("notifications/cancelled")) {
		return
	}
	var n struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &n) != nil || n.Method != "notifications/cancelled" || len(n.Params.RequestID) == 0 {
		return
	}
	sess.mu.Lock()
	cancel := sess.calls[string(n.Params.RequestID)]
	sess.mu.Unlock()
	if cancel != nil {
		cancel(wield.ErrCallerCanceled)
	}
}

// srvHTTPError answers a request with an HTTP status other than 200 and a
// JSON-RPC error for its id, for refusals made before the SDK reads it.
func srvHTTPError(w http.ResponseWriter, status int, id json.RawMessage, jerr *jsonrpc.Error) {
	e, _ := json.Marshal(jerr)
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":`)
	b.Write(e)
	b.WriteString("}\n")
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	w.Write(b.Bytes())
}
