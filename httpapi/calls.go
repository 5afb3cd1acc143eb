package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/wieldhq/wield"
)

// CallRecord is a recorded call as the API serves it: the record, and the
// whole output when the model got a cut version.
type CallRecord struct {
	*wield.Record
	FullOutput json.RawMessage `json:"full_output,omitempty"`
}

func callRecord(r *wield.Record) CallRecord {
	out := CallRecord{Record: r}
	if r.Result != nil {
		out.FullOutput = r.Result.FullOutput
	}
	return out
}

// CallList is the answer of GET /v1/calls: a page of records, newest first,
// and the cursor of the next page.
type CallList struct {
	Calls []CallRecord `json:"calls"`
	Next  string       `json:"next,omitempty"`
}

// parseTime reads a time parameter: RFC 3339, or a duration back from now
// ("1h").
func parseTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return time.Now().Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	return time.Time{}, apiError(http.StatusBadRequest, CodeBadRequest, name+" is neither an RFC 3339 time nor a duration back from now (1h)")
}

// listCalls answers GET /v1/calls. A key scoped to toolsets sees only the
// calls of its tools, and no caller sees the calls of a tool the policies
// hide from it (see recordShown); its pages may then hold fewer records
// than the limit, and the cursor still leads to the rest.
func (s *Server) listCalls(w http.ResponseWriter, r *http.Request) error {
	p := r.URL.Query()
	q := wield.CallQuery{ConversationID: p.Get("conversation"), Tool: p.Get("tool"), CallerID: p.Get("caller"),
		WorkflowID: p.Get("workflow"), UserID: p.Get("user"), Status: p.Get("status"), Cursor: p.Get("cursor")}
	switch q.Status {
	case "", "ok", "error":
	default:
		return apiError(http.StatusBadRequest, CodeBadRequest, "status is not ok or error")
	}
	var err error
	if q.Since, err = parseTime("since", p.Get("since")); err != nil {
		return err
	}
	if q.Until, err = parseTime("until", p.Get("until")); err != nil {
		return err
	}
	if v := p.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return apiError(http.StatusBadRequest, CodeBadRequest, "limit is not a number from 1 to 1000")
		}
		q.Limit = n
	}
	scope := s.scope(r)
	if q.Tool != "" && !inScope(scope, q.Tool) {
		return outOfScope(q.Tool)
	}
	page, err := s.store.Calls(r.Context(), q)
	if err != nil {
		return err
	}
	out := CallList{Calls: make([]CallRecord, 0, len(page.Records)), Next: page.Next}
	shown := s.recordShown(r)
	for _, rec := range page.Records {
		if rec.Call != nil && inScope(scope, rec.Call.Tool) && shown(rec) {
			out.Calls = append(out.Calls, callRecord(rec))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getCall(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rec, err := s.store.Call(r.Context(), id)
	if err != nil {
		return err
	}
	if (rec.Call != nil && !inScope(s.scope(r), rec.Call.Tool)) || !s.recordShown(r)(rec) {
		// As for an ID no call has: a call of another scope's tool, or of
		// one the policies hide, is none of this key's (a 403 naming the
		// tool told it what the ID was).
		return fmt.Errorf("call %s: %w", id, wield.ErrNotFound)
	}
	writeJSON(w, http.StatusOK, callRecord(rec))
	return nil
}

// recordShown returns whether a record may be shown to the request's
// caller: not when it is of a tool the policies hide from that caller (a
// call of it without arguments is denied, so no list shows it:
// [wield.VisibleTools]), whoever made the call. The record of a call for
// which no tool was found (tool_not_found, with neither the tool's version
// nor its category: the record the engine keeps for a caller the tool is
// hidden from) is shown, as the record of a call of a tool that does not
// exist is, so that a caller cannot tell the two apart by its records
// either; one that names the tool's status (disabled, held) is not. Tools
// are decided once per request.
func (s *Server) recordShown(r *http.Request) func(*wield.Record) bool {
	p := s.eng.Policy()
	if p == nil {
		return func(*wield.Record) bool { return true }
	}
	decided := map[string]bool{}
	return func(rec *wield.Record) bool {
		if rec.Call == nil || (rec.Result != nil && rec.Result.ErrorType == wield.ErrToolNotFound && rec.ToolVersion == "" && rec.Category == "") {
			return true // no tool was found for it: nothing of one is told
		}
		name := rec.Call.Tool
		if v, ok := decided[name]; ok {
			return v
		}
		v := true
		if t, ok := s.knownTool(name); ok {
			v = len(wield.VisibleTools(r.Context(), p, s.reg, wield.Caller{}, []*wield.Tool{t})) == 1
		}
		decided[name] = v
		return v
	}
}

// summary answers GET /v1/conversations/{id}/summary: the summary of one
// conversation's calls. A scoped key's summary counts the calls of its
// tools only, totals and success rate included: it is made from the
// statistics of those tools, since the store's summary counts every call;
// so is the summary of a caller the policies hide a tool of it from
// (see figures).
func (s *Server) summary(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var sum wield.Summary
	if scope := s.scope(r); scope != nil {
		st, err := s.figures(r, wield.StatsQuery{ConversationID: id, Tools: scopeTools(scope)})
		if err != nil {
			return err
		}
		sum = summaryOf(id, st)
	} else {
		var err error
		if sum, err = s.summaryShown(r, id); err != nil {
			return err
		}
	}
	if sum.ToolUsage == nil {
		sum.ToolUsage = map[string]int{}
	}
	writeJSON(w, http.StatusOK, sum)
	return nil
}

// statistics answers GET /v1/statistics?conversation=&since=&until=. A
// scoped key's figures, overall and per category too, count the calls of
// its tools only, and no caller's count those of tools the policies hide
// from it (see figures).
func (s *Server) statistics(w http.ResponseWriter, r *http.Request) error {
	p := r.URL.Query()
	q := wield.StatsQuery{ConversationID: p.Get("conversation")}
	var err error
	if q.Since, err = parseTime("since", p.Get("since")); err != nil {
		return err
	}
	if q.Until, err = parseTime("until", p.Get("until")); err != nil {
		return err
	}
	if scope := s.scope(r); scope != nil {
		q.Tools = scopeTools(scope)
	}
	st, err := s.figures(r, q)
	if err != nil {
		return err
	}
	if st.Tools == nil {
		st.Tools = map[string]wield.LatencyStats{}
	}
	if st.Categories == nil {
		st.Categories = map[wield.Category]wield.LatencyStats{}
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// scopeTools lists the tools of a scope, sorted; never nil, so that an
// empty scope selects no call.
func scopeTools(scope map[string]bool) []string {
	out := make([]string, 0, len(scope))
	for t := range scope {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// summaryOf is the summary of a conversation's calls made from their
// statistics, per tool.
func summaryOf(id string, st wield.Statistics) wield.Summary {
	sum := wield.Summary{ConversationID: id, ToolUsage: make(map[string]int, len(st.Tools))}
	for t, l := range st.Tools {
		sum.ToolUsage[t] = int(l.Count)
		sum.TotalCalls += int(l.Count)
		sum.FailedCalls += int(l.Failures)
	}
	sum.SuccessfulCalls = sum.TotalCalls - sum.FailedCalls
	if sum.TotalCalls > 0 {
		sum.SuccessRate = 100 * float64(sum.SuccessfulCalls) / float64(sum.TotalCalls)
	}
	sum.HasErrors = sum.FailedCalls > 0
	return sum
}
