package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
)

// ApprovalList is the answer of GET /v1/approvals. On the wire each
// pending approval also says who waits for its decision (caller_waits; see
// [ApprovalView]).
type ApprovalList struct {
	Approvals []*wield.Approval `json:"approvals"`
}

// ApprovalView is an approval as the API answers it: with, while it is
// pending, who will take up its decision as this server knows it
// ([approval.Waiter]: "here", a caller waits on this server for the
// result; "none", the caller left and the server runs the call, or records
// its refusal, once decided; "elsewhere", the call was asked of another
// process sharing the store). Absent when the server's approvals cannot
// tell.
type ApprovalView struct {
	*wield.Approval
	CallerWaits approval.Waiter `json:"caller_waits,omitempty"`
	// RequestedByName is the name of the key of RequestedBy, when this
	// server knows that key and it has a name: a person deciding reads
	// "reviewer", not only key_8ecb584821e9.
	RequestedByName string `json:"requested_by_name,omitempty"`
}

// waiterOf is an approver that knows who waits for its approvals, as
// *approval.Inbox does.
type waiterOf interface {
	Waiter(id string) approval.Waiter
}

// view adds to a what the server knows of its waiter.
func (s *Server) view(a *wield.Approval) ApprovalView {
	v := ApprovalView{Approval: a}
	if w, ok := s.decider.(waiterOf); ok && a.Status == wield.ApprovalPending {
		v.CallerWaits = w.Waiter(a.ID)
	}
	if id, ok := strings.CutPrefix(a.RequestedBy, "key:"); ok {
		v.RequestedByName = s.keyring.nameOf(id)
	}
	return v
}

// DecisionRequest is the body of POST /v1/approvals/{id}/approve and
// .../deny. Digest is required: it is the digest of the arguments the person
// saw, and a decision on other arguments than the pending call's is refused.
// Note is free text kept with the decision as the client's word; who
// decided is the server's to say (the key, or the local user), so By is
// refused.
type DecisionRequest struct {
	Digest string `json:"digest"`
	Reason string `json:"reason,omitempty"`
	Note   string `json:"note,omitempty"`
	// By is refused when set: the decider is the key that decides, or the
	// local user on a server without keys. It is read only to say so.
	By string `json:"by,omitempty"`
}

// listApprovals answers GET /v1/approvals?status=&call_id= (pending by
// default; approved, denied, expired, or all; call_id alone means all
// statuses). call_id keeps the approvals of one call, which its record does
// not name: the store is read whole and filtered, which approvals, asked
// for confirm tools only, keep cheap.
func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) error {
	var list []*wield.Approval
	var err error
	q := r.URL.Query()
	st, callID := q.Get("status"), q.Get("call_id")
	if st == "" && callID != "" {
		st = "all"
	}
	switch st {
	case "", string(wield.ApprovalPending):
		list, err = s.decider.Pending(r.Context())
	case string(wield.ApprovalApproved), string(wield.ApprovalDenied), string(wield.ApprovalExpired):
		list, err = s.store.Approvals(r.Context(), wield.ApprovalStatus(st))
	case "all":
		list, err = s.store.Approvals(r.Context(), "")
	default:
		return apiError(http.StatusBadRequest, CodeBadRequest, "status is not pending, approved, denied, expired or all")
	}
	if err != nil {
		return err
	}
	scope := s.scope(r)
	hidden := s.approvalHidden(r)
	views := []ApprovalView{}
	for _, a := range list {
		if inScope(scope, a.Tool) && (callID == "" || a.CallID == callID) && !hidden(a.Tool) {
			views = append(views, s.view(a))
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Approvals []ApprovalView `json:"approvals"`
	}{views})
	return nil
}

func (s *Server) approval(r *http.Request) (*wield.Approval, error) {
	a, err := s.store.Approval(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if !inScope(s.scope(r), a.Tool) || s.approvalHidden(r)(a.Tool) {
		// As an approval that does not exist: the store's own answer (for
		// another scope's tool too, which a 403 named).
		return nil, fmt.Errorf("approval %q: %w", r.PathValue("id"), wield.ErrNotFound)
	}
	return a, nil
}

// approvalHidden tells which approvals a request may not read because the
// policies hide their tool from its key: those of a key that may not
// decide approvals. A key with the approve right reads every approval in
// its scope, hidden tools' included: an approver must see what it is
// asked to decide, whether or not the policies let it call the tool.
func (s *Server) approvalHidden(r *http.Request) func(tool string) bool {
	p := s.eng.Policy()
	if p == nil {
		return func(string) bool { return false }
	}
	if k := KeyFrom(r.Context()); k == nil || k.Has(RightApprove) {
		return func(string) bool { return false }
	}
	return s.toolHidden(r, p)
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) error {
	a, err := s.approval(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.view(a))
	return nil
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) error { return s.decide(w, r, true) }
func (s *Server) deny(w http.ResponseWriter, r *http.Request) error    { return s.decide(w, r, false) }

// decide records a decision bound to the digest of the arguments decided
// on; the waiting call is woken. The key that asked for the call is refused
// the decision unless the server allows self-approval. The decision's by is
// the decider as the server knows them (see [decider]); the client's own
// text goes to note.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, approved bool) error {
	var req DecisionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Digest == "" {
		return apiError(http.StatusBadRequest, CodeBadRequest, "digest is required: the digest of the arguments decided on, as GET /v1/approvals shows it")
	}
	if req.By != "" {
		return apiError(http.StatusBadRequest, CodeBadRequest, "by is not taken: the server records who decides (the key, or the local user without keys); send your own text as note")
	}
	a, err := s.approval(r)
	if err != nil {
		return err
	}
	if k := KeyFrom(r.Context()); k != nil && a.RequestedBy == requester(k) && !s.selfOK {
		return apiError(http.StatusForbidden, CodeForbidden, "this key asked for the call: the key that asked cannot decide its approval; decide with another key that has the \"approve\" right (or set server.self_approval: true for a single-user setup)")
	}
	a, err = s.decider.Decide(r.Context(), r.PathValue("id"), req.Digest, wield.Decision{Approved: approved, By: decider(r), Reason: req.Reason, Note: req.Note})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// decider is who made a decision, as the server knows them: the key
// (key:ID, and its name when it has one) on a server with keys; without
// keys, whoever reaches the server is its local user, "console" when a
// browser sent the request (a keyless wield serve admits only pages of its
// own origin) and "local user" otherwise.
func decider(r *http.Request) string {
	if k := KeyFrom(r.Context()); k != nil {
		if k.Name != "" {
			return requester(k) + " (" + k.Name + ")"
		}
		return requester(k)
	}
	if r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != "" {
		return "console"
	}
	return "local user"
}
