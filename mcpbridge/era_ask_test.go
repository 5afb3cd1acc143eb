package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
	"github.com/wieldhq/wield/toolfile"
)

// eraAskFixture serves a tool "survey" that does something once (counts a
// side effect), then asks the client's user a name (Elicit) and the
// client's model a greeting (Sample), with approvals in the protocol on
// (which carries the tool's questions too), over a SQLite store.
type eraAskFixture struct {
	*srvFixture
	store   *sqlite.Store
	effects *atomic.Int32 // runs of the tool's side effect
	errs    chan error    // what Elicit or Sample returned the tool, when it failed
}

func eraAskNew(t *testing.T, noFast bool, o mcpbridge.InputRequiredOptions) *eraAskFixture {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(ctx) })
	effects := &atomic.Int32{}
	errs := make(chan error, 16)
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"}}
	survey := wield.Func("survey", "Ask a name, then a greeting", func(ctx context.Context, in srvEchoIn) (string, error) {
		effects.Add(1)
		content, action, err := mcpbridge.Elicit(ctx, "Your name? ("+in.Message+")", schema)
		if err != nil {
			errs <- err
			return "", err
		}
		if action != mcpbridge.ActionAccept {
			return "no name: " + action, nil
		}
		name, _ := content["name"].(string)
		res, err := mcpbridge.Sample(ctx, []mcpbridge.SampleMessage{{Role: "user", Text: "Greet " + name}}, 50)
		if err != nil {
			errs <- err
			return "", err
		}
		return fmt.Sprintf("%s / %s (%s)", name, res.Text, res.Model), nil
	})
	o.Key = []byte(strings.Repeat("k", mcpbridge.MinStateKey))
	o.Approvals = store
	f := srvNew(t, &mcpbridge.ServerOptions{DisableFastPath: noFast, InputRequired: &o}, &engine.Options{Store: store}, survey)
	return &eraAskFixture{srvFixture: f, store: store, effects: effects, errs: errs}
}

func eraAskBody(id int, args, caps, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"survey","arguments":%s,%s%s}}`, id, args, eraMeta(caps), extra)
}

const eraAskCaps = `{"elicitation":{"form":{}},"sampling":{}}`

// eraAsked returns the input_required result's one question (key, method)
// and state, failing when the reply is not one.
func eraAsked(t *testing.T, r srvReply) (key, method string, params map[string]any, state string) {
	t.Helper()
	res, _ := eraMap(r)["result"].(map[string]any)
	if res == nil || res["resultType"] != "input_required" {
		t.Fatalf("reply %v, want an input_required result", r.body)
	}
	irs, _ := res["inputRequests"].(map[string]any)
	if len(irs) != 1 {
		t.Fatalf("inputRequests %v, want one", irs)
	}
	for k, v := range irs {
		m, _ := v.(map[string]any)
		key, method = k, fmt.Sprint(m["method"])
		params, _ = m["params"].(map[string]any)
	}
	state, _ = res["requestState"].(string)
	if state == "" {
		t.Fatal("no requestState")
	}
	return key, method, params, state
}

func eraAnswer(key, answer, state string) string {
	s, _ := json.Marshal(state)
	return `"inputResponses":{"` + key + `":` + answer + `},"requestState":` + string(s)
}

// eraRecords returns the records of survey, once the call that ended has
// been recorded (bounded wait).
func eraRecords(t *testing.T, store *sqlite.Store, want int) []*wield.Record {
	t.Helper()
	deadline := time.Now().Add(srvWait)
	for {
		page, err := store.Calls(context.Background(), wield.CallQuery{Tool: "survey"})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Records) >= want || time.Now().After(deadline) {
			return page.Records
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerEraAskRoundTrip checks a tool's own questions in the protocol,
// on the fast path and on the go-sdk's: the call asks (input_required, the
// elicitation in inputRequests), hostile retries are refused and leave it
// waiting, the answer resumes it where it asked (its side effect done
// once), its next question (sampling) is a new round with a new state, the
// answer to that one ends it with its result, one record; spent states are
// refused.
func TestServerEraAskRoundTrip(t *testing.T) {
	for _, noFast := range []bool{false, true} {
		t.Run(fmt.Sprintf("sdk=%v", noFast), func(t *testing.T) {
			f := eraAskNew(t, noFast, mcpbridge.InputRequiredOptions{})
			h := f.srv.Handler()
			args := `{"message":"hi"}`
			key, method, params, state := eraAsked(t, srvEraPost(t, h, eraAskBody(1, args, eraAskCaps, "")))
			if key != "wield_elicit_1" || method != "elicitation/create" || params["mode"] != "form" || params["message"] != "Your name? (hi)" || params["requestedSchema"] == nil {
				t.Errorf("question %s %s %v, want the tool's elicitation under wield_elicit_1", key, method, params)
			}
			if f.srv.Waiting() != 1 || f.effects.Load() != 1 {
				t.Fatalf("%d waiting, %d effects; want the call parked after its effect", f.srv.Waiting(), f.effects.Load())
			}

			huge := `{"action":"accept","content":{"name":"` + strings.Repeat("x", 300<<10) + `"}}`
			refusals := []struct{ name, body, want string }{
				{"tampered", eraAskBody(2, args, eraAskCaps, eraAnswer(key, `{"action":"accept","content":{"name":"Bo"}}`, state[:len(state)-3]+"AAA")), "signature does not match"},
				{"other arguments", eraAskBody(3, `{"message":"ho"}`, eraAskCaps, eraAnswer(key, `{"action":"accept","content":{"name":"Bo"}}`, state)), "other arguments"},
				{"bad action", eraAskBody(4, args, eraAskCaps, eraAnswer(key, `{"action":"maybe"}`, state)), "is not accept, decline or cancel"},
				{"wrong shape", eraAskBody(5, args, eraAskCaps, eraAnswer(key, `{"action":"accept","content":{"name":5}}`, state)), "does not match the schema"},
				{"missing field", eraAskBody(6, args, eraAskCaps, eraAnswer(key, `{"action":"accept","content":{}}`, state)), "does not match the schema"},
				{"sampling answer to an elicitation", eraAskBody(7, args, eraAskCaps, eraAnswer(key, `{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}`, state)), "inputResponses"},
				{"huge", eraAskBody(9, args, eraAskCaps, eraAnswer(key, huge, state)), ""},
			}
			for _, rf := range refusals {
				r := srvEraPost(t, h, rf.body)
				if got := eraErr(r); got == "" || !strings.Contains(got, rf.want) {
					t.Errorf("%s: error %q (reply %.300v), want one saying %q", rf.name, got, r.body, rf.want)
				}
			}
			if f.srv.Waiting() != 1 || f.effects.Load() != 1 {
				t.Fatalf("after the refusals: %d waiting, %d effects; want the call still waiting, its effect once", f.srv.Waiting(), f.effects.Load())
			}
			// No answer: asked again, the same state.
			k2, _, _, s2 := eraAsked(t, srvEraPost(t, h, eraAskBody(10, args, eraAskCaps, `"requestState":"`+state+`"`)))
			if k2 != key || s2 != state {
				t.Errorf("retry without an answer: %s %s, want the same question and state", k2, s2)
			}
			// A key that names no question is ignored (the revision's
			// SHOULD): no answer, so asked again.
			k3, _, _, s3 := eraAsked(t, srvEraPost(t, h, eraAskBody(8, args, eraAskCaps, `"inputResponses":{"other":{"action":"decline"}},"requestState":"`+state+`"`)))
			if k3 != key || s3 != state || f.srv.Waiting() != 1 {
				t.Errorf("retry with an unknown key only: %s %s (%d waiting), want the same question and state, the call waiting", k3, s3, f.srv.Waiting())
			}

			// The answer: the tool goes on to its next question.
			key2, method2, params2, state2 := eraAsked(t, srvEraPost(t, h, eraAskBody(11, args, eraAskCaps, eraAnswer(key, `{"action":"accept","content":{"name":"Bo"}}`, state))))
			if key2 != "wield_sample_2" || method2 != "sampling/createMessage" || state2 == state {
				t.Errorf("second question %s %s (%v), want sampling under wield_sample_2 with a new state", key2, method2, params2)
			}
			// The first state is spent.
			if got := eraErr(srvEraPost(t, h, eraAskBody(12, args, eraAskCaps, eraAnswer(key, `{"action":"accept","content":{"name":"Al"}}`, state)))); !strings.Contains(got, "already answered") {
				t.Errorf("replayed first state: %q, want it refused as already answered", got)
			}
			r := srvEraPost(t, h, eraAskBody(13, args, eraAskCaps, eraAnswer(key2, `{"role":"assistant","content":{"type":"text","text":"Hello Bo"},"model":"m1","stopReason":"endTurn"}`, state2)))
			if txt, isErr := eraText(r); txt != "Bo / Hello Bo (m1)" || isErr {
				t.Fatalf("final retry: %q (error %v), want the tool's result", txt, isErr)
			}
			if got := eraErr(srvEraPost(t, h, eraAskBody(14, args, eraAskCaps, eraAnswer(key2, `{"role":"assistant","content":{"type":"text","text":"x"},"model":"m1"}`, state2)))); !strings.Contains(got, "not waiting") {
				t.Errorf("replayed last state: %q, want it refused as not waiting", got)
			}
			if recs := eraRecords(t, f.store, 1); len(recs) != 1 || !recs[0].Result.OK || recs[0].Call.Caller.ID != "mcp:raw" {
				t.Errorf("records %+v, want one, successful, by mcp:raw", recs)
			}
			if f.effects.Load() != 1 || f.srv.Waiting() != 0 {
				t.Errorf("%d effects, %d waiting; want 1 and 0", f.effects.Load(), f.srv.Waiting())
			}
		})
	}
}

// TestServerEraAskDecline checks that a declined question reaches the tool
// as the action, the call ending with the tool's own answer.
func TestServerEraAskDecline(t *testing.T) {
	f := eraAskNew(t, false, mcpbridge.InputRequiredOptions{})
	h := f.srv.Handler()
	key, _, _, state := eraAsked(t, srvEraPost(t, h, eraAskBody(1, `{"message":"hi"}`, eraAskCaps, "")))
	if txt, isErr := eraText(srvEraPost(t, h, eraAskBody(2, `{"message":"hi"}`, eraAskCaps, eraAnswer(key, `{"action":"decline"}`, state)))); txt != "no name: decline" || isErr {
		t.Errorf("declined: %q (error %v)", txt, isErr)
	}
}

// TestServerEraAskCallerBound checks that a state answered by another
// client is refused and leaves the call waiting.
func TestServerEraAskCallerBound(t *testing.T) {
	f := eraAskNew(t, false, mcpbridge.InputRequiredOptions{})
	h := f.srv.Handler()
	key, _, _, state := eraAsked(t, srvEraPost(t, h, eraAskBody(1, `{"message":"hi"}`, eraAskCaps, "")))
	other := strings.Replace(eraAskBody(2, `{"message":"hi"}`, eraAskCaps, eraAnswer(key, `{"action":"decline"}`, state)), `"name":"raw"`, `"name":"intruder"`, 1)
	if got := eraErr(srvEraPost(t, h, other)); !strings.Contains(got, "another client") {
		t.Errorf("another client's retry: %q, want it refused", got)
	}
	if f.srv.Waiting() != 1 {
		t.Errorf("%d waiting, want the call still waiting", f.srv.Waiting())
	}
}

// TestServerEraAskExpired checks that a question unanswered within the TTL
// ends its wait: the tool's Elicit fails with ErrNoAnswer, the call is
// recorded once, the state is refused as expired, and nothing waits.
func TestServerEraAskExpired(t *testing.T) {
	f := eraAskNew(t, false, mcpbridge.InputRequiredOptions{TTL: 150 * time.Millisecond})
	h := f.srv.Handler()
	key, _, _, state := eraAsked(t, srvEraPost(t, h, eraAskBody(1, `{"message":"hi"}`, eraAskCaps, "")))
	select {
	case err := <-f.errs:
		if !errors.Is(err, mcpbridge.ErrNoAnswer) {
			t.Errorf("the tool's Elicit returned %v, want ErrNoAnswer", err)
		}
	case <-time.After(srvWait):
		t.Fatal("the tool's question never ended")
	}
	if got := eraErr(srvEraPost(t, h, eraAskBody(2, `{"message":"hi"}`, eraAskCaps, eraAnswer(key, `{"action":"decline"}`, state)))); !strings.Contains(got, "expired") {
		t.Errorf("late retry: %q, want it refused as expired", got)
	}
	if recs := eraRecords(t, f.store, 1); len(recs) != 1 || recs[0].Result.OK {
		t.Errorf("records %+v, want one, failed", recs)
	}
	if f.srv.Waiting() != 0 || f.effects.Load() != 1 {
		t.Errorf("%d waiting, %d effects; want 0 and 1", f.srv.Waiting(), f.effects.Load())
	}
}

// TestServerEraAskBounded checks the bounds of parked calls: past
// MaxWaitingPerClient a client's next question fails in the tool with
// ErrTooManyWaiting (the call ends with the tool's error, not parked),
// another client still parks, and past MaxWaiting no one does.
func TestServerEraAskBounded(t *testing.T) {
	f := eraAskNew(t, false, mcpbridge.InputRequiredOptions{MaxWaiting: 2, MaxWaitingPerClient: 1})
	h := f.srv.Handler()
	addr := map[string]string{"a": "127.0.0.2", "b": "127.0.0.3", "c": "127.0.0.4"}
	as := func(client string, id int) srvReply {
		from := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.RemoteAddr = addr[client] + ":1234" // a client is its address (no ClientKey)
			h.ServeHTTP(w, r)
		})
		return srvEraPost(t, from, strings.Replace(eraAskBody(id, `{"message":"hi"}`, eraAskCaps, ""), `"name":"raw"`, `"name":"`+client+`"`, 1))
	}
	eraAsked(t, as("a", 1))
	r := as("a", 2)
	if txt, isErr := eraText(r); !isErr {
		t.Errorf("a's second call: %q (error %v), want the tool's error", txt, isErr)
	}
	if err := <-f.errs; !errors.Is(err, mcpbridge.ErrTooManyWaiting) {
		t.Errorf("the tool's Elicit returned %v, want ErrTooManyWaiting", err)
	}
	eraAsked(t, as("b", 3))
	if _, isErr := eraText(as("c", 4)); !isErr {
		t.Error("c's call past MaxWaiting: want the tool's error")
	}
	if err := <-f.errs; !errors.Is(err, mcpbridge.ErrTooManyWaiting) {
		t.Errorf("the tool's Elicit returned %v, want ErrTooManyWaiting", err)
	}
	if n := f.srv.Waiting(); n != 2 {
		t.Errorf("%d waiting, want 2", n)
	}
}

// TestServerEraAskClose checks that closing the server ends the calls
// waiting for answers: their questions fail with ErrNoAnswer.
func TestServerEraAskClose(t *testing.T) {
	f := eraAskNew(t, false, mcpbridge.InputRequiredOptions{})
	eraAsked(t, srvEraPost(t, f.srv.Handler(), eraAskBody(1, `{"message":"hi"}`, eraAskCaps, "")))
	f.srv.Close()
	select {
	case err := <-f.errs:
		if !errors.Is(err, mcpbridge.ErrNoAnswer) {
			t.Errorf("the tool's Elicit returned %v, want ErrNoAnswer", err)
		}
	case <-time.After(srvWait):
		t.Fatal("the waiting call did not end with the server")
	}
	deadline := time.Now().Add(srvWait)
	for f.srv.Waiting() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := f.srv.Waiting(); n != 0 {
		t.Errorf("%d waiting after Close, want 0", n)
	}
}

// TestServerEraAskNoCapability checks that a client of 2026-07-28 that
// declared neither capability is not asked: Elicit fails with
// ErrUnsupported in the tool, and the call, which failed for want of it,
// is answered -32021 naming elicitation (HTTP 400), on either path.
func TestServerEraAskNoCapability(t *testing.T) {
	for _, noFast := range []bool{false, true} {
		t.Run(fmt.Sprintf("sdk=%v", noFast), func(t *testing.T) {
			f := eraAskNew(t, noFast, mcpbridge.InputRequiredOptions{})
			r := srvEraPost(t, f.srv.Handler(), eraAskBody(1, `{"message":"hi"}`, `{}`, ""))
			e, _ := eraMap(r)["error"].(map[string]any)
			data, _ := e["data"].(map[string]any)
			req, _ := data["requiredCapabilities"].(map[string]any)
			if r.status != http.StatusBadRequest || e["code"] != float64(mcpbridge.CodeMissingCapability) || req["elicitation"] == nil || len(req) != 1 {
				t.Errorf("reply %d %v, want HTTP 400 and error -32021 requiring elicitation", r.status, r.body)
			}
			if err := <-f.errs; !errors.Is(err, mcpbridge.ErrUnsupported) {
				t.Errorf("Elicit returned %v, want ErrUnsupported", err)
			}
		})
	}
}

// TestServerEraAskGoSDKClient checks the round trip with the go-sdk's own
// client of 2026-07-28 (v1.8.0), which answers input_required itself: on a
// server offering both eras it is not steered to the handshake, its
// handlers are asked once each, and the call runs once, one record; over
// HTTP (both paths) and stdio.
func TestServerEraAskGoSDKClient(t *testing.T) {
	for _, tr := range []struct {
		noFast bool
		tr     srvTransport
	}{{false, srvEra2026}, {true, srvEra2026}, {false, srvStdio2026}} {
		noFast := fmt.Sprintf("%v/%s", tr.noFast, tr.tr)
		f := eraAskNew(t, tr.noFast, mcpbridge.InputRequiredOptions{})
		var mu sync.Mutex
		var asked []string
		copts := &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked = append(asked, r.Params.Message)
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Bo"}}, nil
			},
			CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				mu.Lock()
				asked = append(asked, r.Params.Messages[0].Content.(*mcp.TextContent).Text)
				mu.Unlock()
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m1", Content: &mcp.TextContent{Text: "Hello Bo"}}, nil
			},
		}
		cs := srvConnect(t, f.srvFixture, tr.tr, "/mcp", copts)
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("sdk=%v: negotiated %q, want 2026-07-28 (not steered)", noFast, v)
		}
		got := srvViewOf(srvCall(t, cs, "survey", map[string]any{"message": "hi"}))
		if len(got.Text) != 1 || got.Text[0] != "Bo / Hello Bo (m1)" || got.IsError {
			t.Errorf("sdk=%v: result %+v", noFast, got)
		}
		mu.Lock()
		if strings.Join(asked, "|") != "Your name? (hi)|Greet Bo" {
			t.Errorf("sdk=%v: asked %q", noFast, asked)
		}
		mu.Unlock()
		if recs := eraRecords(t, f.store, 1); len(recs) != 1 || f.effects.Load() != 1 {
			t.Errorf("sdk=%v: %d records, %d effects; want 1 and 1", noFast, len(recs), f.effects.Load())
		}
	}
}

// TestServerEraAskNamedKeys checks the keys a tool file names (the key of
// an elicit or sample step, WithInputKey in Go): the questions go under
// them in inputRequests, round after round, and the retries answer under
// them.
func TestServerEraAskNamedKeys(t *testing.T) {
	const file = `
- name: steps
  description: Two named questions
  entry:
    type: mcp_client
    steps:
      - elicit: {message: "Step 1: name?", schema: {type: object, properties: {name: {type: string}}, required: [name]}, key: step1, as: one}
      - sample: {prompt: "Greet {{.one.content.name}}", max_tokens: 10, key: step2, as: two}
    text: "{{.one.content.name}}: {{.two.text}}"
`
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"mcp_client": mcpbridge.ClientKind()}}
	set, err := l.Load(context.Background(), filepath.Join(t.TempDir(), "steps.yaml"), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	key := []byte(strings.Repeat("k", mcpbridge.MinStateKey))
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	f := srvNew(t, &mcpbridge.ServerOptions{InputRequired: &mcpbridge.InputRequiredOptions{Key: key, Approvals: store}}, nil, set.Tools...)
	h := f.srv.Handler()
	body := func(id int, extra string) string {
		if extra != "" {
			extra = "," + extra
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"steps","arguments":{},%s%s}}`, id, eraMeta(eraAskCaps), extra)
	}
	k1, m1, _, s1 := eraAsked(t, srvEraPost(t, h, body(1, "")))
	if k1 != "step1" || m1 != "elicitation/create" {
		t.Fatalf("first question %s %s, want elicitation under step1", k1, m1)
	}
	k2, m2, _, s2 := eraAsked(t, srvEraPost(t, h, body(2, eraAnswer("step1", `{"action":"accept","content":{"name":"Bo"}}`, s1))))
	if k2 != "step2" || m2 != "sampling/createMessage" {
		t.Fatalf("second question %s %s, want sampling under step2", k2, m2)
	}
	if txt, isErr := eraText(srvEraPost(t, h, body(3, eraAnswer("step2", `{"role":"assistant","content":{"type":"text","text":"hi Bo"},"model":"m"}`, s2)))); txt != "Bo: hi Bo" || isErr {
		t.Errorf("final: %q (error %v)", txt, isErr)
	}
}

// BenchmarkServerEraAsk measures, on the fast path of a server that asks
// in the protocol: a plain tools/call (echo) from a 2026-07-28 client that
// declared no capability and from one that declared elicitation and
// sampling (whose call runs on a goroutine of its own, to be parked should
// it ask), and a whole round trip of a tool that asks once (input_required,
// then the retry with the answer).
func BenchmarkServerEraAsk(b *testing.B) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "wield.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close(ctx) })
	ask := wield.Func("ask", "Ask a name", func(ctx context.Context, _ srvEchoIn) (string, error) {
		content, _, err := mcpbridge.Elicit(ctx, "Name?", nil)
		if err != nil {
			return "", err
		}
		return fmt.Sprint(len(content)), nil
	})
	key := []byte(strings.Repeat("k", mcpbridge.MinStateKey))
	f := srvNew(b, &mcpbridge.ServerOptions{InputRequired: &mcpbridge.InputRequiredOptions{Key: key, Approvals: store}}, &engine.Options{}, ask)
	h := f.srv.Handler()
	call := func(tool, caps, extra string) string {
		if extra != "" {
			extra = "," + extra
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"%s","arguments":{"message":"hi"},%s%s}}`, tool, eraMeta(caps), extra)
	}
	post := func(body, tool string) string {
		w := srvPost(h, body, srvEraHeaders("tools/call", tool)...)
		if w.Code != 200 {
			b.Fatalf("tools/call: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	for _, c := range []struct{ name, caps string }{{"echo-no-capability", `{}`}, {"echo-can-be-asked", eraAskCaps}} {
		body := call("echo", c.caps, "")
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out := post(body, "echo"); !strings.Contains(out, `\"echo\":\"hi\"`) {
					b.Fatal(out)
				}
			}
		})
	}
	first := call("ask", eraAskCaps, "")
	b.Run("ask-round-trip", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r struct {
				Result struct {
					RequestState string `json:"requestState"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(post(first, "ask")), &r); err != nil || r.Result.RequestState == "" {
				b.Fatal(err)
			}
			if out := post(call("ask", eraAskCaps, eraAnswer("wield_elicit_1", `{"action":"accept","content":{}}`, r.Result.RequestState)), "ask"); !strings.Contains(out, `"complete"`) {
				b.Fatal(out)
			}
		}
	})
}

// TestServerEraAskConcurrentRetries checks that of retries racing with the
// same state and answer, one takes the answer and the others are refused:
// the tool gets one answer.
func TestServerEraAskConcurrentRetries(t *testing.T) {
	f := eraAskNew(t, false, mcpbridge.InputRequiredOptions{})
	h := f.srv.Handler()
	key, _, _, state := eraAsked(t, srvEraPost(t, h, eraAskBody(1, `{"message":"hi"}`, eraAskCaps, "")))
	const n = 6
	replies := make([]srvReply, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			replies[i] = srvEraPost(t, h, eraAskBody(10+i, `{"message":"hi"}`, eraAskCaps, eraAnswer(key, `{"action":"accept","content":{"name":"Bo"}}`, state)))
		})
	}
	wg.Wait()
	asked, refused := 0, 0
	for _, r := range replies {
		if res, _ := eraMap(r)["result"].(map[string]any); res != nil && res["resultType"] == "input_required" {
			asked++
		} else if strings.Contains(eraErr(r), "already answered") {
			refused++
		}
	}
	if asked != 1 || refused != n-1 {
		t.Errorf("%d retries went on to the next question, %d were refused; want 1 and %d", asked, refused, n-1)
	}
	if f.effects.Load() != 1 || f.srv.Waiting() != 1 {
		t.Errorf("%d effects, %d waiting; want 1 and 1", f.effects.Load(), f.srv.Waiting())
	}
}

// TestServerEraAskBoundedByAddress checks that the per-client bound of
// parked calls counts the client as the server knows it (its API key,
// else its address), not the clientInfo name it gives itself: one address
// naming itself anew in each call parked as many calls as the server
// takes, and no other client could be asked anything.
func TestServerEraAskBoundedByAddress(t *testing.T) {
	for _, noFast := range []bool{false, true} {
		f := eraAskNew(t, noFast, mcpbridge.InputRequiredOptions{MaxWaiting: 3, MaxWaitingPerClient: 1})
		as := func(addr, name string, id int) srvReply {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.RemoteAddr = addr + ":1234"
				f.srv.Handler().ServeHTTP(w, r)
			})
			return srvEraPost(t, h, strings.Replace(eraAskBody(id, `{"message":"hi"}`, eraAskCaps, ""), `"name":"raw"`, `"name":"`+name+`"`, 1))
		}
		eraAsked(t, as("127.0.0.2", "a", 1))
		if _, isErr := eraText(as("127.0.0.2", "renamed", 2)); !isErr {
			t.Errorf("a second call from the same address under another name (go-sdk path %v): want the tool's error", noFast)
		} else if err := <-f.errs; !errors.Is(err, mcpbridge.ErrTooManyWaiting) {
			t.Errorf("the tool's Elicit returned %v, want ErrTooManyWaiting", err)
		}
		eraAsked(t, as("127.0.0.3", "a", 3))
		if n := f.srv.Waiting(); n != 2 {
			t.Errorf("go-sdk path %v: %d waiting, want 2", noFast, n)
		}
	}
}

// TestServerEraAskGoroutines counts goroutines: calls parked on their
// questions hold one each while they wait, and none is left once their
// waits expire, nor once the server closes. The engine keeps idle workers
// (up to 128) for its next calls: the count is taken after a first round
// of calls has made them.
func TestServerEraAskGoroutines(t *testing.T) {
	settle := func(want int) int {
		deadline := time.Now().Add(srvWait)
		n := runtime.NumGoroutine()
		for n > want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			n = runtime.NumGoroutine()
		}
		return n
	}
	const calls = 10
	for _, end := range []string{"expiry", "close"} {
		f := eraAskNew(t, false, mcpbridge.InputRequiredOptions{TTL: 300 * time.Millisecond})
		before := 0
		for round := range 2 {
			for i := range calls {
				eraAsked(t, srvEraPost(t, f.srv.Handler(), eraAskBody(round*calls+i+1, fmt.Sprintf(`{"message":"%d"}`, round*calls+i), eraAskCaps, "")))
			}
			if n := f.srv.Waiting(); n != calls {
				t.Fatalf("%d waiting, want %d", n, calls)
			}
			if n := runtime.NumGoroutine(); round == 1 && n < before+calls {
				t.Errorf("%s: %d goroutines with %d calls parked, %d before: want one a call at least", end, n, calls, before)
			}
			if round == 1 && end == "close" {
				f.srv.Close()
			}
			for range calls {
				select {
				case err := <-f.errs:
					if !errors.Is(err, mcpbridge.ErrNoAnswer) {
						t.Errorf("%s: the tool's Elicit returned %v, want ErrNoAnswer", end, err)
					}
				case <-time.After(srvWait):
					t.Fatalf("%s: a parked call never ended", end)
				}
			}
			eraRecords(t, f.store, (round+1)*calls)
			if round == 0 {
				// The count once it holds still for 200 ms.
				before = runtime.NumGoroutine()
				for deadline := time.Now().Add(srvWait); time.Now().Before(deadline); {
					time.Sleep(200 * time.Millisecond)
					n := runtime.NumGoroutine()
					if n == before {
						break
					}
					before = n
				}
				continue
			}
			if n := settle(before); n > before {
				buf := make([]byte, 1<<20)
				t.Errorf("%s: %d goroutines once the parked calls ended, %d before:\n%s", end, n, before, buf[:runtime.Stack(buf, true)])
			}
			if n := f.srv.Waiting(); n != 0 {
				t.Errorf("%s: %d waiting, want 0", end, n)
			}
		}
	}
}
