package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

// NewApprover returns the [wield.Approver] for an engine that serves MCP
// clients: a call of a confirm tool that comes from an MCP client able to
// elicit is put to that client's user as a yes/no question naming the tool
// and its arguments; any other call (another caller, a client without
// elicitation, a stateless server) waits for fallback, typically the
// durable approval inbox (package approval). A nil fallback denies those
// calls.
//
// When fallback is a [wield.ApprovalClaimer], so is the returned approver:
// approvals given by elicitation are used once and claimed here, the others
// by fallback.
func NewApprover(fallback wield.Approver) wield.Approver {
	a := &srvApprover{fallback: fallback}
	if c, ok := fallback.(wield.ApprovalClaimer); ok {
		return &srvClaimingApprover{srvApprover: a, claimer: c}
	}
	return a
}

type srvApprover struct {
	fallback wield.Approver
	elicited sync.Map // approval IDs granted by elicitation, not yet claimed
}

// srvApprovalSchema is the question: one required yes/no, and room for a
// reason.
var srvApprovalSchema = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"approve": {Type: "boolean", Title: "Approve", Description: "Run the tool with these arguments"},
		"reason":  {Type: "string", Title: "Reason", Description: "Why (optional)"},
	},
	PropertyOrder: []string{"approve", "reason"},
	Required:      []string{"approve"},
}

// Approve elicits the decision from the MCP client when it can, else asks
// the fallback.
func (a *srvApprover) Approve(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
	if ask := srvEraAskFrom(ctx); ask != nil && srvDurable(a.fallback) {
		// A client of the stateless era that can be asked: the approval
		// is stored pending and the request answered input_required
		// (see era_input.go).
		return ask.park(ctx, req, a.fallback)
	}
	r := srvRequestFrom(ctx)
	if r == nil || !srvCanElicit(r.session) {
		if a.fallback == nil {
			return wield.Decision{}, fmt.Errorf("approve %s: no MCP client to ask and no approver to wait for", req.ID)
		}
		if r != nil {
			// The client cannot be asked (no elicitation, or the
			// stateless era, which forbids asking mid-call): a client
			// that follows the call's progress learns what it waits
			// for, rather than nothing until the decision.
			_ = Progress(ctx, 0, 0, fmt.Sprintf("waiting for approval %s of tool '%s' in the approval inbox (wield approvals approve %s)", req.ID, req.Tool, req.ID))
		}
		return a.fallback.Approve(ctx, req)
	}
	by := srvClientID(r.session)
	content, action, err := Elicit(ctx, srvApprovalMessage(req), srvApprovalSchema)
	switch {
	case err != nil && errors.Is(context.Cause(ctx), engine.ErrApprovalWaitEnded):
		// The server shuts down (the client may still be reading the
		// question): nothing durable waits, so the call is denied and
		// recorded, saying so.
		return wield.Decision{Approved: false, By: by, Reason: "the server shut down before the MCP client answered; the call did not run"}, nil
	case err != nil && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		// The client went away: nobody will answer, and nothing durable
		// waits, so the call is denied (and recorded) rather than parked.
		return wield.Decision{Approved: false, By: by, Reason: "the MCP client left before answering"}, nil
	case err != nil:
		return wield.Decision{}, fmt.Errorf("approve %s: %w", req.ID, err)
	case action != ActionAccept:
		return wield.Decision{Approved: false, By: by, Reason: "declined in the MCP client"}, nil
	}
	d := wield.Decision{By: by}
	d.Approved, _ = content["approve"].(bool)
	d.Reason, _ = content["reason"].(string)
	if d.Approved {
		a.elicited.Store(req.ID, true)
	}
	return d, nil
}

// srvDurable reports whether an approver keeps its requests durably, says
// when one is stored, and claims decisions, as the approval inbox does:
// only such a one can leave an approval pending for a later request.
func srvDurable(a wield.Approver) bool {
	pn, ok := a.(wield.PendingNotifier)
	_, claims := a.(wield.ApprovalClaimer)
	return ok && claims && pn.NotifiesPending()
}

// srvApprovalMessage is the question as the user reads it.
func srvApprovalMessage(req *wield.ApprovalRequest) string {
	args := string(req.Arguments)
	var v any
	if json.Unmarshal(req.Arguments, &v) == nil {
		if b, err := json.MarshalIndent(v, "", "  "); err == nil {
			args = string(b)
		}
	}
	return fmt.Sprintf("Allow the tool '%s' to run with these arguments?\n\n%s", req.Tool, args)
}

type srvClaimingApprover struct {
	*srvApprover
	claimer wield.ApprovalClaimer
}

// ClaimApproval takes the single use of an approval: one given by
// elicitation here, any other from the fallback.
func (a *srvClaimingApprover) ClaimApproval(ctx context.Context, id string) error {
	if _, ok := a.elicited.LoadAndDelete(id); ok {
		return nil
	}
	return a.claimer.ClaimApproval(ctx, id)
}
