package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wieldhq/wield"
)

// Summary counts the calls of one conversation, by tool.
func (s *Store) Summary(ctx context.Context, conversationID string) (wield.Summary, error) {
	sum := wield.Summary{ConversationID: conversationID, ToolUsage: map[string]int{}}
	rows, err := s.pool.Query(ctx, s.sql(`SELECT tool, count(*), count(*) FILTER (WHERE ok)
		FROM @calls WHERE conversation_id = $1 GROUP BY tool`), conversationID)
	if err != nil {
		return sum, fmt.Errorf("postgres: summary of %s: %w", conversationID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			tool      string
			total, ok int
		)
		if err := rows.Scan(&tool, &total, &ok); err != nil {
			return sum, fmt.Errorf("postgres: summary of %s: %w", conversationID, err)
		}
		sum.ToolUsage[tool] = total
		sum.TotalCalls += total
		sum.SuccessfulCalls += ok
	}
	if err := rows.Err(); err != nil {
		return sum, fmt.Errorf("postgres: summary of %s: %w", conversationID, err)
	}
	sum.FailedCalls = sum.TotalCalls - sum.SuccessfulCalls
	sum.HasErrors = sum.FailedCalls > 0
	sum.SuccessRate = rate(int64(sum.SuccessfulCalls), int64(sum.TotalCalls))
	return sum, nil
}

// rate is the percentage of ok among total, 0 when there are none.
func rate(ok, total int64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(ok) / float64(total)
}

// Statistics counts the calls that match q (q.Tools, when not nil, keeps
// those of the tools it names; q.Hidden leaves out those of the tools it
// names that found their tool) and their latencies, overall,
// per tool and per category (tools without a category under ""), in one
// query. Percentiles are nearest-rank: p50
// is the duration at rank ceil(0.5·n) of the sorted durations, which is what
// percentile_disc computes.
func (s *Store) Statistics(ctx context.Context, q wield.StatsQuery) (wield.Statistics, error) {
	st := wield.Statistics{Tools: map[string]wield.LatencyStats{}, Categories: map[wield.Category]wield.LatencyStats{}}
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if q.ConversationID != "" {
		add("conversation_id = ?", q.ConversationID)
	}
	if !q.Since.IsZero() {
		add("queued_at >= ?", clampNanos(q.Since))
	}
	if !q.Until.IsZero() {
		add("queued_at < ?", clampNanos(q.Until))
	}
	if q.Tools != nil {
		// An empty list keeps no call: tool = ANY('{}') is false.
		add("tool = ANY(?)", q.Tools)
	}
	if len(q.Hidden) > 0 {
		args = append(args, q.Hidden, string(wield.ErrToolNotFound))
		where = append(where, fmt.Sprintf("(tool <> ALL($%d) OR (error_type = $%d AND tool_version = '' AND category = ''))", len(args)-1, len(args)))
	}
	sql := `SELECT grouping(tool, category), tool, category, count(*), count(*) FILTER (WHERE NOT ok),
		percentile_disc(0.5) WITHIN GROUP (ORDER BY duration),
		percentile_disc(0.95) WITHIN GROUP (ORDER BY duration),
		max(duration)
		FROM @calls`
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " GROUP BY GROUPING SETS ((tool), (category), ())"
	rows, err := s.pool.Query(ctx, s.names.Replace(sql), args...)
	if err != nil {
		return st, fmt.Errorf("postgres: statistics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			set             int32
			tool, category  *string
			count, failures int64
			p50, p95, most  *int64
		)
		if err := rows.Scan(&set, &tool, &category, &count, &failures, &p50, &p95, &most); err != nil {
			return st, fmt.Errorf("postgres: statistics: %w", err)
		}
		l := wield.LatencyStats{
			Count: count, Failures: failures, SuccessRate: rate(count-failures, count),
			P50: duration(p50), P95: duration(p95), Max: duration(most),
		}
		switch set {
		case 1: // grouped by tool
			st.Tools[*tool] = l
		case 2: // by category; tools without one under ""
			st.Categories[wield.Category(*category)] = l
		case 3:
			st.Overall = l
		}
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("postgres: statistics: %w", err)
	}
	return st, nil
}

func duration(n *int64) time.Duration {
	if n == nil {
		return 0
	}
	return time.Duration(*n)
}
