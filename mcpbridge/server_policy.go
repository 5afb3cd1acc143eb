package mcpbridge

import (
	"context"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
)

// srvRequesterHeader carries who the server authenticated a request as
// ([wield.RequesterFrom] of its context) from [Server.Handler] to the
// go-sdk's handlers, which see the request's headers, not its context: the
// engine's policy decides by it what tools/list shows and what tools/call
// may run. A client's own header of that name is dropped before.
const srvRequesterHeader = "Wield-Internal-Requester"

// srvNoteRequester puts the requester of r's context in
// srvRequesterHeader, after dropping whatever the client sent under it.
func srvNoteRequester(r *http.Request) {
	r.Header.Del(srvRequesterHeader) // only this server writes it
	if who := wield.RequesterFrom(r.Context()); who != "" {
		r.Header.Set(srvRequesterHeader, who)
	}
}

// srvWithRequester returns ctx saying who asks, as srvNoteRequester noted
// it in the headers of req.
func srvWithRequester(ctx context.Context, req mcp.Request) context.Context {
	if wield.RequesterFrom(ctx) != "" {
		return ctx
	}
	if x := req.GetExtra(); x != nil && x.Header != nil {
		if who := x.Header.Get(srvRequesterHeader); who != "" {
			return wield.WithRequester(ctx, who)
		}
	}
	return ctx
}

// srvPolicyList leaves out of a tools/list result the tools the engine's
// policy does not let the requester call (see [wield.VisibleTools]): the
// same filter as the REST list and exports.
func (s *Server) srvPolicyList(ctx context.Context, req mcp.Request, res mcp.Result) {
	p := s.eng.Policy()
	list, ok := res.(*mcp.ListToolsResult)
	if p == nil || !ok {
		return
	}
	ctx = srvWithRequester(ctx, req)
	var tools []*wield.Tool
	for _, t := range list.Tools {
		if wt, ok := s.reg.Tool(t.Name); ok {
			tools = append(tools, wt)
		}
	}
	// The caller its calls are made as: without a key, the principal is
	// the client (Agent::"mcp:NAME") for the list as for the calls.
	ss, _ := req.GetSession().(*mcp.ServerSession)
	visible := map[string]bool{}
	for _, t := range wield.VisibleTools(ctx, p, s.reg, s.srvCaller(ss), tools) {
		visible[t.Name] = true
	}
	list.Tools = slices.DeleteFunc(list.Tools, func(t *mcp.Tool) bool { return !visible[t.Name] })
}
