package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

// TestQueryPlans checks that the queries the store makes use the indexes
// meant for them, rather than scanning every record.
func TestQueryPlans(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	since := time.Now().Add(-time.Hour)
	tests := []struct {
		q    wield.CallQuery
		want string
	}{
		{wield.CallQuery{}, "calls_id"},
		{wield.CallQuery{Cursor: "01k"}, "calls_id"},
		{wield.CallQuery{ConversationID: "c"}, "calls_conversation"},
		{wield.CallQuery{ConversationID: "c", Cursor: "01k", Status: "ok"}, "calls_conversation"},
		{wield.CallQuery{Tool: "echo"}, "calls_tool"},
		{wield.CallQuery{ConversationID: "c", Tool: "echo"}, "calls_tool"},
		{wield.CallQuery{Tool: "echo", Status: "error"}, "calls_tool"},
		{wield.CallQuery{WorkflowID: "w"}, "calls_workflow"},
		{wield.CallQuery{UserID: "u"}, "calls_user"},
		{wield.CallQuery{Status: "error"}, "calls_failed"},
		{wield.CallQuery{Since: since, Until: since.Add(time.Minute)}, "calls_queued"},
	}
	for _, tt := range tests {
		query, args, _, err := callsQuery(tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if plan := explain(t, s, query, args...); !strings.Contains(plan, "INDEX "+tt.want) {
			t.Errorf("%+v: plan %q, want it to use %s", tt.q, plan, tt.want)
		}
	}
	replay := `SELECT ` + columns + ` FROM calls WHERE tool = ? AND idempotency_key = ? AND ok = 1 ORDER BY id LIMIT 1`
	if plan := explain(t, s, replay, "pay", "k"); !strings.Contains(plan, "INDEX calls_replay") {
		t.Errorf("replay: plan %q, want it to use calls_replay", plan)
	}
}

func explain(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.r.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "; ")
}
