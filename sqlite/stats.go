package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wieldhq/wield"
)

// Summary sums up the calls of one conversation (seed 004 §5.2). The
// success rate is a percentage, 0 when there were no calls.
func (s *Store) Summary(ctx context.Context, conversationID string) (wield.Summary, error) {
	sum := wield.Summary{ConversationID: conversationID, ToolUsage: map[string]int{}}
	if err := s.readable(ctx); err != nil {
		return wield.Summary{}, fmt.Errorf("summarise conversation %s: %w", conversationID, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT tool, count(*), sum(ok) FROM calls
		WHERE conversation_id = ? GROUP BY tool`, conversationID)
	if err != nil {
		return wield.Summary{}, fmt.Errorf("summarise conversation %s: %w", conversationID, describe(err))
	}
	defer rows.Close()
	for rows.Next() {
		var tool string
		var n, ok int
		if err := rows.Scan(&tool, &n, &ok); err != nil {
			return wield.Summary{}, fmt.Errorf("summarise conversation %s: %w", conversationID, describe(err))
		}
		sum.ToolUsage[tool] = n
		sum.TotalCalls += n
		sum.SuccessfulCalls += ok
	}
	if err := rows.Err(); err != nil {
		return wield.Summary{}, fmt.Errorf("summarise conversation %s: %w", conversationID, describe(err))
	}
	sum.FailedCalls = sum.TotalCalls - sum.SuccessfulCalls
	sum.SuccessRate = rate(int64(sum.SuccessfulCalls), int64(sum.TotalCalls))
	sum.HasErrors = sum.FailedCalls > 0
	return sum, nil
}

// Statistics describes the calls that q selects (q.Tools, when not nil,
// keeps those of the tools it names; q.Hidden leaves out those of the
// tools it names that found their tool), overall, per tool and per category
// (calls of tools without a category under the empty one).
// Latencies are the calls' durations, queueing included; p50
// and p95 are nearest-rank percentiles: the value at rank ceil(p·n) of the
// n durations sorted.
func (s *Store) Statistics(ctx context.Context, q wield.StatsQuery) (wield.Statistics, error) {
	if err := s.readable(ctx); err != nil {
		return wield.Statistics{}, fmt.Errorf("call statistics: %w", err)
	}
	var where []string
	var args []any
	if q.ConversationID != "" {
		where = append(where, "conversation_id = ?")
		args = append(args, q.ConversationID)
	}
	if !q.Since.IsZero() {
		where = append(where, "queued_at >= ?")
		args = append(args, q.Since.UnixMicro())
	}
	if !q.Until.IsZero() {
		where = append(where, "queued_at < ?")
		args = append(args, q.Until.UnixMicro())
	}
	if q.Tools != nil {
		if len(q.Tools) == 0 {
			where = append(where, "0") // an empty list keeps no call
		} else {
			where = append(where, "tool IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(q.Tools)), ", ")+")")
			for _, t := range q.Tools {
				args = append(args, t)
			}
		}
	}
	if len(q.Hidden) > 0 {
		where = append(where, "(tool NOT IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(q.Hidden)), ", ")+
			") OR (error_type = ? AND coalesce(tool_version, '') = '' AND coalesce(category, '') = ''))")
		for _, t := range q.Hidden {
			args = append(args, t)
		}
		args = append(args, string(wield.ErrToolNotFound))
	}
	query := `SELECT tool, coalesce(category, ''), ok, duration_ns FROM calls`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return wield.Statistics{}, fmt.Errorf("call statistics: %w", describe(err))
	}
	defer rows.Close()
	var all latencies
	tools := map[string]*latencies{}
	cats := map[wield.Category]*latencies{}
	for rows.Next() {
		var tool, cat string
		var ok bool
		var d int64
		if err := rows.Scan(&tool, &cat, &ok, &d); err != nil {
			return wield.Statistics{}, fmt.Errorf("call statistics: %w", describe(err))
		}
		all.add(ok, d)
		t := tools[tool]
		if t == nil {
			t = new(latencies)
			tools[tool] = t
		}
		t.add(ok, d)
		c := cats[wield.Category(cat)]
		if c == nil {
			c = new(latencies)
			cats[wield.Category(cat)] = c
		}
		c.add(ok, d)
	}
	if err := rows.Err(); err != nil {
		return wield.Statistics{}, fmt.Errorf("call statistics: %w", describe(err))
	}
	st := wield.Statistics{
		Overall:    all.stats(),
		Tools:      make(map[string]wield.LatencyStats, len(tools)),
		Categories: make(map[wield.Category]wield.LatencyStats, len(cats)),
	}
	for k, v := range tools {
		st.Tools[k] = v.stats()
	}
	for k, v := range cats {
		st.Categories[k] = v.stats()
	}
	return st, nil
}

// latencies gathers the durations of a set of calls.
type latencies struct {
	failures int64
	d        []int64
}

func (l *latencies) add(ok bool, d int64) {
	if !ok {
		l.failures++
	}
	l.d = append(l.d, d)
}

func (l *latencies) stats() wield.LatencyStats {
	n := int64(len(l.d))
	if n == 0 {
		return wield.LatencyStats{}
	}
	slices.Sort(l.d)
	return wield.LatencyStats{
		Count:       n,
		Failures:    l.failures,
		SuccessRate: rate(n-l.failures, n),
		P50:         time.Duration(l.d[nearestRank(50, n)-1]),
		P95:         time.Duration(l.d[nearestRank(95, n)-1]),
		Max:         time.Duration(l.d[n-1]),
	}
}

// nearestRank is the 1-based rank of the pct-th percentile of n values:
// ceil(pct·n/100), computed in integers so that no rounding moves it.
func nearestRank(pct, n int64) int64 {
	return max(1, (pct*n+99)/100)
}

// rate is ok out of total in percent, unrounded; 0 for no calls.
func rate(ok, total int64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(ok) / float64(total)
}
