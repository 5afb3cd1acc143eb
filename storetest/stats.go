package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// NearestRank returns the pct-th percentile of durations by the
// nearest-rank definition: the value at rank ceil(pct·n/100) of the n
// durations sorted (0 for none). It is the suite's reference.
func NearestRank(durations []time.Duration, pct int) time.Duration {
	n := len(durations)
	if n == 0 {
		return 0
	}
	d := slices.Clone(durations)
	slices.Sort(d)
	rank := max(1, (pct*n+99)/100) // ceil in integers: no float rounding
	return d[rank-1]
}

// latencyStats computes what a store must report for recs.
func latencyStats(recs []*wield.Record) wield.LatencyStats {
	if len(recs) == 0 {
		return wield.LatencyStats{}
	}
	var ds []time.Duration
	var failures int64
	for _, r := range recs {
		ds = append(ds, r.Result.Duration)
		if !r.Result.OK {
			failures++
		}
	}
	n := int64(len(recs))
	return wield.LatencyStats{
		Count: n, Failures: failures, SuccessRate: 100 * float64(n-failures) / float64(n),
		P50: NearestRank(ds, 50), P95: NearestRank(ds, 95), Max: slices.Max(ds),
	}
}

// statistics computes what a store must report for the records that keep
// selects.
func statistics(recs []*wield.Record, keep func(*wield.Record) bool) wield.Statistics {
	var all []*wield.Record
	tools := map[string][]*wield.Record{}
	cats := map[wield.Category][]*wield.Record{}
	for _, r := range recs {
		if !keep(r) {
			continue
		}
		all = append(all, r)
		tools[r.Call.Tool] = append(tools[r.Call.Tool], r)
		cats[r.Category] = append(cats[r.Category], r)
	}
	st := wield.Statistics{Overall: latencyStats(all), Tools: map[string]wield.LatencyStats{}, Categories: map[wield.Category]wield.LatencyStats{}}
	for k, v := range tools {
		st.Tools[k] = latencyStats(v)
	}
	for k, v := range cats {
		st.Categories[k] = latencyStats(v)
	}
	return st
}

// foundNoTool reports whether r is the record of a call for which no tool
// was found: what StatsQuery.Hidden keeps of a hidden tool's calls.
func foundNoTool(r *wield.Record) bool {
	return r.Result.ErrorType == wield.ErrToolNotFound && r.ToolVersion == "" && r.Category == ""
}

func testStatistics(t *testing.T, e *env) {
	empty, err := e.s.Statistics(t.Context(), wield.StatsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wield.Statistics{}, empty, cmpOpts); diff != "" {
		t.Errorf("Statistics of an empty store (-want +got)\n%s", diff)
	}

	rng := rand.New(rand.NewPCG(4, 2))
	cats := []wield.Category{wield.CategoryHTTP, wield.CategoryData, ""}
	var recs []*wield.Record
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	for i := range 400 {
		tool := fmt.Sprintf("tool-%d", rng.IntN(6))
		r := rec(tool, fmt.Sprintf("conv-%d", i%4), rng.IntN(5) != 0, at(i))
		r.Category = cats[int(tool[5]-'0')%3]
		r.Result.Duration = time.Duration(rng.Int64N(int64(2*time.Second))) + 1
		recs = append(recs, r)
	}
	// One tool with durations 1..20 ms pins the definition down: p50 is
	// the 10th value, p95 the 19th.
	for i := range 20 {
		r := rec("pinned", "conv-p", i != 0, at(400+i))
		r.Category = wield.CategoryCode
		r.Result.Duration = time.Duration(20-i) * time.Millisecond
		recs = append(recs, r)
	}
	// And one with three: p50 is the 2nd, p95 the 3rd.
	for i, d := range []time.Duration{3, 1, 2} {
		r := rec("three", "conv-p", true, at(420+i))
		r.Result.Duration = d * time.Millisecond
		recs = append(recs, r)
	}
	// A tool that policies hide from some caller: its calls, and the
	// traces of calls that found no tool (a caller it is hidden from, as
	// for a tool that does not exist: tool_not_found with neither version
	// nor category), and of calls that found it disabled or held
	// (tool_not_found with its version, or its category).
	for i := range 12 {
		r := rec("secret", fmt.Sprintf("conv-%d", i%4), i%3 != 0, at(430+i))
		r.ToolVersion, r.Category = "1.2.0", wield.CategoryData
		switch i % 4 {
		case 1:
			r.ToolVersion, r.Category = "", ""
			r.Result.OK, r.Result.ErrorType, r.Result.Error = false, wield.ErrToolNotFound, "Can not find tool named 'secret'"
		case 2:
			r.Result.OK, r.Result.ErrorType, r.Result.Error = false, wield.ErrToolNotFound, "Tool 'secret' is disabled and cannot be called"
		case 3:
			if i == 3 {
				r.ToolVersion = ""
				r.Result.OK, r.Result.ErrorType, r.Result.Error = false, wield.ErrToolNotFound, "Tool 'secret' is held and cannot be called"
			}
		}
		recs = append(recs, r)
	}
	e.saveAll(t, recs, 8)

	got, err := e.s.Statistics(t.Context(), wield.StatsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	pinned := wield.LatencyStats{Count: 20, Failures: 1, SuccessRate: 95,
		P50: 10 * time.Millisecond, P95: 19 * time.Millisecond, Max: 20 * time.Millisecond}
	if diff := cmp.Diff(pinned, got.Tools["pinned"]); diff != "" {
		t.Errorf("statistics of 1..20 ms (-want +got)\n%s", diff)
	}
	three := wield.LatencyStats{Count: 3, SuccessRate: 100, P50: 2 * time.Millisecond, P95: 3 * time.Millisecond, Max: 3 * time.Millisecond}
	if diff := cmp.Diff(three, got.Tools["three"]); diff != "" {
		t.Errorf("statistics of 1, 2, 3 ms (-want +got)\n%s", diff)
	}

	tests := []struct {
		q    wield.StatsQuery
		keep func(*wield.Record) bool
	}{
		{wield.StatsQuery{}, func(*wield.Record) bool { return true }},
		{wield.StatsQuery{ConversationID: "conv-2"}, func(r *wield.Record) bool { return r.Call.Caller.ConversationID == "conv-2" }},
		{wield.StatsQuery{Since: at(100), Until: at(250)}, func(r *wield.Record) bool {
			return !r.QueuedAt.Before(at(100)) && r.QueuedAt.Before(at(250))
		}},
		{wield.StatsQuery{ConversationID: "conv-1", Since: at(300)}, func(r *wield.Record) bool {
			return r.Call.Caller.ConversationID == "conv-1" && !r.QueuedAt.Before(at(300))
		}},
		{wield.StatsQuery{ConversationID: "nobody"}, func(*wield.Record) bool { return false }},
		// The tools an API key reaches: totals and categories count theirs only.
		{wield.StatsQuery{Tools: []string{"pinned", "tool-1"}}, func(r *wield.Record) bool {
			return r.Call.Tool == "pinned" || r.Call.Tool == "tool-1"
		}},
		{wield.StatsQuery{ConversationID: "conv-p", Tools: []string{"three"}}, func(r *wield.Record) bool {
			return r.Call.Caller.ConversationID == "conv-p" && r.Call.Tool == "three"
		}},
		{wield.StatsQuery{Tools: []string{}}, func(*wield.Record) bool { return false }},
		// The tools the policies hide from a caller: their calls are
		// left out, the traces of calls that found no tool stay.
		{wield.StatsQuery{Hidden: []string{"secret"}}, func(r *wield.Record) bool { return r.Call.Tool != "secret" || foundNoTool(r) }},
		{wield.StatsQuery{Hidden: []string{"secret", "tool-2", "nothing"}, ConversationID: "conv-1"}, func(r *wield.Record) bool {
			return r.Call.Caller.ConversationID == "conv-1" && (r.Call.Tool != "secret" && r.Call.Tool != "tool-2" || foundNoTool(r))
		}},
		{wield.StatsQuery{Hidden: []string{"secret"}, Tools: []string{"secret", "three"}}, func(r *wield.Record) bool {
			return r.Call.Tool == "three" || r.Call.Tool == "secret" && foundNoTool(r)
		}},
	}
	for _, tt := range tests {
		got, err := e.s.Statistics(t.Context(), tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(statistics(recs, tt.keep), got, cmpOpts); diff != "" {
			t.Errorf("Statistics(%+v) (-want +got)\n%s", tt.q, diff)
		}
	}
}

func testReplay(t *testing.T, e *env) {
	recs := []*wield.Record{
		rec("pay", "c", false, t0),                   // failed: never replayed
		rec("pay", "c", true, t0.Add(time.Second)),   // the first success
		rec("pay", "c", true, t0.Add(2*time.Second)), // a later success
		rec("refund", "c", true, t0.Add(3*time.Second)),
		rec("pay", "c", false, t0.Add(4*time.Second)),
		rec("pay", "c", true, t0.Add(5*time.Second)), // no key
	}
	keys := []string{"k1", "k1", "k1", "k1", "k2", ""}
	for i, r := range recs {
		r.Call.IdempotencyKey = keys[i]
		r.Digest = "digest-" + keys[i]
		if err := e.s.Save(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	e.flush(t)
	tests := []struct {
		tool, key string
		want      *wield.Record
	}{
		{"pay", "k1", recs[1]},
		{"refund", "k1", recs[3]},
		{"pay", "k2", nil},
		{"pay", "k3", nil},
		{"fetch", "k1", nil},
		{"pay", "", nil},
	}
	for _, tt := range tests {
		got, err := e.s.Replay(t.Context(), tt.tool, tt.key)
		if err != nil {
			t.Fatalf("Replay(%s, %s): %v", tt.tool, tt.key, err)
		}
		if diff := cmp.Diff(tt.want, got, cmpOpts); diff != "" {
			t.Errorf("Replay(%s, %q) (-want +got)\n%s", tt.tool, tt.key, diff)
		}
	}
}
