package mcpbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// srvFastParams are the params of tools/list and tools/call together.
type srvFastParams struct {
	Name      string
	Arguments json.RawMessage
	Cursor    string
}

// srvDecode reads a request the fast path can answer: keys matched exactly
// (encoding/json would take "Method" for "method"), none it does not know,
// no _meta. Anything else is left to the SDK, which has the last word on
// what is valid.
func srvDecode(body []byte) (srvFastRequest, bool) {
	var req srvFastRequest
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || string(top["jsonrpc"]) != `"2.0"` || json.Unmarshal(top["method"], &req.Method) != nil {
		return req, false
	}
	req.ID = top["id"]
	if !srvPlainID(req.ID) {
		return req, false
	}
	for k := range top {
		if k != "jsonrpc" && k != "id" && k != "method" && k != "params" {
			return req, false
		}
	}
	raw, ok := top["params"]
	if !ok || string(raw) == "null" {
		return req, true
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(raw, &params) != nil {
		return req, false
	}
	for k, v := range params {
		var err error
		switch k {
		case "name":
			err = json.Unmarshal(v, &req.Params.Name)
		case "arguments":
			req.Params.Arguments = v
		case "cursor":
			err = json.Unmarshal(v, &req.Params.Cursor)
		default:
			return req, false
		}
		if err != nil {
			return req, false
		}
	}
	return req, true
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
	body, err := io.ReadAll(io.LimitReader(r.Body, srvFastMax+1))
	if err != nil || len(body) > srvFastMax {
		r.Body = srvBody{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return false
	}
	r.Body = srvBody{bytes.NewReader(body), r.Body}
	req, ok := srvDecode(body)
	if !ok {
		return false
	}
	p := req.Params
	switch req.Method {
	case "tools/list":
		if p.Cursor != "" {
			return false
		}
		s.srvSync(ep)
		list := ep.srvList()
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
		res, err := s.srvCall(r.Context(), ep, ss, &mcp.CallToolParamsRaw{Name: p.Name, Arguments: p.Arguments})
		if err != nil {
			var jerr *jsonrpc.Error
			if !errors.As(err, &jerr) {
				jerr = srvInternal
			}
			srvWrite(w, ss, req.ID, nil, jerr)
			return true
		}
		out, err := json.Marshal(s.srvResult(res))
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
type srvBody struct {
	io.Reader
	orig io.Closer
}

func (b srvBody) Close() error { return b.orig.Close() }

// srvPlainID accepts the IDs clients send: a number or a string.
func srvPlainID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false // a notification
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// srvList returns the encoded tools/list result, as the SDK builds it:
// the tools sorted by name, in one page. It returns nil when they do not
// fit one page of the SDK's.
func (ep *srvEndpoint) srvList() []byte {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.list != nil {
		return ep.list
	}
	if len(ep.listed) > mcp.DefaultPageSize {
		return nil
	}
	tools := make([]*mcp.Tool, 0, len(ep.listed))
	for _, t := range ep.listed {
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.Marshal(&mcp.ListToolsResult{Cacheable: mcp.Cacheable{CacheScope: "public"}, Tools: tools})
	if err != nil {
		return nil // the SDK will fail the same way, and say so
	}
	ep.list = b
	return b
}

// srvWrite writes a JSON-RPC response: result, or else jerr.
func srvWrite(w http.ResponseWriter, ss *mcp.ServerSession, id json.RawMessage, result []byte, jerr *jsonrpc.Error) {
	var b bytes.Buffer
	b.Grow(len(result) + len(id) + 64)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	if jerr != nil {
		e, _ := json.Marshal(jerr)
		b.WriteString(`,"error":`)
		b.Write(e)
	} else {
		b.WriteString(`,"result":`)
		b.Write(result)
	}
	b.WriteString("}\n")
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	if ss != nil {
		h.Set("Mcp-Session-Id", ss.ID())
	}
	w.Write(b.Bytes())
}
