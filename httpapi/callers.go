package httpapi

import (
	"net/http"
	"strconv"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
)

// callerSummary answers GET /v1/callers/{id}/summary: the
// [agent.ExecutionSummary] of the calls recorded for one caller (a
// sub-agent that makes its calls over REST with caller.id set), computed
// from the store by [agent.RecordedSummary], so it is the same after a
// restart and on every server sharing the store. ?brief=true answers the
// [agent.BriefSummary] instead; ?conversation= keeps one conversation's
// calls. It covers the caller's newest [agent.MaxSummaryRecords] calls,
// with truncated true when there are more. A key scoped to toolsets sees
// the calls of its tools only, and no caller those of tools the policies
// hide from it (see recordShown).
func (s *Server) callerSummary(w http.ResponseWriter, r *http.Request) error {
	p := r.URL.Query()
	brief := false
	if v := p.Get("brief"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return apiError(http.StatusBadRequest, CodeBadRequest, "brief is not true or false")
		}
		brief = b
	}
	q := agent.SummaryQuery{CallerID: r.PathValue("id"), ConversationID: p.Get("conversation")}
	if q.CallerID == "" {
		return apiError(http.StatusBadRequest, CodeBadRequest, "the path names no caller: use /v1/callers/{id}/summary")
	}
	if scope := s.scope(r); scope != nil || s.eng.Policy() != nil {
		shown := s.recordShown(r)
		q.Keep = func(rec *wield.Record) bool { return inScope(scope, rec.Call.Tool) && shown(rec) }
	}
	sum, err := agent.RecordedSummary(r.Context(), s.store, q)
	if err != nil {
		return err
	}
	if brief {
		writeJSON(w, http.StatusOK, sum.Brief())
		return nil
	}
	writeJSON(w, http.StatusOK, sum)
	return nil
}
