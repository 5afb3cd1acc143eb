package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/wieldhq/wield"
)

// policy applies the tool's permission (deny stops here, confirm goes on
// to the approval step, auto runs), after the [Options].Policy, which may
// refuse the call first. Its decision is kept in the result's metadata
// "policy", so the record says which policies decided; a denial the policy
// only monitors is logged and the call goes on.
func (e *Engine) policy(ctx context.Context, k *call) bool {
	if k.entry.Tool.EffectivePermission() == wield.PermissionDeny {
		return k.fail(wield.ErrPermissionDenied, fmt.Sprintf("Permission denied: tool '%s' may not be called", k.Tool))
	}
	if e.opts.Policy == nil {
		return true
	}
	d := e.opts.Policy.Decide(ctx, wield.NewPolicyRequest(ctx, e.reg, k.entry.Tool, k.Caller, k.args))
	if k.res.Metadata == nil {
		k.res.Metadata = map[string]any{}
	}
	k.res.Metadata["policy"] = d
	if d.Monitor && !k.dry {
		e.log.Warn("policy would deny a call (monitor mode: it runs)", "tool", k.Tool, "call_id", k.ID,
			"requester", wield.RequesterFrom(ctx), "policies", d.Policies)
	}
	if d.Allow {
		return true
	}
	if len(d.Policies) == 0 {
		return k.fail(wield.ErrPermissionDenied, fmt.Sprintf("Permission denied: no policy permits calling tool '%s'", k.Tool))
	}
	return k.fail(wield.ErrPermissionDenied, fmt.Sprintf("Permission denied: tool '%s' is forbidden by policy %s", k.Tool, strings.Join(d.Policies, ", ")))
}

// Policy returns the engine's [Options].Policy (nil if none), which lists
// and exports ask what a caller may see (see [wield.VisibleTools]).
func (e *Engine) Policy() wield.Policy { return e.opts.Policy }
