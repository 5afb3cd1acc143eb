package mcpbridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// eraInputFixture is a server whose confirm tool "wipe" counts its runs,
// over a SQLite store and the durable approval inbox, with approvals in
// the protocol on.
type eraInputFixture struct {
	*srvFixture
	store *sqlite.Store
	inbox *approval.Inbox
	runs  *atomic.Int32
}

func eraInputNew(t *testing.T, noFast bool, ttl time.Duration, opts ...func(*mcpbridge.ServerOptions)) *eraInputFixture {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(ctx) })
	inbox := approval.New(store, &approval.Options{Poll: 20 * time.Millisecond})
	t.Cleanup(func() { inbox.Close() })
	runs := &atomic.Int32{}
	wipe := wield.Func("wipe_counted", "Delete everything", func(_ context.Context, in srvEchoIn) (string, error) {
		runs.Add(1)
		return "wiped " + in.Message, nil
	})
	wipe.Permission = wield.PermissionConfirm
	key := []byte(strings.Repeat("k", mcpbridge.MinStateKey))
	sopts := &mcpbridge.ServerOptions{DisableFastPath: noFast, InputRequired: &mcpbridge.InputRequiredOptions{Key: key, Approvals: store, TTL: ttl}}
	for _, o := range opts {
		o(sopts)
	}
	f := srvNew(t, sopts,
		&engine.Options{Store: store, Approver: mcpbridge.NewApprover(inbox)}, wipe)
	return &eraInputFixture{srvFixture: f, store: store, inbox: inbox, runs: runs}
}

// eraMeta is the _meta of a 2026-07-28 request from a client that can
// elicit (caps "") or that declared caps.
func eraMeta(caps string) string {
	if caps == "" {
		caps = `{"elicitation":{"form":{}}}`
	}
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

func eraCallBody(id int, args, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wipe_counted","arguments":%s,%s%s}}`, id, args, eraMeta(""), extra)
}

// eraRetry is the retry's extra params: the answer (none when answer is
// "") and the state.
func eraRetry(answer, state string) string {
	s, _ := json.Marshal(state)
	if answer == "" {
		return `"requestState":` + string(s)
	}
	return `"inputResponses":{"wield_approval":` + answer + `},"requestState":` + string(s)
}

const eraYes = `{"action":"accept","content":{"approve":true}}`

// eraAsk makes the first request and returns its state, checking the
// input_required answer.
func eraAsk(t *testing.T, f *eraInputFixture, args string) string {
	t.Helper()
	r := srvEraPost(t, f.srv.Handler(), eraCallBody(1, args, ""))
	res, _ := eraMap(r)["result"].(map[string]any)
	if res == nil || res["resultType"] != "input_required" {
		t.Fatalf("first request: %v, want an input_required result", r.body)
	}
	ir, _ := res["inputRequests"].(map[string]any)["wield_approval"].(map[string]any)
	params, _ := ir["params"].(map[string]any)
	msg, _ := params["message"].(string)
	if ir["method"] != "elicitation/create" || params["mode"] != "form" || !strings.Contains(msg, "'wipe_counted'") || params["requestedSchema"] == nil {
		t.Errorf("input request %v: want an elicitation naming the tool", ir)
	}
	state, _ := res["requestState"].(string)
	if state == "" {
		t.Fatal("no requestState")
	}
	return state
}

func eraMap(r srvReply) map[string]any {
	m, _ := r.body.(map[string]any)
	return m
}

func eraErr(r srvReply) string {
	e, _ := eraMap(r)["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func eraText(r srvReply) (string, bool) {
	res, _ := eraMap(r)["result"].(map[string]any)
	if res == nil || res["resultType"] != "complete" {
		return fmt.Sprint(r.body), false
	}
	c, _ := res["content"].([]any)
	if len(c) != 1 {
		return fmt.Sprint(r.body), false
	}
	txt, _ := c[0].(map[string]any)["text"].(string)
	return txt, res["isError"] == true
}

// TestServerEraInputRequired checks approvals in the protocol, on the fast
// path and on the go-sdk's: a confirm call of a client that can elicit is
// answered input_required with its approval pending in the inbox and
// nothing run or recorded; the retry that approves runs it once, under the
// call ID the first request gave it, one record; a replay, a changed
// state, other arguments and an expired state are refused with a clear
// error; a decline is a refusal recorded; an approval from the inbox
// first gives the retry the result; a client that cannot elicit waits in
// the inbox as before.
func TestServerEraInputRequired(t *testing.T) {
	for _, noFast := range []bool{false, true} {
		t.Run(fmt.Sprintf("sdk=%v", noFast), func(t *testing.T) {
			ctx := context.Background()
			f := eraInputNew(t, noFast, 0)
			h := f.srv.Handler()
			state := eraAsk(t, f, `{"message":"disk"}`)
			pending, err := f.inbox.Pending(ctx)
			if err != nil || len(pending) != 1 || f.runs.Load() != 0 {
				t.Fatalf("after input_required: %d pending (%v), %d runs; want 1 and 0", len(pending), err, f.runs.Load())
			}
			if page, _ := f.store.Calls(ctx, wield.CallQuery{}); len(page.Records) != 0 {
				t.Errorf("%d records before the answer, want 0", len(page.Records))
			}

			// Refused before anything is decided.
			refusals := []struct{ name, body, want string }{
				{"tampered", eraCallBody(2, `{"message":"disk"}`, eraRetry(eraYes, state[:len(state)-3]+"AAA")), "signature does not match"},
				{"forged", eraCallBody(3, `{"message":"disk"}`, eraRetry(eraYes, "w1.eyJ2IjoxfQ.AAAA")), "signature does not match"},
				{"garbage", eraCallBody(4, `{"message":"disk"}`, eraRetry(eraYes, "hello")), "unknown format"},
				{"other arguments", eraCallBody(5, `{"message":"home"}`, eraRetry(eraYes, state)), "other arguments"},
				{"bad answer", eraCallBody(6, `{"message":"disk"}`, eraRetry(`{"action":"maybe"}`, state)), "is not accept, decline or cancel"},
			}
			for _, rf := range refusals {
				r := srvEraPost(t, h, rf.body)
				if got := eraErr(r); !strings.Contains(got, rf.want) {
					t.Errorf("%s: error %q (reply %v), want one saying %q", rf.name, got, r.body, rf.want)
				}
			}
			// No answer: asked again, the same state.
			r := srvEraPost(t, h, eraCallBody(7, `{"message":"disk"}`, eraRetry("", state)))
			if res, _ := eraMap(r)["result"].(map[string]any); res == nil || res["resultType"] != "input_required" || res["requestState"] != state {
				t.Errorf("retry without an answer: %v, want input_required again with the same state", r.body)
			}

			r = srvEraPost(t, h, eraCallBody(8, `{"message":"disk"}`, eraRetry(eraYes, state)))
			if txt, isErr := eraText(r); txt != "wiped disk" || isErr {
				t.Fatalf("approving retry: %q (error %v), want the tool's result", txt, isErr)
			}
			r = srvEraPost(t, h, eraCallBody(9, `{"message":"disk"}`, eraRetry(eraYes, state)))
			if got := eraErr(r); !strings.Contains(got, "already answered") {
				t.Errorf("replay: %q (reply %v), want it refused as already answered", got, r.body)
			}
			if n := f.runs.Load(); n != 1 {
				t.Errorf("the tool ran %d times, want once", n)
			}
			page, err := f.store.Calls(ctx, wield.CallQuery{})
			if err != nil || len(page.Records) != 1 {
				t.Fatalf("%d records (%v), want 1", len(page.Records), err)
			}
			rec := page.Records[0]
			if rec.Call.ID != pending[0].CallID || rec.Call.ApprovalID != pending[0].ID || rec.Call.Caller.ID != "mcp:raw" {
				t.Errorf("record %+v: want call %s of approval %s by mcp:raw", rec.Call, pending[0].CallID, pending[0].ID)
			}
			a, err := f.store.Approval(ctx, pending[0].ID)
			if err != nil || a.Status != wield.ApprovalApproved || a.Decision.By != "mcp:raw (input_required)" || a.ClaimedAt.IsZero() {
				t.Errorf("approval %+v (%v): want approved by the client, claimed", a, err)
			}

			// Declined: refused and recorded.
			state = eraAsk(t, f, `{"message":"declined"}`)
			r = srvEraPost(t, h, eraCallBody(10, `{"message":"declined"}`, eraRetry(`{"action":"decline"}`, state)))
			if txt, isErr := eraText(r); !isErr || !strings.Contains(txt, "denied") {
				t.Errorf("declining retry: %q (error %v), want the refusal", txt, isErr)
			}

			// Approved from the inbox (the console) first: the retry gets
			// the result of the one run.
			state = eraAsk(t, f, `{"message":"console"}`)
			pending, _ = f.inbox.Pending(ctx)
			if len(pending) != 1 {
				t.Fatalf("%d pending, want 1", len(pending))
			}
			if _, err := f.inbox.Decide(ctx, pending[0].ID, pending[0].Digest, wield.Decision{Approved: true, By: "local"}); err != nil {
				t.Fatal(err)
			}
			r = srvEraPost(t, h, eraCallBody(11, `{"message":"console"}`, eraRetry(eraYes, state)))
			if txt, isErr := eraText(r); txt != "wiped console" || isErr {
				t.Errorf("retry after the console approved: %q (error %v), want the result", txt, isErr)
			}
			if n := f.runs.Load(); n != 2 {
				t.Errorf("the tool ran %d times, want twice (disk, console)", n)
			}
			if page, _ := f.store.Calls(ctx, wield.CallQuery{}); len(page.Records) != 3 {
				t.Errorf("%d records, want 3 (approved, declined, console)", len(page.Records))
			}
		})
	}
}

// TestServerEraInputRequiredExpired checks that a state past its TTL is
// refused, saying so.
func TestServerEraInputRequiredExpired(t *testing.T) {
	f := eraInputNew(t, false, time.Nanosecond)
	state := eraAsk(t, f, `{"message":"late"}`)
	r := srvEraPost(t, f.srv.Handler(), eraCallBody(2, `{"message":"late"}`, eraRetry(eraYes, state)))
	if got := eraErr(r); !strings.Contains(got, "expired") || r.status != 400 {
		t.Errorf("expired state: %d %q, want 400 and an error saying it expired", r.status, got)
	}
	if f.runs.Load() != 0 {
		t.Error("the tool ran on an expired state")
	}
}

// TestServerEraInputRequiredNotAsked checks who is not asked: a client
// that declared no elicitation (or only URL elicitation) waits in the
// inbox as before, and a client presenting an API key is asked only when
// the server allows self-approval.
func TestServerEraInputRequiredNotAsked(t *testing.T) {
	for _, caps := range []string{`{}`, `{"elicitation":{"url":{}}}`} {
		f := eraInputNew(t, false, 0)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wipe_counted","arguments":{"message":"x"},%s}}`, eraMeta(caps))
		done := make(chan srvReply, 1)
		go func() { done <- srvEraPost(t, f.srv.Handler(), body) }()
		var pending []*wield.Approval
		srvEventually(t, "the call waiting in the inbox", func() bool {
			pending, _ = f.inbox.Pending(context.Background())
			return len(pending) == 1
		})
		if _, err := f.inbox.Decide(context.Background(), pending[0].ID, pending[0].Digest, wield.Decision{Approved: true, By: "local"}); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			if txt, isErr := eraText(r); txt != "wiped x" || isErr {
				t.Errorf("caps %s: %q, want the result after the inbox's decision", caps, txt)
			}
		case <-time.After(srvWait):
			t.Fatalf("caps %s: no answer after the decision", caps)
		}
	}
}

// asKey serves h to requests made with an API key, as the REST server's
// authentication says it (wield.WithRequester).
func asKey(h http.Handler, key string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(wield.WithRequester(r.Context(), key)))
	})
}

// TestServerEraInputRequiredSelfApproval checks a client with an API key:
// without self-approval its confirm call waits in the inbox (the key that
// asked may not decide); with it, it is asked in the protocol, and the
// state is bound to the key: another key's retry is refused.
func TestServerEraInputRequiredSelfApproval(t *testing.T) {
	f := eraInputNew(t, false, 0)
	body := eraCallBody(1, `{"message":"k"}`, "")
	done := make(chan srvReply, 1)
	go func() { done <- srvEraPost(t, asKey(f.srv.Handler(), "key:model"), body) }()
	var pending []*wield.Approval
	srvEventually(t, "the keyed call waiting in the inbox", func() bool {
		pending, _ = f.inbox.Pending(context.Background())
		return len(pending) == 1
	})
	if pending[0].RequestedBy != "key:model" {
		t.Errorf("requested by %q, want key:model", pending[0].RequestedBy)
	}
	if _, err := f.inbox.Decide(context.Background(), pending[0].ID, pending[0].Digest, wield.Decision{Approved: false, By: "key:reviewer"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if _, isErr := eraText(r); !isErr {
			t.Errorf("keyed call: %v, want the reviewer's denial", r.body)
		}
	case <-time.After(srvWait):
		t.Fatal("no answer after the decision")
	}

	f = eraInputNew(t, false, 0, func(o *mcpbridge.ServerOptions) { o.InputRequired.SelfApproval = true })
	r := srvEraPost(t, asKey(f.srv.Handler(), "key:model"), body)
	res, _ := eraMap(r)["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" {
		t.Fatalf("keyed call with self-approval: %v, want input_required", r.body)
	}
	r = srvEraPost(t, asKey(f.srv.Handler(), "key:other"), eraCallBody(2, `{"message":"k"}`, eraRetry(eraYes, state)))
	if got := eraErr(r); !strings.Contains(got, "another client or key") {
		t.Errorf("another key's retry: %q, want it refused", got)
	}
	r = srvEraPost(t, asKey(f.srv.Handler(), "key:model"), eraCallBody(3, `{"message":"k"}`, eraRetry(eraYes, state)))
	if txt, isErr := eraText(r); txt != "wiped k" || isErr {
		t.Errorf("the key's own retry: %q, want the result", txt)
	}
	if f.runs.Load() != 1 {
		t.Errorf("the tool ran %d times, want once", f.runs.Load())
	}
}

// TestServerEraInputRequiredStdio checks approvals in the protocol over
// stdio, which the go-sdk serves: a 2026-07-28 request that can elicit is
// answered input_required, and the retry runs the call once.
func TestServerEraInputRequiredStdio(t *testing.T) {
	f := eraInputNew(t, false, 0)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.ServeStdio(ctx, sr, sw) }()
	t.Cleanup(func() {
		stop()
		cw.Close()
		cr.Close()
		<-done
	})
	lines := bufio.NewScanner(cr)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	ask := func(body string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(cw, body+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s: %v", body, lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("answer %q: %v", lines.Bytes(), err)
		}
		return m
	}
	first := ask(eraCallBody(1, `{"message":"pipe"}`, ""))
	res, _ := first["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" {
		t.Fatalf("first call over stdio: %v, want input_required", first)
	}
	second := ask(eraCallBody(2, `{"message":"pipe"}`, eraRetry(eraYes, state)))
	res, _ = second["result"].(map[string]any)
	if c, _ := res["content"].([]any); res["resultType"] != "complete" || len(c) != 1 || c[0].(map[string]any)["text"] != "wiped pipe" {
		t.Errorf("retry over stdio: %v, want the result", second)
	}
	if f.runs.Load() != 1 {
		t.Errorf("the tool ran %d times, want once", f.runs.Load())
	}
}

// TestServerEraInputRequiredAnswersAsSDK compares the input_required
// answer of the fast path with the go-sdk's, the state aside (each server
// signs its own approval).
func TestServerEraInputRequiredAnswersAsSDK(t *testing.T) {
	var answers []any
	for _, noFast := range []bool{false, true} {
		f := eraInputNew(t, noFast, 0)
		r := srvEraPost(t, f.srv.Handler(), eraCallBody(1, `{"message":"same"}`, ""))
		res, _ := eraMap(r)["result"].(map[string]any)
		if res == nil || res["requestState"] == "" {
			t.Fatalf("sdk=%v: %v, want input_required", noFast, r.body)
		}
		res["requestState"] = "(signed)"
		answers = append(answers, srvNormal(r.body))
	}
	if diff := cmp.Diff(answers[1], answers[0]); diff != "" {
		t.Errorf("input_required (-sdk +fast):\n%s", diff)
	}
}

// TestServerEraInputRequiredConcurrentRetries sends the same approving
// retry eight times at once: one runs the call, the others are refused as
// already answered, and the tool runs once.
func TestServerEraInputRequiredConcurrentRetries(t *testing.T) {
	f := eraInputNew(t, false, 0)
	state := eraAsk(t, f, `{"message":"race"}`)
	const n = 8
	replies := make(chan srvReply, n)
	for i := range n {
		go func() {
			replies <- srvEraPost(t, f.srv.Handler(), eraCallBody(10+i, `{"message":"race"}`, eraRetry(eraYes, state)))
		}()
	}
	ran, refused := 0, 0
	for range n {
		select {
		case r := <-replies:
			if txt, isErr := eraText(r); txt == "wiped race" && !isErr {
				ran++
			} else if strings.Contains(eraErr(r), "already answered") {
				refused++
			} else {
				t.Errorf("retry: %v", r.body)
			}
		case <-time.After(srvWait):
			t.Fatal("a retry did not answer")
		}
	}
	if ran != 1 || refused != n-1 || f.runs.Load() != 1 {
		t.Errorf("%d results, %d refused, %d runs; want 1, %d, 1", ran, refused, f.runs.Load(), n-1)
	}
}

// TestServerEraInputRequiredToolNoLongerConfirm checks a tool whose
// permission changed to auto between the question and the answer: the
// retry runs it once and claims the approval, so that no server taking up
// decided approvals runs it again.
func TestServerEraInputRequiredToolNoLongerConfirm(t *testing.T) {
	ctx := context.Background()
	f := eraInputNew(t, false, 0)
	state := eraAsk(t, f, `{"message":"auto"}`)
	pending, _ := f.inbox.Pending(ctx)
	if len(pending) != 1 {
		t.Fatalf("%d pending, want 1", len(pending))
	}
	tool, _ := f.reg.Tool("wipe_counted")
	auto := *tool
	auto.Permission = wield.PermissionAuto
	if err := f.reg.Update(&auto); err != nil {
		t.Fatal(err)
	}
	r := srvEraPost(t, f.srv.Handler(), eraCallBody(2, `{"message":"auto"}`, eraRetry(eraYes, state)))
	if txt, isErr := eraText(r); txt != "wiped auto" || isErr {
		t.Fatalf("retry: %q, want the result", txt)
	}
	a, err := f.store.Approval(ctx, pending[0].ID)
	if err != nil || a.ClaimedAt.IsZero() {
		t.Errorf("approval %+v (%v): want it claimed", a, err)
	}
	if _, err := f.eng.Resume(ctx, a); err != nil || f.runs.Load() != 1 {
		t.Errorf("resumed: %v, %d runs; want nothing run again", err, f.runs.Load())
	}
}

// TestServerEraInputRequiredGoSDKClient checks interop with the go-sdk's
// own client of 2026-07-28, which answers input_required itself (its
// elicitation handler, then the retry): on a server offering only that
// revision (so no client is steered to the handshake), a confirm call is
// asked, approved and run once, on the fast path and the go-sdk's.
func TestServerEraInputRequiredGoSDKClient(t *testing.T) {
	for _, noFast := range []bool{false, true} {
		f := eraInputNew(t, noFast, 0, func(o *mcpbridge.ServerOptions) { o.ProtocolVersions = []string{"2026-07-28"} })
		var mu sync.Mutex
		var asked []string
		cs := srvConnect(t, f.srvFixture, srvEra2026, "/mcp", srvAnswer("accept", map[string]any{"approve": true}, &asked, &mu))
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("negotiated %q, want 2026-07-28", v)
		}
		got := srvViewOf(srvCall(t, cs, "wipe_counted", map[string]any{"message": "sdk"}))
		if diff := cmp.Diff(srvView{Text: []string{"wiped sdk"}}, got); diff != "" {
			t.Errorf("sdk=%v: call (-want +got):\n%s", noFast, diff)
		}
		mu.Lock()
		if len(asked) != 1 || !strings.Contains(asked[0], "'wipe_counted'") {
			t.Errorf("sdk=%v: questions %q, want one naming the tool", noFast, asked)
		}
		mu.Unlock()
		if f.runs.Load() != 1 {
			t.Errorf("sdk=%v: the tool ran %d times, want once", noFast, f.runs.Load())
		}
	}
}
