//go:build unix

package journeys

// What a key may do, attacked through the binary with keys made by `wield
// keys create`: a key that may call claims to be a workflow node to lift
// the concurrency limits; a key scoped to one toolset reads the figures of
// the others; a key that may call approves its own confirm calls. Each is
// what a prompt-injected model holding the key would try.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// makeKey runs `wield keys create` with args and returns the secret it
// prints once, and the key's ID from what it says on stderr.
func makeKey(t *testing.T, u *user, args ...string) (secret, id string) {
	t.Helper()
	r := u.must(append([]string{"keys", "create"}, args...)...)
	secret = strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(secret, "wield_") {
		t.Fatalf("keys create %v printed %q", args, r.stdout)
	}
	_, rest, _ := strings.Cut(r.stderr, "created key ")
	id, _, _ = strings.Cut(rest, " ")
	return secret, id
}

// bearer is the header of a key.
func bearer(key string) string { return "Authorization: Bearer " + key }

// limiterOf reads GET /v1/limiter: the calls in flight and those that
// bypassed the limits so far. It may be called from any goroutine.
func limiterOf(t *testing.T, s *server, key string) (current int, bypassed int64) {
	req, _ := http.NewRequest("GET", s.url+"/v1/limiter", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Errorf("GET /v1/limiter: %v", err)
		return 0, 0
	}
	defer resp.Body.Close()
	var m struct {
		Current  int   `json:"current_concurrent"`
		Bypassed int64 `json:"total_bypassed"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); resp.StatusCode != 200 || err != nil {
		t.Errorf("GET /v1/limiter: %s %v", resp.Status, err)
	}
	return m.Current, m.Bypassed
}

// postMany posts n calls at once and returns the statuses and bodies, in order.
func postMany(t *testing.T, s *server, n int, path, body, key string) ([]int, []string) {
	t.Helper()
	codes, bodies := make([]int, n), make([]string, n)
	c := &http.Client{Timeout: commandLimit}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", s.url+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			resp, err := c.Do(req)
			if err != nil {
				bodies[i] = err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			codes[i], bodies[i] = resp.StatusCode, string(b)
		}()
	}
	wg.Wait()
	return codes, bodies
}

// TestJourneyAttackWorkflowBypass: under concurrency max 2, a key that may
// call sends 200 sleeps claiming caller.type workflow_node, the bypass
// meant for trusted workflow engines. Each is refused (403, naming the
// workflow right) and none runs; ordinary sleeps never run more than 2 at
// once; a key made with --rights call,workflow does bypass. A server
// without keys refuses the claim unless its configuration allows it; MCP
// clients cannot make it at all (the caller of an MCP call is the server's).
func TestJourneyAttackWorkflowBypass(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "concurrency: {max: 2, queue_size: 300, queue_timeout: 60s}\n")
	agent, _ := makeKey(t, u, "--rights", "call", "--name", "agent")
	flow, _ := makeKey(t, u, "--rights", "call,workflow", "--name", "engine")
	s := u.serve("--config", "wield.yaml")

	claim := `{"arguments":{"duration":0.3},"caller":{"id":"node-1","type":"workflow_node","workflow_id":"wf"}}`
	start := time.Now()
	codes, bodies := postMany(t, s, 200, "/v1/tools/sleep/call", claim, agent)
	took := time.Since(start)
	refused, shown := 0, 0
	for i, c := range codes {
		if c == 403 && strings.Contains(bodies[i], `lacks the \"workflow\" right`) {
			refused++
		} else if shown++; shown <= 3 {
			t.Errorf("sleep %d claiming workflow_node: %d %.300s", i, c, bodies[i])
		}
	}
	if refused != 200 {
		t.Errorf("%d of 200 workflow_node claims refused (in %v); want all, none run", refused, took)
	}
	if _, bypassed := limiterOf(t, s, agent); bypassed != 0 {
		t.Errorf("the limiter bypassed %d calls for a call key", bypassed)
	}
	if code, b := s.do("GET", "/v1/calls?tool=sleep", "", bearer(agent)); code != 200 || strings.Contains(string(b), `"tool":"sleep"`) {
		t.Errorf("refused claims left records: %d %s", code, b)
	}

	// Ordinary callers are limited: 8 sleeps of 0.3 s run 2 at a time.
	peak := 0
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if cur, _ := limiterOf(t, s, agent); cur > peak {
				peak = cur
			}
		}
	}()
	start = time.Now()
	codes, bodies = postMany(t, s, 8, "/v1/tools/sleep/call", `{"arguments":{"duration":0.3}}`, agent)
	took = time.Since(start)
	close(stop)
	<-watched
	for i, c := range codes {
		if c != 200 || !strings.Contains(bodies[i], `"ok":true`) {
			t.Errorf("ordinary sleep %d: %d %s", i, c, bodies[i])
		}
	}
	if peak > 2 || took < 1100*time.Millisecond {
		t.Errorf("8 ordinary sleeps of 0.3 s under max 2: peak %d in flight, took %v; want at most 2, about 1.2 s", peak, took)
	}

	// The trusted engine's key bypasses: 6 sleeps of 0.5 s at once.
	start = time.Now()
	codes, bodies = postMany(t, s, 6, "/v1/tools/sleep/call", strings.Replace(claim, "0.3", "0.5", 1), flow)
	took = time.Since(start)
	for i, c := range codes {
		if c != 200 {
			t.Errorf("workflow key sleep %d: %d %s", i, c, bodies[i])
		}
	}
	if _, bypassed := limiterOf(t, s, flow); bypassed != 6 || took > 1400*time.Millisecond {
		t.Errorf("the workflow key: %d bypassed in %v; want 6 at once (about 0.5 s)", bypassed, took)
	}

	// MCP: a client cannot say what caller it is; _meta is not read for it.
	c := &http.Client{Timeout: commandLimit}
	_, session, _ := keysMCP(t, c, s.url, "", agent, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"injected","version":"1"}}}`)
	keysMCP(t, c, s.url, session, agent, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, _, msg := keysMCP(t, c, s.url, session, agent, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"duration":0},"_meta":{"caller":{"type":"workflow_node"}}}}`)
	if res, _ := msg["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Errorf("MCP sleep: %v", msg)
	}
	if _, bypassed := limiterOf(t, s, flow); bypassed != 6 {
		t.Errorf("an MCP call with _meta.caller workflow_node bypassed the limits (%d bypassed, want 6)", bypassed)
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}

	// Without keys (loopback only): refused unless the configuration says.
	k := newUser(t)
	k.write("wield.yaml", "concurrency: {max: 2}\n")
	s = k.serve("--config", "wield.yaml")
	code, b := s.do("POST", "/v1/tools/sleep/call", strings.Replace(claim, "0.3", "0", 1))
	if code != 403 || !strings.Contains(string(b), "server.allow_workflow_bypass") {
		t.Errorf("keyless server, workflow_node: %d %s; want 403 naming server.allow_workflow_bypass", code, b)
	}
	if code, b := s.do("POST", "/v1/tools/sleep/call", `{"arguments":{"duration":0}}`); code != 200 {
		t.Errorf("keyless server, an ordinary call: %d %s", code, b)
	}
	s.stop(syscall.SIGTERM, 10*time.Second)
	k.write("wield.yaml", "concurrency: {max: 2}\nserver: {allow_workflow_bypass: true}\n")
	s = k.serve("--config", "wield.yaml")
	if code, b := s.do("POST", "/v1/tools/sleep/call", strings.Replace(claim, "0.3", "0", 1)); code != 200 || !strings.Contains(string(b), `"ok":true`) {
		t.Errorf("keyless server with allow_workflow_bypass: %d %s", code, b)
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}
}

// keysMCP sends one MCP request over streamable HTTP with a key and
// returns the status, the session ID and the JSON-RPC answer (nil for a
// notification). It may be called from any goroutine.
func keysMCP(t *testing.T, c *http.Client, base, session, key, body string) (int, string, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("POST /mcp: %v", err)
		return 0, "", nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(text) {
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				text = d
			}
		}
	}
	var msg map[string]any
	_ = json.Unmarshal([]byte(text), &msg)
	if resp.StatusCode >= 300 {
		t.Errorf("POST /mcp %s: %d %s", body, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), msg
}

// TestJourneyAttackScopedFigures: a key scoped to the math toolset reads
// the statistics, a conversation's summary, a caller's summary and
// /metrics after other keys' calls whose arguments and outcomes are not its
// business. It sees only its tools' calls, in totals and categories too,
// and /metrics is refused (403 naming the metrics right), which a key made
// with --rights metrics reads: a page in the text format that counts the
// calls just made, with the Go runtime's and the process's families.
func TestJourneyAttackScopedFigures(t *testing.T) {
	u := newUser(t)
	u.write("configs/tool_sets/math.yaml", "name: math\ndescription: arithmetic\ntools:\n  - calculator\n")
	ops, _ := makeKey(t, u, "--rights", "call", "--name", "ops")
	math, _ := makeKey(t, u, "--rights", "call", "--toolset", "math", "--name", "math", "--tools", "configs")
	prom, promID := makeKey(t, u, "--rights", "metrics", "--name", "prometheus")
	if r := u.wield("keys", "create", "--rights", "metrics", "--toolset", "math"); r.code != 2 || !strings.Contains(r.stderr, "every tool") {
		t.Errorf("a scoped metrics key: want exit 2 saying why:\n%s", r)
	}
	// A toolset the tool files do not define would scope a key to nothing:
	// refused, naming the toolsets there are, and no key made.
	if r := u.wield("keys", "create", "--rights", "call", "--toolset", "maths", "--name", "typo", "--tools", "configs"); r.code != 2 ||
		!strings.Contains(r.stderr, `unknown toolset "maths": the toolsets are math`) || r.stdout != "" {
		t.Errorf("a key of an unknown toolset: want exit 2 naming the toolsets there are:\n%s", r)
	}
	r := u.must("keys", "list")
	if line := lineOf(r.stdout, promID); !strings.Contains(line, "prometheus  read,metrics ") {
		t.Errorf("keys list shows prometheus as %q, want its rights read,metrics:\n%s", line, r)
	}
	s := u.serve("--tools", "configs")

	caller := `"caller":{"id":"agent-7","conversation_id":"conv-1"}`
	for i := range 3 {
		if code, b := s.do("POST", "/v1/tools/echo/call", fmt.Sprintf(`{"arguments":{"message":"payroll %d"},%s}`, i, caller), bearer(ops)); code != 200 {
			t.Fatalf("ops echo: %d %s", code, b)
		}
	}
	if code, b := s.do("POST", "/v1/tools/json_parse/call", `{"arguments":{"text":"{"},`+caller+`}`, bearer(ops)); code != 200 {
		t.Fatalf("ops json_parse: %d %s", code, b)
	}
	if code, b := s.do("POST", "/v1/tools/calculator/call", `{"arguments":{"expression":"6*7"},`+caller+`}`, bearer(math)); code != 200 {
		t.Fatalf("math calculator: %d %s", code, b)
	}
	type stats struct {
		Overall    struct{ Count, Failures int }
		Tools      map[string]json.RawMessage
		Categories map[string]struct{ Count int }
	}
	statsOf := func(key string) stats {
		var st stats
		code, b := s.do("GET", "/v1/statistics", "", bearer(key))
		if code != 200 || json.Unmarshal(b, &st) != nil {
			t.Fatalf("GET /v1/statistics: %d %s", code, b)
		}
		return st
	}
	if !eventually(5*time.Second, func() bool { return statsOf(ops).Overall.Count == 5 }) {
		t.Fatalf("the unscoped statistics never counted the 5 calls: %+v", statsOf(ops))
	}
	st := statsOf(math)
	inCats := 0
	for _, c := range st.Categories {
		inCats += c.Count
	}
	if st.Overall.Count != 1 || st.Overall.Failures != 0 || len(st.Tools) != 1 || st.Tools["calculator"] == nil || inCats != 1 {
		t.Errorf("the math key's statistics: %+v; want 1 call of calculator and nothing of the others", st)
	}

	var sum struct {
		TotalCalls  int            `json:"total_calls"`
		FailedCalls int            `json:"failed_calls"`
		HasErrors   bool           `json:"has_errors"`
		ToolUsage   map[string]int `json:"tool_usage"`
	}
	code, b := s.do("GET", "/v1/conversations/conv-1/summary", "", bearer(math))
	if code != 200 || json.Unmarshal(b, &sum) != nil || sum.TotalCalls != 1 || sum.FailedCalls != 0 || sum.HasErrors || len(sum.ToolUsage) != 1 {
		t.Errorf("the math key's summary of conv-1: %d %s; want 1 call, no errors, calculator only", code, b)
	}
	code, b = s.do("GET", "/v1/conversations/conv-1/summary", "", bearer(ops))
	if json.Unmarshal(b, &sum) != nil || sum.TotalCalls != 5 || !sum.HasErrors {
		t.Errorf("the ops key's summary of conv-1: %d %s; want 5 calls with an error", code, b)
	}
	code, b = s.do("GET", "/v1/callers/agent-7/summary", "", bearer(math))
	if code != 200 || strings.Contains(string(b), "payroll") || strings.Contains(string(b), "echo") || !strings.Contains(string(b), "calculator") {
		t.Errorf("the math key's summary of agent-7: %d %s; want calculator only", code, b)
	}

	for _, key := range []string{math, ops} {
		code, b = s.do("GET", "/metrics", "", bearer(key))
		if code != 403 || !strings.Contains(string(b), `lacks the \"metrics\" right`) {
			t.Errorf("/metrics with a key without the metrics right: %d %.200s; want 403 naming it", code, b)
		}
	}
	code, b = s.do("GET", "/metrics", "", bearer(prom))
	if code != 200 || !strings.Contains(string(b), `wield_http_requests_total`) {
		t.Errorf("/metrics with the metrics key: %d %.300s", code, b)
	}
	// What it reads parses as the text format and counts the calls just
	// made (the client asked for gzip, as Go's transport does).
	var fams map[string]*dto.MetricFamily
	counted := func() bool {
		code, b = s.do("GET", "/metrics", "", bearer(prom))
		p := expfmt.NewTextParser(model.LegacyValidation)
		var err error
		if fams, err = p.TextToMetricFamilies(bytes.NewReader(b)); code != 200 || err != nil {
			t.Fatalf("/metrics: %d %v\n%.300s", code, err, b)
		}
		return seriesValue(fams, "wield_calls_total", "outcome", "ok", "tool", "echo") == 3
	}
	if !eventually(5*time.Second, counted) {
		t.Errorf("/metrics never counted the 3 echo calls:\n%s", grepLines(string(b), "wield_calls_total"))
	}
	for _, c := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"wield_calls_total", []string{"outcome", "ok", "tool", "calculator"}, 1},
		{"wield_calls_total", []string{"outcome", "validation_error", "tool", "json_parse"}, 1},
		{"wield_call_duration_seconds", []string{"tool", "echo"}, 3},
		{"wield_http_requests_total", []string{"code", "200", "route", "POST /v1/tools/{name}/call"}, 5},
		{"wield_http_requests_total", []string{"code", "403", "route", "GET /metrics"}, 2},
	} {
		if got := seriesValue(fams, c.family, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v:\n%s", c.family, c.labels, got, c.want, grepLines(string(b), c.family))
		}
	}
	for _, family := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "go_gc_duration_seconds", "process_cpu_seconds_total", "process_open_fds"} {
		if fams[family] == nil {
			t.Errorf("no %s on /metrics", family)
		}
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}

	// A server without keys keeps /metrics open, as before.
	k := newUser(t)
	s = k.serve()
	if code, b := s.do("GET", "/metrics", ""); code != 200 || !strings.Contains(string(b), "wield_") {
		t.Errorf("keyless /metrics: %d %.200s", code, b)
	}
	s.stop(syscall.SIGTERM, 10*time.Second)
}

// seriesValue is the value of the series of family with the labels
// (name, value...): a counter's or gauge's value, a histogram's count; -1
// when there is none.
func seriesValue(fams map[string]*dto.MetricFamily, family string, labels ...string) float64 {
	f := fams[family]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestJourneyAttackSelfApproval: a key that may call asks for a confirm
// call (mark) and approves it itself. Without the approve right it is
// refused (403 naming the right); a key with call and approve that asked is
// refused too; another key with approve decides, and the decision names it.
// With server.self_approval: true the key that asked may decide; a server
// without keys approves as before (console, CLI, REST). The same over MCP:
// the key that asked there is the key recorded.
func TestJourneyAttackSelfApproval(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	agent, _ := makeKey(t, u, "--rights", "call", "--name", "agent")
	both, bothID := makeKey(t, u, "--rights", "call,approve", "--name", "solo")
	reviewer, reviewerID := makeKey(t, u, "--rights", "approve", "--name", "reviewer")
	s := u.serve("--tools", "tools")

	ask := func(key, message string) func() (int, []byte) {
		done := make(chan struct{})
		var code int
		var b []byte
		go func() {
			defer close(done)
			code, b = postJSON(s.url+"/v1/tools/mark/call", `{"arguments":{"message":"`+message+`"}}`, key)
		}()
		return func() (int, []byte) { <-done; return code, b }
	}
	type approval struct {
		ID          string `json:"id"`
		Digest      string `json:"digest"`
		RequestedBy string `json:"requested_by"`
	}
	pending := func(srv *server, key string) approval {
		t.Helper()
		var list struct{ Approvals []approval }
		if !eventually(5*time.Second, func() bool {
			_, b := srv.do("GET", "/v1/approvals", "", bearer(key))
			return json.Unmarshal(b, &list) == nil && len(list.Approvals) == 1
		}) {
			t.Fatalf("no pending approval: %+v", list)
		}
		return list.Approvals[0]
	}
	decide := func(srv *server, key string, a approval, verb string) (int, string) {
		code, b := srv.do("POST", "/v1/approvals/"+a.ID+"/"+verb, `{"digest":"`+a.Digest+`"}`, bearer(key))
		return code, string(b)
	}

	wait := ask(agent, "one")
	a := pending(s, reviewer)
	for _, verb := range []string{"approve", "deny"} {
		if code, b := decide(s, agent, a, verb); code != 403 || !strings.Contains(b, `lacks the \"approve\" right`) {
			t.Errorf("the call key %ss its own call: %d %s; want 403 naming the approve right", verb, code, b)
		}
	}
	if got := ranLines(t, u); got != "" {
		t.Fatalf("mark ran before a decision: %q", got)
	}
	if code, b := decide(s, reviewer, a, "approve"); code != 200 || !strings.Contains(b, "key:"+reviewerID) {
		t.Errorf("the reviewer approves: %d %s; want 200 naming key:%s", code, b, reviewerID)
	}
	if code, b := wait(); code != 200 || !strings.Contains(string(b), `"ok":true`) {
		t.Errorf("the approved call: %d %s", code, b)
	}

	wait = ask(both, "two")
	a = pending(s, reviewer)
	if a.RequestedBy != "key:"+bothID {
		t.Errorf("requested_by %q, want key:%s", a.RequestedBy, bothID)
	}
	if code, b := decide(s, both, a, "approve"); code != 403 || !strings.Contains(b, "the key that asked cannot decide") {
		t.Errorf("a call+approve key approves its own call: %d %s; want 403", code, b)
	}
	if code, b := decide(s, reviewer, a, "deny"); code != 200 {
		t.Errorf("the reviewer denies: %d %s", code, b)
	}
	if code, b := wait(); code != 200 || !strings.Contains(string(b), "approval_denied") {
		t.Errorf("the denied call: %d %s", code, b)
	}

	// Over MCP the key that asked is recorded the same way, on the fast
	// path of a plain tools/call and through the SDK (a call with _meta).
	c := &http.Client{Timeout: commandLimit}
	_, session, _ := keysMCP(t, c, s.url, "", both, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"injected","version":"1"}}}`)
	keysMCP(t, c, s.url, session, both, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, meta := range []string{"", `,"_meta":{"progressToken":"p1"}`} {
		mcpDone := make(chan map[string]any, 1)
		go func() {
			_, _, msg := keysMCP(t, c, s.url, session, both, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mark","arguments":{"message":"mcp %d"}%s}}`, 2+i, i, meta))
			mcpDone <- msg
		}()
		a = pending(s, reviewer)
		if a.RequestedBy != "key:"+bothID {
			t.Errorf("MCP %d: requested_by %q, want key:%s", i, a.RequestedBy, bothID)
		}
		if code, b := decide(s, both, a, "approve"); code != 403 {
			t.Errorf("MCP %d: the key that asked approves: %d %s; want 403", i, code, b)
		}
		if code, b := decide(s, reviewer, a, "approve"); code != 200 {
			t.Errorf("MCP %d: the reviewer approves: %d %s", i, code, b)
		}
		if msg := <-mcpDone; msg["result"] == nil {
			t.Errorf("MCP %d: the call after approval: %v", i, msg)
		}
	}
	if got := ranLines(t, u); got != "one\nmcp 0\nmcp 1\n" {
		t.Errorf("ran.txt = %q, want one and the two MCP calls (two was denied)", got)
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}

	// A single-user setup says so, and its one key approves its own calls.
	u.write("wield.yaml", "server: {self_approval: true}\n")
	s = u.serve("--tools", "tools", "--config", "wield.yaml")
	wait = ask(both, "four")
	a = pending(s, both)
	if code, b := decide(s, both, a, "approve"); code != 200 {
		t.Errorf("self_approval: true, the key approves its own call: %d %s", code, b)
	}
	if code, b := wait(); code != 200 || !strings.Contains(string(b), `"ok":true`) {
		t.Errorf("the self-approved call: %d %s", code, b)
	}
	s.stop(syscall.SIGTERM, 10*time.Second)

	// Without keys: approving over REST works as before.
	k := newUser(t)
	k.write("tools/mark.yaml", markTool)
	s = k.serve("--tools", "tools")
	wait = func() func() (int, []byte) {
		done := make(chan struct{})
		var code int
		var b []byte
		go func() {
			defer close(done)
			code, b = postJSON(s.url+"/v1/tools/mark/call", `{"arguments":{"message":"local"}}`, "")
		}()
		return func() (int, []byte) { <-done; return code, b }
	}()
	a = pending(s, "")
	if code, b := s.do("POST", "/v1/approvals/"+a.ID+"/approve", `{"digest":"`+a.Digest+`","note":"console"}`); code != 200 {
		t.Errorf("keyless approve: %d %s", code, b)
	}
	if code, b := wait(); code != 200 || !strings.Contains(string(b), `"ok":true`) {
		t.Errorf("the keyless approved call: %d %s", code, b)
	}
	s.stop(syscall.SIGTERM, 10*time.Second)
}

// postJSON posts body with a key ("" for none) from any goroutine (the
// server's do fails the test, which only the test's goroutine may).
func postJSON(url, body, key string) (int, []byte) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := (&http.Client{Timeout: commandLimit}).Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestJourneyKeyMadeWhileServing: the docs' order of things, `wield keys
// create` while `wield serve` runs and a request with the new key at once:
// the key works from that request, not only once the server's
// once-a-second look at the keys file comes round (a 401 that a retry a
// moment later does not get).
func TestJourneyKeyMadeWhileServing(t *testing.T) {
	u := newUser(t)
	first, _ := makeKey(t, u, "--rights", "call", "--name", "first")
	s := u.serve()
	for i := range 3 {
		// A request with a known key first: the server has just looked at
		// the keys file when the next key is made.
		if code, b := s.do("GET", "/v1/whoami", "", bearer(first)); code != 200 {
			t.Fatalf("whoami with the first key: %d %s", code, b)
		}
		late, id := makeKey(t, u, "--rights", "call", "--name", fmt.Sprintf("late-%d", i))
		code, b := s.do("GET", "/v1/whoami", "", bearer(late))
		if code != 200 || !strings.Contains(string(b), id) {
			t.Fatalf("whoami with key %s made just now: %d %s, want 200 naming it", id, code, b)
		}
	}
	if code, _ := s.do("GET", "/v1/whoami", "", bearer("wield_nobody")); code != 401 {
		t.Errorf("whoami with a secret no key has: %d, want 401", code)
	}
}
