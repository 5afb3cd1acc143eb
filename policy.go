package wield

import (
	"context"
	"encoding/json"
	"slices"
)

// Policy decides, before a call's permission and approval, whether its
// caller may call the tool at all: package policy implements it with Cedar
// policy files. The engine asks it at its policy step ([PolicyRequest] with
// the arguments); lists and exports ask it without arguments
// ([VisibleTools]), so that a tool a caller may not call is not shown to
// it either. A Policy only narrows: a tool whose own permission is deny
// stays denied and a confirm tool still waits for its approval.
//
// Decide must be safe for concurrent use and quick (it runs on every call
// and, for lists, once per tool); it cannot fail: a policy that cannot be
// evaluated is a decision (see [PolicyDecision].Errors).
type Policy interface {
	Decide(ctx context.Context, req PolicyRequest) PolicyDecision
}

// PolicyRequest is what a [Policy] decides on.
type PolicyRequest struct {
	Tool *Tool
	// Toolsets are the names of the toolsets that hold Tool.
	Toolsets []string
	Caller   Caller
	// Requester is who the server authenticated ("key:" and an API key's
	// ID; see [WithRequester]); "" for a call made in-process.
	Requester string
	// Arguments are the call's arguments after coercion and defaults; nil
	// when the decision is whether a list shows the tool.
	Arguments json.RawMessage
}

// PolicyDecision is a [Policy]'s answer, kept in the call's record (the
// result's metadata "policy").
type PolicyDecision struct {
	// Allow says whether the call may go on to its permission.
	Allow bool `json:"allow"`
	// Monitor: the policies would deny the call, but they only monitor
	// (policy mode monitor): Allow is true and the call runs, and its
	// record says "would deny".
	Monitor bool `json:"would_deny,omitempty"`
	// Policies are the IDs of the policies that decided: the forbids that
	// matched for a denial, the permits for an allow. None for a denial
	// means that no policy permits the call (default deny).
	Policies []string `json:"policies,omitempty"`
	// Errors are the policies that could not be evaluated for this request
	// (an attribute the arguments lack, say), as "ID: message"; Cedar
	// skips them.
	Errors []string `json:"errors,omitempty"`
}

// NewPolicyRequest is the request for a call of t by caller, with the
// requester ctx carries and the toolsets of reg that hold t; args nil
// asks whether t may be listed.
func NewPolicyRequest(ctx context.Context, reg *Registry, t *Tool, caller Caller, args json.RawMessage) PolicyRequest {
	return PolicyRequest{Tool: t, Caller: caller, Requester: RequesterFrom(ctx), Arguments: args, Toolsets: reg.toolsetsHolding(t.Name)}
}

// toolsetsOf names the toolsets of sets that hold tool.
func toolsetsOf(sets []Toolset, tool string) []string {
	var out []string
	for _, ts := range sets {
		if slices.Contains(ts.Tools, tool) {
			out = append(out, ts.Name)
		}
	}
	return out
}

// VisibleTools returns the tools of list that p lets the caller see: those
// it would let the caller call, decided without arguments. It is the
// filter of every list, export and search (REST, MCP tools/list, `wield
// list`, the dialect exports, search_tools, run_program's functions);
// [ListFor] is it and the descriptions written per caller. A nil p keeps
// every tool; list is filtered in place.
func VisibleTools(ctx context.Context, p Policy, reg *Registry, caller Caller, list []*Tool) []*Tool {
	if p == nil {
		return list
	}
	var sets []Toolset
	if reg != nil { // without one, the tools are in no toolset
		sets = reg.Toolsets()
	}
	who := RequesterFrom(ctx)
	return slices.DeleteFunc(list, func(t *Tool) bool {
		req := PolicyRequest{Tool: t, Caller: caller, Requester: who, Toolsets: toolsetsOf(sets, t.Name)}
		return !p.Decide(ctx, req).Allow
	})
}

// ListFor is the one function through which lists and exports show tools
// to a caller: the tools of list that p lets the caller see
// ([VisibleTools]), each tool with a [Tool].ForCaller replaced by the tool
// as that caller sees it (run_program's description lists exactly the
// functions the caller's programs can call). kit is the toolkit the
// caller's calls are confined to: an agent's, an API key's scope
// ([Registry.ScopeToolkit]); nil for every tool. list is changed in
// place.
func ListFor(ctx context.Context, p Policy, reg *Registry, caller Caller, kit *Toolkit, list []*Tool) []*Tool {
	list = VisibleTools(ctx, p, reg, caller, list)
	for i, t := range list {
		if t.ForCaller != nil {
			if v := t.ForCaller(ctx, p, caller, kit); v != nil {
				list[i] = v
			}
		}
	}
	return list
}

type policyKey struct{}

// PolicyKey is the context key under which a handler's context carries the
// [Policy] of the engine that runs the call (nil for none): a tool that
// shows other tools (search_tools, run_program) filters them with it, as
// [ListFor] does lists. A context that implements Value answers it
// directly, as the engine's does.
var PolicyKey any = policyKey{}

// PolicyFrom returns the policy ctx carries ([PolicyKey]), or nil.
func PolicyFrom(ctx context.Context) Policy {
	p, _ := ctx.Value(PolicyKey).(Policy)
	return p
}
