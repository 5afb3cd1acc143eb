package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	r.Header.Del(srvScopeHeader)
	r.Header.Del(srvClientHeader)
	r.Header.Del(srvUnknownHeader)
	if who := wield.RequesterFrom(r.Context()); who != "" {
		r.Header.Set(srvRequesterHeader, who)
	}
	if scope := wield.ScopeFrom(r.Context()); len(scope) > 0 {
		names := make([]string, len(scope))
		for i, n := range scope {
			names[i] = url.QueryEscape(n)
		}
		r.Header.Set(srvScopeHeader, strings.Join(names, ","))
	}
}

// srvScopeHeader carries the toolsets the request's API key is scoped to
// ([wield.ScopeFrom] of its context) to the go-sdk's handlers, as
// srvRequesterHeader carries who asks: a call is confined to them, and so
// are the inner calls of a program it runs. A client's own header of that
// name is dropped before.
const srvScopeHeader = "Wield-Internal-Scope"

// srvReach is the toolkit the calls of ctx are confined to: the tools of
// the toolsets its key is scoped to (nil for every tool).
func (s *Server) srvReach(ctx context.Context) *wield.Toolkit {
	return s.reg.ScopeToolkit("this key's scope", wield.ScopeFrom(ctx), nil)
}

// srvWithRequester returns ctx saying who asks, as srvNoteRequester noted
// it in the headers of req.
func srvWithRequester(ctx context.Context, req mcp.Request) context.Context {
	x := req.GetExtra()
	if x == nil || x.Header == nil {
		return ctx
	}
	if who := x.Header.Get(srvRequesterHeader); who != "" && wield.RequesterFrom(ctx) == "" {
		ctx = wield.WithRequester(ctx, who)
	}
	if h := x.Header.Get(srvScopeHeader); h != "" && wield.ScopeFrom(ctx) == nil {
		var scope []string
		for n := range strings.SplitSeq(h, ",") {
			if name, err := url.QueryUnescape(n); err == nil && name != "" {
				scope = append(scope, name)
			}
		}
		ctx = wield.WithScope(ctx, scope)
	}
	return ctx
}

// srvPolicyList leaves out of a tools/list result the tools the engine's
// policy does not let the requester call (see [wield.VisibleTools]): the
// same filter as the REST list and exports.
func (s *Server) srvPolicyList(ctx context.Context, req mcp.Request, res mcp.Result) {
	p := s.eng.Policy()
	list, ok := res.(*mcp.ListToolsResult)
	if !ok {
		return
	}
	ctx = srvWithRequester(ctx, req)
	// Without a policy or a scope, every tool is listed as registered:
	// run_program's description is the whole registry's, which is what its
	// programs reach here.
	kit := s.srvReach(ctx)
	if p == nil && kit == nil {
		return
	}
	names := make([]string, len(list.Tools))
	for i, t := range list.Tools {
		names[i] = t.Name
	}
	// The caller its calls are made as: without a key, the principal is
	// the client (Agent::"mcp:NAME") for the list as for the calls.
	ss, _ := req.GetSession().(*mcp.ServerSession)
	visible := s.srvListFor(ctx, p, s.srvCaller(ss), kit, names)
	list.Tools = slices.DeleteFunc(list.Tools, func(t *mcp.Tool) bool { return visible[t.Name] == nil })
	for i, t := range list.Tools {
		// A tool described for this caller (run_program's functions): a
		// copy, the SDK's listed tool is shared.
		if d, ok := s.srvDescribedFor(visible[t.Name]); ok && d != t.Description {
			c := *t
			c.Description = d
			list.Tools[i] = &c
		}
	}
}

// srvListFor is which of the tools named in a tools/list (registered ones)
// caller may see under the policy p and within kit, each as described for
// it ([wield.ListFor]): the one filter of both paths that answer a
// tools/list under a policy or a scope, srvPolicyList on the go-sdk's and
// srvCoreListing on the 2025-11-25 one's own.
func (s *Server) srvListFor(ctx context.Context, p wield.Policy, caller wield.Caller, kit *wield.Toolkit, names []string) map[string]*wield.Tool {
	tools := make([]*wield.Tool, 0, len(names))
	for _, name := range names {
		if wt, ok := s.reg.Tool(name); ok {
			tools = append(tools, wt)
		}
	}
	visible := make(map[string]*wield.Tool, len(tools))
	for _, t := range wield.ListFor(ctx, p, s.reg, caller, kit, tools) {
		visible[t.Name] = t
	}
	return visible
}

// srvDescribedFor is the description of wt, a tool srvListFor gave, when
// it is its caller's own (run_program's functions): not the registered
// tool's.
func (s *Server) srvDescribedFor(wt *wield.Tool) (string, bool) {
	if wt == nil {
		return "", false
	}
	if reg, ok := s.reg.Tool(wt.Name); ok && reg == wt {
		return "", false
	}
	return wt.Description, true
}

// srvHidden reports whether the policies hide the tool name from caller,
// asking as ctx's requester: a call of it without arguments is denied, so
// no list shows it ([wield.VisibleTools], the filter of tools/list and of
// the engine's answer to its calls). To that caller the tool does not
// exist: what the server knows of it before the engine runs the call (the
// client capabilities a tool file needs, that it runs only as a task, the
// questions it asks before its task is made, whether a call of it may
// become a task) is not told, and the call goes to the engine as a plain
// call, which answers it as a call of an unknown tool (a call its
// arguments make allowed runs, as the engine decides). A tool not
// registered is not hidden: it is unknown already.
func (s *Server) srvHidden(ctx context.Context, name string, caller wield.Caller) bool {
	p := s.eng.Policy()
	if p == nil {
		return false
	}
	t, ok := s.reg.Tool(name)
	if !ok {
		return false
	}
	return len(wield.VisibleTools(ctx, p, s.reg, caller, []*wield.Tool{t})) == 0
}

// srvUnknownHeader names, on a request a fast path ran and leaves to the
// go-sdk, the tool the engine answered as unknown to the caller
// (srvUnknownToolTold): the go-sdk's path answers it as it answers a tool
// it does not list, without running the call a second time (srvHandler).
// A client's own header of that name is dropped before.
const srvUnknownHeader = "Wield-Internal-Unknown-Tool"

// srvUnknownToolTold reports whether err, the error of a fast path's call
// of tool, is the error of a call of a tool unknown to its caller (a tool
// the policies hide from it, or gone since the list: srvCallIn), and then
// notes it on r for the go-sdk's path: the fast paths write their answers
// in their own framing (application/json, where the go-sdk may answer an
// event stream), so a hidden tool answered there would differ from a tool
// the server does not have, which the go-sdk answers. A call the engine
// runs costs no second decision of the policies.
func srvUnknownToolTold(r *http.Request, err error, tool string) bool {
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) || jerr.Code != jsonrpc.CodeInvalidParams || jerr.Message != fmt.Sprintf("unknown tool %q", tool) {
		return false
	}
	r.Header.Set(srvUnknownHeader, tool)
	return true
}

// srvToldUnknown is the error of a tools/call the fast path ran and found
// unknown to its caller (srvUnknownToolTold), nil for any other.
func srvToldUnknown(req *mcp.CallToolRequest) error {
	x := req.GetExtra()
	if x == nil || x.Header == nil || req.Params == nil {
		return nil
	}
	if name := x.Header.Get(srvUnknownHeader); name != "" && name == req.Params.Name {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
	}
	return nil
}
