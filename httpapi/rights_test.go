package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// rightsServer serves echo, calculator (toolset math) and purge (a confirm
// tool, toolset danger) with an approval inbox, on a store of its own.
func rightsServer(t *testing.T, keys *Keyring, opts Options) (*Server, *httptest.Server, *engine.Engine) {
	t.Helper()
	return rightsServerUnder(t, keys, opts, nil)
}

// rightsServerUnder is rightsServer with the engine deciding by pol.
func rightsServerUnder(t *testing.T, keys *Keyring, opts Options, pol wield.Policy) (*Server, *httptest.Server, *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	purge := wield.Func("purge", "Delete the rows of a table", func(_ context.Context, in struct {
		Table string `json:"table"`
	}) (string, error) {
		return "purged " + in.Table, nil
	})
	purge.Permission = wield.PermissionConfirm
	reg.MustRegister(builtin.Echo(), builtin.Calculator(), purge)
	for _, ts := range []wield.Toolset{{Name: "math", Tools: []string{"calculator"}}, {Name: "danger", Tools: []string{"purge"}}} {
		if err := reg.DefineToolset(ts); err != nil {
			t.Fatal(err)
		}
	}
	inbox := approval.New(store, &approval.Options{Poll: 20 * time.Millisecond})
	t.Cleanup(func() { inbox.Close() })
	eng := engine.New(reg, &engine.Options{Store: store, Approver: inbox, Policy: pol})
	t.Cleanup(func() { eng.Close(context.Background()) })
	opts.Engine, opts.Store, opts.Approvals, opts.Keys = eng, store, inbox, keys
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return s, hs, eng
}

// keyedRightsServer is rightsServer (with no other options) for the keys
// of file, which the test made with mustKey.
func keyedRightsServer(t *testing.T, file string) *httptest.Server {
	t.Helper()
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs, _ := rightsServer(t, ring, Options{})
	return hs
}

// mustKey makes a key in the keys file and returns its secret and ID.
func mustKey(t *testing.T, file string, toolsets []string, rights ...Right) (string, string) {
	t.Helper()
	secret, k, err := CreateKey(file, "", rights[0], toolsets, rights[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return secret, k.ID
}

func TestParseRights(t *testing.T) {
	tests := []struct {
		in   string
		want []Right
		err  string
	}{
		{"call", []Right{RightCall}, ""},
		{"call,approve", []Right{RightCall, RightApprove}, ""},
		{" read , metrics ", []Right{RightRead, RightMetrics}, ""},
		{"workflow", []Right{RightWorkflow}, ""},
		{"admin", nil, `unknown right "admin"; the rights are read, call, approve, metrics, workflow, keys, pins`},
		{"call,,approve", nil, "an empty name"},
		{"call,call", nil, `"call" is named twice`},
	}
	for _, tt := range tests {
		got, err := ParseRights(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseRights(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseRights(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestKeyRights shows what each way of holding rights grants: a key of a
// keys file written before rights were a list keeps call and gains nothing
// (approve above all), a configuration key is the operator's.
func TestKeyRights(t *testing.T) {
	tests := []struct {
		name string
		key  Key
		want []Right
	}{
		{"old read key", Key{Right: RightRead}, []Right{RightRead}},
		{"old call key: call does not imply approve", Key{Right: RightCall}, []Right{RightRead, RightCall}},
		{"new call key", Key{Right: RightCall, Rights: []Right{RightCall}}, []Right{RightRead, RightCall}},
		{"approve only", Key{Right: RightRead, Rights: []Right{RightApprove}}, []Right{RightRead, RightApprove}},
		{"config key", ConfigKey(0, "s"), []Right{RightRead, RightCall, RightApprove, RightMetrics, RightPins}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.key.Granted()); diff != "" {
			t.Errorf("%s: rights (-want +got)\n%s", tt.name, diff)
		}
	}
	var old Key
	if err := json.Unmarshal([]byte(`{"id":"key_1","sha256":"ab","right":"call"}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Has(RightApprove) || !old.Has(RightCall) {
		t.Errorf("a keys file's old call key: approve %v, call %v; want false, true", old.Has(RightApprove), old.Has(RightCall))
	}
	file := filepath.Join(t.TempDir(), "keys.json")
	if _, _, err := CreateKey(file, "", RightMetrics, []string{"math"}); err == nil || !strings.Contains(err.Error(), "scoped to toolsets cannot have it") {
		t.Errorf("a scoped metrics key: %v", err)
	}
	_, k, err := CreateKey(file, "", RightCall, nil, RightApprove, RightCall, RightRead)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Key{Right: RightCall, Rights: []Right{RightCall, RightApprove}}, Key{Right: k.Right, Rights: k.Rights}); diff != "" {
		t.Errorf("CreateKey(call, approve, call, read) (-want +got)\n%s", diff)
	}
}

// TestWorkflowBypassNeedsRight is the attack of a caller that lifts the
// concurrency limits by saying it is a workflow node: refused (403, naming
// the right) unless the key has the workflow right, or the keyless server
// was told to allow it.
func TestWorkflowBypassNeedsRight(t *testing.T) {
	const body = `{"arguments":{"message":"hi"},"caller":{"id":"n1","type":"workflow_node"}}`
	bypassed := func(t *testing.T, e *engine.Engine) int64 { return e.Limiter().Metrics().Bypassed }

	t.Run("keys", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "keys.json")
		caller, _ := mustKey(t, file, nil, RightCall)
		flow, _ := mustKey(t, file, nil, RightCall, RightWorkflow)
		ring, err := NewKeyring(file)
		if err != nil {
			t.Fatal(err)
		}
		_, hs, eng := rightsServer(t, ring, Options{AllowWorkflowBypass: true}) // no effect with keys
		status, b := do(t, hs, "POST", "/v1/tools/echo/call", caller, body)
		if status != 403 || !strings.Contains(string(b), `lacks the \"workflow\" right`) {
			t.Errorf("a call key claiming workflow_node: %d %s; want 403 naming the workflow right", status, b)
		}
		status, b = do(t, hs, "POST", "/v1/batch", caller, `{"calls":[{"tool":"echo","arguments":{"message":"x"},"caller":{"type":"workflow_node"}}]}`)
		if status != 403 {
			t.Errorf("a batch claiming workflow_node with a call key: %d %s; want 403", status, b)
		}
		if n := bypassed(t, eng); n != 0 {
			t.Errorf("bypassed = %d after refusals", n)
		}
		if status, b := do(t, hs, "POST", "/v1/tools/echo/call", flow, body); status != 200 {
			t.Errorf("a workflow key: %d %s", status, b)
		}
		if n := bypassed(t, eng); n != 1 {
			t.Errorf("bypassed = %d after the workflow key's call; want 1", n)
		}
		if status, b := do(t, hs, "POST", "/v1/tools/echo/call", caller, `{"arguments":{"message":"hi"},"caller":{"type":"conversation_agent"}}`); status != 200 {
			t.Errorf("a call key as an ordinary caller: %d %s", status, b)
		}
	})
	t.Run("keyless", func(t *testing.T) {
		_, hs, eng := rightsServer(t, nil, Options{})
		status, b := do(t, hs, "POST", "/v1/tools/echo/call", "", body)
		if status != 403 || !strings.Contains(string(b), "server.allow_workflow_bypass") {
			t.Errorf("keyless, workflow_node: %d %s; want 403 naming server.allow_workflow_bypass", status, b)
		}
		if n := bypassed(t, eng); n != 0 {
			t.Errorf("bypassed = %d", n)
		}
	})
	t.Run("keyless allowed", func(t *testing.T) {
		_, hs, eng := rightsServer(t, nil, Options{AllowWorkflowBypass: true})
		if status, b := do(t, hs, "POST", "/v1/tools/echo/call", "", body); status != 200 {
			t.Errorf("keyless with AllowWorkflowBypass: %d %s", status, b)
		}
		if n := bypassed(t, eng); n != 1 {
			t.Errorf("bypassed = %d; want 1", n)
		}
	})
}

// TestScopedFigures is the attack of a scoped key reading the figures of
// other scopes: statistics (totals and categories), conversation
// summaries, caller summaries and /metrics.
func TestScopedFigures(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	all, _ := mustKey(t, file, nil, RightCall, RightMetrics)
	math, _ := mustKey(t, file, []string{"math"}, RightCall)
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs, _ := rightsServer(t, ring, Options{})
	caller := `"caller":{"id":"agent-1","conversation_id":"c1"}`
	for i := range 3 {
		if status, b := do(t, hs, "POST", "/v1/tools/echo/call", all, fmt.Sprintf(`{"arguments":{"message":"secret %d"},%s}`, i, caller)); status != 200 {
			t.Fatalf("echo: %d %s", status, b)
		}
	}
	if status, b := do(t, hs, "POST", "/v1/tools/calculator/call", math, `{"arguments":{"expression":"6*7"},`+caller+`}`); status != 200 {
		t.Fatalf("calculator: %d %s", status, b)
	}

	var st struct {
		Overall    struct{ Count int }
		Tools      map[string]json.RawMessage
		Categories map[string]struct{ Count int }
	}
	eventually(t, func() bool {
		_, b := do(t, hs, "GET", "/v1/statistics", all, "")
		return json.Unmarshal(b, &st) == nil && st.Overall.Count == 4
	})
	st.Tools, st.Categories = nil, nil
	status, b := do(t, hs, "GET", "/v1/statistics", math, "")
	if status != 200 || json.Unmarshal(b, &st) != nil {
		t.Fatalf("statistics: %d %s", status, b)
	}
	sum := 0
	for _, c := range st.Categories {
		sum += c.Count
	}
	if st.Overall.Count != 1 || len(st.Tools) != 1 || st.Tools["calculator"] == nil || sum != 1 {
		t.Errorf("the math key's statistics count other tools' calls: %s", b)
	}

	var conv wield.Summary
	status, b = do(t, hs, "GET", "/v1/conversations/c1/summary", math, "")
	if status != 200 || json.Unmarshal(b, &conv) != nil {
		t.Fatalf("summary: %d %s", status, b)
	}
	want := wield.Summary{ConversationID: "c1", TotalCalls: 1, SuccessfulCalls: 1, SuccessRate: 100, ToolUsage: map[string]int{"calculator": 1}}
	if diff := cmp.Diff(want, conv); diff != "" {
		t.Errorf("the math key's summary of c1 (-want +got)\n%s", diff)
	}
	status, b = do(t, hs, "GET", "/v1/conversations/c1/summary", all, "")
	if status != 200 || json.Unmarshal(b, &conv) != nil || conv.TotalCalls != 4 {
		t.Errorf("the unscoped key's summary of c1: %d %s", status, b)
	}

	status, b = do(t, hs, "GET", "/v1/callers/agent-1/summary", math, "")
	if status != 200 || strings.Contains(string(b), "echo") || strings.Contains(string(b), "secret") || !strings.Contains(string(b), "calculator") {
		t.Errorf("the math key's caller summary shows other tools: %d %s", status, b)
	}

	status, b = do(t, hs, "GET", "/metrics", math, "")
	if status != 403 || !strings.Contains(string(b), `lacks the \"metrics\" right`) {
		t.Errorf("/metrics with a scoped call key: %d %.200s; want 403 naming the metrics right", status, b)
	}
	if status, b := do(t, hs, "GET", "/metrics", all, ""); status != 200 || !strings.Contains(string(b), "wield_http_requests_total") {
		t.Errorf("/metrics with a metrics key: %d %.200s", status, b)
	}
}

// TestScopedMetricsKeyRefused: a keys file edited by hand to give a scoped
// key the metrics right still does not show it every tool's series.
func TestScopedMetricsKeyRefused(t *testing.T) {
	ring, err := NewKeyring("", Key{ID: "k1", Hash: HashKey("s"), Toolsets: []string{"math"}, Right: RightRead, Rights: []Right{RightMetrics}})
	if err != nil {
		t.Fatal(err)
	}
	_, hs, _ := rightsServer(t, ring, Options{})
	if status, b := do(t, hs, "GET", "/metrics", "s", ""); status != 403 || !strings.Contains(string(b), "scoped to toolsets") {
		t.Errorf("/metrics with a scoped metrics key: %d %.200s", status, b)
	}
}

// pendingOf waits for the one pending approval of tool and returns it.
func pendingOf(t *testing.T, hs *httptest.Server, key, tool string) *wield.Approval {
	t.Helper()
	var found *wield.Approval
	eventually(t, func() bool {
		var list ApprovalList
		_, b := do(t, hs, "GET", "/v1/approvals", key, "")
		if json.Unmarshal(b, &list) != nil {
			return false
		}
		for _, a := range list.Approvals {
			if a.Tool == tool {
				found = a
				return true
			}
		}
		return false
	})
	return found
}

// callAsync calls tool with key in the background; the returned function
// waits for the answer.
func callAsync(t *testing.T, hs *httptest.Server, key, tool, args string) func() (int, []byte) {
	var wg sync.WaitGroup
	var status int
	var body []byte
	wg.Add(1)
	go func() {
		defer wg.Done()
		status, body = do(t, hs, "POST", "/v1/tools/"+tool+"/call", key, `{"arguments":`+args+`}`)
	}()
	return func() (int, []byte) { wg.Wait(); return status, body }
}

// TestApprovalNeedsItsOwnRight is the attack of a key that calls a confirm
// tool and approves the call itself: a call key lacks the approve right,
// and the key that asked is refused even with it; another approve key
// decides, and the decision names it.
func TestApprovalNeedsItsOwnRight(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	agent, _ := mustKey(t, file, nil, RightCall)
	both, bothID := mustKey(t, file, nil, RightCall, RightApprove)
	reviewer, reviewerID := mustKey(t, file, nil, RightApprove)
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	decide := func(hs *httptest.Server, key string, a *wield.Approval) (int, []byte) {
		return do(t, hs, "POST", "/v1/approvals/"+a.ID+"/approve", key, `{"digest":"`+a.Digest+`","note":"me"}`)
	}

	t.Run("refused", func(t *testing.T) {
		_, hs, _ := rightsServer(t, ring, Options{})
		wait := callAsync(t, hs, agent, "purge", `{"table":"users"}`)
		a := pendingOf(t, hs, reviewer, "purge")
		status, b := decide(hs, agent, a)
		if status != 403 || !strings.Contains(string(b), `lacks the \"approve\" right`) {
			t.Errorf("the call key approves its own call: %d %s; want 403 naming the approve right", status, b)
		}
		if status, b := do(t, hs, "POST", "/v1/approvals/"+a.ID+"/deny", agent, `{"digest":"`+a.Digest+`"}`); status != 403 {
			t.Errorf("the call key denies: %d %s; want 403", status, b)
		}
		if status, b := decide(hs, reviewer, a); status != 200 || !strings.Contains(string(b), `"by":"key:`+reviewerID+`"`) || !strings.Contains(string(b), `"note":"me"`) {
			t.Errorf("the reviewer approves: %d %s", status, b)
		}
		if status, b := wait(); status != 200 || !strings.Contains(string(b), "purged users") {
			t.Errorf("the approved call: %d %s", status, b)
		}

		wait = callAsync(t, hs, both, "purge", `{"table":"orders"}`)
		a = pendingOf(t, hs, reviewer, "purge")
		if a.RequestedBy != "key:"+bothID {
			t.Errorf("requested_by = %q, want key:%s", a.RequestedBy, bothID)
		}
		status, b = decide(hs, both, a)
		if status != 403 || !strings.Contains(string(b), "the key that asked cannot decide") {
			t.Errorf("a call+approve key approves its own call: %d %s; want 403", status, b)
		}
		if status, b := do(t, hs, "POST", "/v1/approvals/"+a.ID+"/deny", reviewer, `{"digest":"`+a.Digest+`"}`); status != 200 {
			t.Errorf("the reviewer denies: %d %s", status, b)
		}
		if status, b := wait(); status != 200 || !strings.Contains(string(b), "approval_denied") {
			t.Errorf("the denied call: %d %s", status, b)
		}
	})
	t.Run("self-approval allowed", func(t *testing.T) {
		_, hs, _ := rightsServer(t, ring, Options{SelfApproval: true})
		wait := callAsync(t, hs, both, "purge", `{"table":"logs"}`)
		a := pendingOf(t, hs, both, "purge")
		if status, b := decide(hs, both, a); status != 200 {
			t.Errorf("self-approval allowed: %d %s", status, b)
		}
		if status, b := wait(); status != 200 || !strings.Contains(string(b), "purged logs") {
			t.Errorf("the approved call: %d %s", status, b)
		}
	})
	t.Run("keyless", func(t *testing.T) {
		_, hs, _ := rightsServer(t, nil, Options{})
		wait := callAsync(t, hs, "", "purge", `{"table":"tmp"}`)
		a := pendingOf(t, hs, "", "purge")
		if a.RequestedBy != "" {
			t.Errorf("keyless requested_by = %q", a.RequestedBy)
		}
		if status, b := decide(hs, "", a); status != 200 || !strings.Contains(string(b), `"by":"local user"`) {
			t.Errorf("a keyless server approves as today, by the local user: %d %s", status, b)
		}
		if status, b := wait(); status != 200 || !strings.Contains(string(b), "purged tmp") {
			t.Errorf("the approved call: %d %s", status, b)
		}
	})
}

// TestDecisionByIsTheDecider is the attack of a key holder who records a
// decision under another name: by is refused in the body, and the decision
// names the key that made it; the client's text is kept as note only.
func TestDecisionByIsTheDecider(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	agent, _ := mustKey(t, file, nil, RightCall)
	reviewer, reviewerID := mustKey(t, file, nil, RightApprove)
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs, _ := rightsServer(t, ring, Options{})
	wait := callAsync(t, hs, agent, "purge", `{"table":"users"}`)
	a := pendingOf(t, hs, reviewer, "purge")
	status, b := do(t, hs, "POST", "/v1/approvals/"+a.ID+"/approve", reviewer, `{"digest":"`+a.Digest+`","by":"the CEO"}`)
	if status != 400 || !strings.Contains(string(b), "by is not taken") {
		t.Errorf("a decision by another name: %d %s; want 400 saying by is not taken", status, b)
	}
	status, b = do(t, hs, "POST", "/v1/approvals/"+a.ID+"/approve", reviewer, `{"digest":"`+a.Digest+`","note":"the CEO said so"}`)
	var got wield.Approval
	if status != 200 || json.Unmarshal(b, &got) != nil || got.Decision == nil {
		t.Fatalf("approve with a note: %d %s", status, b)
	}
	want := wield.Decision{Approved: true, By: "key:" + reviewerID, Note: "the CEO said so"}
	if diff := cmp.Diff(want, *got.Decision); diff != "" {
		t.Errorf("the decision (-want +got):\n%s", diff)
	}
	if status, b := wait(); status != 200 {
		t.Errorf("the approved call: %d %s", status, b)
	}
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for range 250 {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("condition not met within 5 s")
}

// TestHiddenToolApprovals: a key that may only read, from which the
// policies hide purge, reads no approval of purge (the list leaves it out,
// its ID answers as an approval that does not exist); a key that decides
// approvals reads it, though the policies let it call nothing: an approver
// must see what it is asked to decide.
func TestHiddenToolApprovals(t *testing.T) {
	set := policySet(t, `@id("callers") permit(principal == Key::"caller", action, resource);
@id("reader") permit(principal == Key::"reader", action, resource) unless { resource.name == "purge" };`)
	ring, err := NewKeyring("",
		Key{ID: "caller", Hash: HashKey("c"), Right: RightCall},
		Key{ID: "reader", Hash: HashKey("r"), Right: RightRead},
		Key{ID: "approver", Hash: HashKey("a"), Right: RightRead, Rights: []Right{RightApprove}})
	if err != nil {
		t.Fatal(err)
	}
	_, hs, _ := rightsServerUnder(t, ring, Options{}, set)
	wait := callAsync(t, hs, "c", "purge", `{"table":"users"}`)
	a := pendingOf(t, hs, "a", "purge")
	var list ApprovalList
	if _, b := do(t, hs, "GET", "/v1/approvals", "r", ""); json.Unmarshal(b, &list) != nil || len(list.Approvals) != 0 {
		t.Errorf("the reader's list of approvals: %s, want none (purge is hidden from it)", b)
	}
	hidden, hb := do(t, hs, "GET", "/v1/approvals/"+a.ID, "r", "")
	unknown, ub := do(t, hs, "GET", "/v1/approvals/no-such-approval", "r", "")
	if hidden != 404 || hidden != unknown || string(hb) != string(ub) {
		t.Errorf("the reader reads purge's approval: %d %s; an unknown one: %d %s", hidden, hb, unknown, ub)
	}
	if code, b := do(t, hs, "GET", "/v1/approvals/"+a.ID, "a", ""); code != 200 {
		t.Errorf("the approver reads purge's approval: %d %s", code, b)
	}
	if code, b := do(t, hs, "POST", "/v1/approvals/"+a.ID+"/approve", "a", `{"digest":"`+a.Digest+`"}`); code != 200 {
		t.Fatalf("approve: %d %s", code, b)
	}
	if code, b := wait(); code != 200 {
		t.Errorf("the approved call: %d %s", code, b)
	}
}
