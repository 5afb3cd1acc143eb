package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
)

// serveTools are the tool files of the served program: a tool that needs
// approval, a toolset and an agent.
const serveTools = `name: guarded_echo
description: Echo after a person approves
permission: confirm
parameters:
  - name: message
    type: string
entry: {type: builtin, handler: echo}
---
kind: toolset
name: math
tools: [calculator]
---
kind: agent
name: helper
tools: [echo, calculator]
`

// stderrWriter collects the program's stderr and hands over the address
// of the "listening on" line.
type stderrWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
	sent bool
}

func (w *stderrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.sent {
		const marker = "listening on http://"
		s := w.buf.String()
		if i := strings.Index(s, marker); i >= 0 {
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				w.addr <- s[i+len(marker) : i+j]
				w.sent = true
			}
		}
	}
	return len(p), nil
}

func (w *stderrWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// served is the whole program serving on a port of its own.
type served struct {
	url    string
	db     string
	stderr *stderrWriter
	stop   func() int
}

// startServe runs `wield serve` as main runs it, on 127.0.0.1:0, with the
// test's own database and keys file, and stops it at the end of the test.
func startServe(t *testing.T, keysFile string, extra ...string) *served {
	t.Helper()
	return startServeOn(t, "", keysFile, extra...)
}

// startServeOn is startServe on the store db (a --db value; "" is a
// SQLite file of the test's own).
func startServeOn(t *testing.T, db, keysFile string, extra ...string) *served {
	t.Helper()
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "t.yaml"), []byte(serveTools), 0o644); err != nil {
		t.Fatal(err)
	}
	if keysFile == "" {
		keysFile = filepath.Join(dir, "keys.json")
	}
	if db == "" {
		db = "sqlite:" + filepath.Join(dir, "w.db")
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db,
		"--tools", tools, "--keys", keysFile, "--heartbeat", "50ms"}, extra...)
	s := launchServe(t, args)
	s.db = db
	return s
}

// launchServe runs the program with args (a serve command that listens on
// 127.0.0.1:0) until it prints its address, and stops it at the end of the
// test. The returned stop waits for the exit code (-1 when it did not stop
// within 30 s).
func launchServe(t *testing.T, args []string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &stderrWriter{addr: make(chan string, 1)}
	done := make(chan int, 1)
	go func() { done <- Run(ctx, args, strings.NewReader(""), io.Discard, w) }()
	s := &served{stderr: w}
	select {
	case addr := <-w.addr:
		s.url = "http://" + addr
	case code := <-done:
		cancel()
		t.Fatalf("serve exited with %d before listening:\n%s", code, w.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("serve did not listen within 30 s:\n%s", w.String())
	}
	var once sync.Once
	code := -1
	s.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Errorf("serve did not stop within 30 s:\n%s", w.String())
			}
		})
		return code
	}
	t.Cleanup(func() { s.stop() })
	return s
}

// request sends a request to the served program and checks that a JSON
// answer fits the OpenAPI document.
func (s *served) request(t *testing.T, method, path, key, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if method != "GET" && method != "HEAD" {
		// As every client of the API does: a server without keys refuses
		// other bodies (a web page's forms and beacons).
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	p, _, _ := strings.Cut(path, "?")
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && p != "/openapi.json" {
		if err := httpapi.CheckAnswer(method, p, resp.StatusCode, b); err != nil {
			t.Errorf("%s %s: %v\n%.500s", method, path, err, b)
		}
	}
	return resp.StatusCode, b
}

func errCode(b []byte) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Error.Code
}

// TestServeEndpoints drives every endpoint of the served program and holds
// each answer to the OpenAPI document.
func TestServeEndpoints(t *testing.T) {
	addrFile := filepath.Join(t.TempDir(), "addr")
	s := startServe(t, "", "--addr-file", addrFile)
	if b, err := os.ReadFile(addrFile); err != nil || "http://"+strings.TrimSpace(string(b)) != s.url {
		t.Errorf("--addr-file holds %q (%v), want the address of %s", b, err, s.url)
	}
	c := httpapi.NewClient(s.url, "")
	ctx := context.Background()

	// Calls to query afterwards.
	for _, m := range []string{"one", "two", "three"} {
		res, err := c.Call(ctx, "echo", httpapi.CallRequest{Arguments: json.RawMessage(`{"message":"` + m + `"}`), Caller: wield.Caller{ConversationID: "c1"}})
		if err != nil || !res.OK {
			t.Fatalf("call echo: %+v, %v", res, err)
		}
	}
	bad, err := c.Call(ctx, "calculator", httpapi.CallRequest{Arguments: json.RawMessage(`{}`), Caller: wield.Caller{ConversationID: "c1"}})
	if err != nil || bad.OK || bad.ErrorType != wield.ErrValidation {
		t.Fatalf("call calculator without an expression: %+v, %v", bad, err)
	}
	art, err := c.CreateArtifact(ctx, httpapi.ArtifactCreate{Title: "plan", Type: "markdown", Content: "# Plan\n\nStep one: buy milk.\n"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Calls(ctx, wield.CallQuery{ConversationID: "c1", Limit: 2})
	if err != nil || len(first.Calls) != 2 || first.Next == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}

	tests := []struct {
		method, path, body string
		status             int
		contains           string // in the body
	}{
		{"GET", "/healthz", "", 200, `"ok"`},
		{"GET", "/readyz", "", 200, `"ready"`},
		{"GET", "/metrics", "", 200, `wield_calls_total{outcome="ok",tool="echo"} 3`},
		{"GET", "/metrics", "", 200, `wield_calls_total{outcome="validation_error",tool="calculator"} 1`},
		{"GET", "/openapi.json", "", 200, `"openapi": "3.1.0"`},
		{"GET", "/v1/tools", "", 200, `"name":"guarded_echo"`},
		{"GET", "/v1/tools?category=data&tag=math", "", 200, `"name":"calculator"`},
		{"GET", "/v1/tools?toolset=math", "", 200, `"name":"calculator"`},
		{"GET", "/v1/tools?agent=helper", "", 200, `"name":"echo"`},
		{"GET", "/v1/tools?format=openai&toolset=math", "", 200, `"type": "function"`},
		{"GET", "/v1/tools?format=openai-strict&toolset=math", "", 200, `"strict": true`},
		{"GET", "/v1/tools?format=anthropic&toolset=math", "", 200, `"input_schema"`},
		{"GET", "/v1/tools?format=gemini&toolset=math", "", 200, `"functionDeclarations"`},
		{"GET", "/v1/tools?format=mcp&toolset=math", "", 200, `"inputSchema"`},
		{"GET", "/v1/tools?format=xml&toolset=math", "", 200, `tool_call`},
		{"GET", "/v1/tools?format=json-prompt&toolset=math", "", 200, `calculator`},
		{"GET", "/v1/tools?toolset=nope", "", 404, `"not_found"`},
		{"GET", "/v1/tools/guarded_echo", "", 200, `"permission":"confirm"`},
		{"GET", "/v1/tools/nope", "", 404, `"not_found"`},
		{"POST", "/v1/tools/echo/call", `{"arguments":{"message":"hi"},"caller":{"conversation_id":"c2"}}`, 200, `"ok":true`},
		{"POST", "/v1/tools/calculator/call", `{"arguments":{"expression":"1/0"}}`, 200, `"error_type":"execution_error"`},
		{"POST", "/v1/tools/nope/call", `{}`, 200, `"error_type":"tool_not_found"`},
		{"POST", "/v1/tools/echo/call", `{"arguments":{"message":"x"},"agent":"helper"}`, 200, `"ok":true`},
		{"POST", "/v1/tools/guarded_echo/call", `{"arguments":{"message":"x"},"agent":"helper"}`, 200, `"error_type":"tool_not_found"`},
		{"POST", "/v1/tools/echo/call", `{"arguments":{"message":"hi"}`, 400, `"bad_request"`},
		{"POST", "/v1/batch", `{"calls":[{"tool":"echo","arguments":{"message":"a"}},{"tool":"calculator","arguments":{"expression":"2*3"}}]}`, 200, `"result":6`},
		{"POST", "/v1/batch", `{"mode":"sequential","stop_on_error":true,"calls":[{"tool":"calculator","arguments":{"expression":"1/0"}},{"tool":"echo","arguments":{"message":"never"}}]}`, 200, `"execution_error"`},
		{"GET", "/v1/calls?conversation=c1&cursor=" + first.Next, "", 200, `"message":"one"`},
		{"GET", "/v1/calls?tool=calculator&status=error&since=1h", "", 200, `"validation_error"`},
		{"GET", "/v1/calls/" + bad.CallID, "", 200, `"call_id":"` + bad.CallID + `"`},
		{"GET", "/v1/calls/nope", "", 404, `"not_found"`},
		{"GET", "/v1/conversations/c1/summary", "", 200, `"total_calls":4`},
		{"GET", "/v1/statistics?conversation=c1", "", 200, `"count":4`},
		{"GET", "/v1/toolsets", "", 200, `"name":"math"`},
		{"GET", "/v1/toolsets/math", "", 200, `"calculator"`},
		{"GET", "/v1/toolsets/nope", "", 404, `"not_found"`},
		{"GET", "/v1/agents", "", 200, `"name":"helper"`},
		{"GET", "/v1/agents/helper", "", 200, `"tools":["echo","calculator"]`},
		{"GET", "/v1/agents/nobody", "", 404, `"not_found"`},
		{"GET", "/v1/limiter", "", 200, `"limit":10`},
		{"GET", "/v1/approvals", "", 200, `"approvals":[]`},
		{"GET", "/v1/approvals?status=all", "", 200, `"approvals":[]`},
		{"GET", "/v1/approvals/nope", "", 404, `"not_found"`},
		{"POST", "/v1/approvals/nope/deny", `{"digest":"d"}`, 404, `"not_found"`},
		{"POST", "/v1/artifacts", `{"content":"hello world"}`, 201, `"version":1`},
		{"GET", "/v1/artifacts/" + art.ID, "", 200, `buy milk`},
		{"PATCH", "/v1/artifacts/" + art.ID, `{"old":"Step one: buy milk.","new":"Step one: buy oat milk."}`, 200, `"version":2`},
		{"PATCH", "/v1/artifacts/" + art.ID, `{"old":"Step two: conquer the world.","new":"x"}`, 422, `"unprocessable"`},
		{"PUT", "/v1/artifacts/" + art.ID, `{"content":"# Plan\n\nDone.\n"}`, 200, `"version":3`},
		{"GET", "/v1/artifacts/" + art.ID + "?version=2", "", 200, `oat milk`},
		{"GET", "/v1/artifacts/" + art.ID + "?version=9", "", 404, `"not_found"`},
		{"POST", "/v1/parse", `{"text":"<tool_call>{\"name\":\"calculator\",\"arguments\":{\"expression\":\"1+1\"}}</tool_call>"}`, 200, `"name":"calculator"`},
		{"POST", "/v1/parse", `{"text":"<tool_call>{\"name\":\"echo\",\"arguments\":{\"mess"}`, 200, `"incomplete"`},
		{"GET", "/v1/nothing", "", 404, `"not_found"`},
		{"PUT", "/v1/tools", "", 405, `"method_not_allowed"`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			status, b := s.request(t, tt.method, tt.path, "", tt.body)
			if status != tt.status || !strings.Contains(string(b), tt.contains) {
				t.Errorf("got %d, want %d with %s:\n%.800s", status, tt.status, tt.contains, b)
			}
		})
	}

	// Pages of a query follow each other without overlap.
	second, err := c.Calls(ctx, wield.CallQuery{ConversationID: "c1", Limit: 2, Cursor: first.Next})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range [][]httpapi.CallRecord{first.Calls, second.Calls} {
		for _, r := range p {
			ids = append(ids, r.Call.Tool+":"+string(r.Call.Arguments))
		}
	}
	want := []string{`calculator:{}`, `echo:{"message":"three"}`, `echo:{"message":"two"}`, `echo:{"message":"one"}`}
	if diff := cmp.Diff(want, ids); diff != "" || second.Next != "" {
		t.Errorf("pages (-want +got) next %q\n%s", second.Next, diff)
	}

	// The program stops cleanly and says so.
	if code := s.stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, s.stderr.String())
	}
	for _, want := range []string{"no API keys are configured", "msg=call tool=echo", "outcome=validation_error", "msg=stopped"} {
		if !strings.Contains(s.stderr.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, s.stderr.String())
		}
	}
}

// TestServeKeys makes keys with `wield keys`, then shows that the served
// program refuses requests without a valid key and keeps scoped keys to
// their toolsets.
func TestServeKeys(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys.json")
	mk := func(args ...string) string {
		code, out, errs := run(t, append([]string{"keys", "create", "--keys", keys}, args...)...)
		if code != 0 || !strings.HasPrefix(out, "wield_") {
			t.Fatalf("keys create %v: exit %d\n%s%s", args, code, out, errs)
		}
		return strings.TrimSpace(out)
	}
	caller := mk("--rights", "call", "--name", "ci")
	reader := mk("--rights", "read")
	// --toolset takes a toolset of the tool files the server loads.
	tools := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(tools, []byte(serveTools), 0o644); err != nil {
		t.Fatal(err)
	}
	math := mk("--rights", "call", "--toolset", "math", "--tools", tools)
	revoked := mk()
	code, out, _ := run(t, "keys", "list", "--keys", keys, "--json")
	var listed []httpapi.Key
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 4 {
		t.Fatalf("keys list: exit %d\n%s", code, out)
	}
	if strings.Contains(out, caller) {
		t.Error("keys list shows a secret")
	}
	if code, _, errs := run(t, "keys", "revoke", "--keys", keys, listed[3].ID); code != 0 {
		t.Fatalf("keys revoke: exit %d: %s", code, errs)
	}
	if code, _, _ := run(t, "keys", "revoke", "--keys", keys, "key_nope"); code != 2 {
		t.Errorf("revoking an unknown key: exit %d, want 2", code)
	}
	if code, _, _ := run(t, "keys", "create", "--keys", keys, "--rights", "admin"); code != 2 {
		t.Errorf("--rights admin: exit %d, want 2", code)
	}

	// A configuration's server.keys hold a secret, or its SHA-256.
	config := filepath.Join(t.TempDir(), "wield.yaml")
	if err := os.WriteFile(config, []byte("server:\n  keys: [\"sha256:"+httpapi.HashKey("from-config")+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, keys, "--config", config)
	echo := `{"arguments":{"message":"hi"}}`
	tests := []struct {
		name              string
		method, path, key string
		body              string
		status            int
		code              string
	}{
		{"healthz is open", "GET", "/healthz", "", "", 200, ""},
		{"no key", "GET", "/v1/tools", "", "", 401, "unauthorized"},
		{"no key, unknown path", "GET", "/v1/nothing", "", "", 401, "unauthorized"},
		{"no key, openapi", "GET", "/openapi.json", "", "", 401, "unauthorized"},
		{"wrong key", "GET", "/v1/tools", "wield_wrong", "", 401, "unauthorized"},
		{"revoked key", "GET", "/v1/tools", revoked, "", 401, "unauthorized"},
		{"call key calls", "POST", "/v1/tools/echo/call", caller, echo, 200, ""},
		{"config key calls", "POST", "/v1/tools/echo/call", "from-config", echo, 200, ""},
		{"a hash is not a key", "GET", "/v1/tools", "sha256:" + httpapi.HashKey("from-config"), "", 401, "unauthorized"},
		{"read key reads", "GET", "/v1/calls", reader, "", 200, ""},
		{"read key may not call", "POST", "/v1/tools/echo/call", reader, echo, 403, "forbidden"},
		{"read key may not decide", "POST", "/v1/approvals/x/approve", reader, `{"digest":"d"}`, 403, "forbidden"},
		{"scoped key calls its tool", "POST", "/v1/tools/calculator/call", math, `{"arguments":{"expression":"6*7"}}`, 200, ""},
		{"scoped key, other tool", "POST", "/v1/tools/echo/call", math, echo, 403, "forbidden"},
		{"scoped key, other toolset", "GET", "/v1/toolsets/nope", math, "", 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, b := s.request(t, tt.method, tt.path, tt.key, tt.body)
			if status != tt.status || errCode(b) != tt.code {
				t.Errorf("got %d %q, want %d %q\n%s", status, errCode(b), tt.status, tt.code, b)
			}
		})
	}
	scoped, err := httpapi.NewClient(s.url, math).Tools(context.Background(), httpapi.ToolQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range scoped {
		names = append(names, x.Name)
	}
	if diff := cmp.Diff([]string{"calculator"}, names); diff != "" {
		t.Errorf("a scoped key lists (-want +got)\n%s", diff)
	}
	var apiErr *httpapi.Error
	if _, err := httpapi.NewClient(s.url, "").Tools(context.Background(), httpapi.ToolQuery{}); !errors.As(err, &apiErr) || apiErr.Status != 401 {
		t.Errorf("client without a key: %v", err)
	}
}

// waitPending polls the approvals until one is pending, for at most 10 s.
func waitPending(t *testing.T, c *httpapi.Client) *wield.Approval {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for range 1000 {
		list, err := c.Approvals(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 {
			return list[0]
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("no approval became pending within 10 s")
		}
	}
	t.Fatal("no approval became pending")
	return nil
}

// TestServeApproval shows a call of a tool with permission confirm waiting
// while a person decides over the API: approved, it runs; denied, it fails
// with approval_denied (decided here from the command line, as another
// process sharing the store would). Decisions are bound to the digest.
func TestServeApproval(t *testing.T) {
	s := startServe(t, "")
	c := httpapi.NewClient(s.url, "")
	ctx := context.Background()
	for _, approve := range []bool{true, false} {
		type answer struct {
			res *wield.Result
			err error
		}
		done := make(chan answer, 1)
		go func() {
			res, err := c.Call(ctx, "guarded_echo", httpapi.CallRequest{Arguments: json.RawMessage(`{"message":"launch"}`), Caller: wield.Caller{ConversationID: "ap"}})
			done <- answer{res, err}
		}()
		p := waitPending(t, c)
		if p.Tool != "guarded_echo" || string(p.Arguments) != `{"message":"launch"}` || p.Status != wield.ApprovalPending {
			t.Fatalf("pending approval %+v", p)
		}
		select {
		case a := <-done:
			t.Fatalf("the call returned before the decision: %+v %v", a.res, a.err)
		default:
		}
		if _, b := s.request(t, "GET", "/metrics", "", ""); !strings.Contains(string(b), "\nwield_approvals_pending 1\n") {
			t.Errorf("metrics while a call waits lack wield_approvals_pending 1")
		}
		var apiErr *httpapi.Error
		if _, err := c.Decide(ctx, p.ID, approve, httpapi.DecisionRequest{Digest: "sha256:other"}); !errors.As(err, &apiErr) || apiErr.Code != httpapi.CodeDigestMismatch {
			t.Errorf("decision with another digest: %v", err)
		}
		if approve {
			decided, err := c.Decide(ctx, p.ID, approve, httpapi.DecisionRequest{Digest: p.Digest, Note: "tester", Reason: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if decided.Decision == nil || !decided.Decision.Approved || decided.Decision.By != "local user" || decided.Decision.Note != "tester" {
				t.Errorf("decided approval %+v", decided)
			}
		} else {
			// Another process decides in the shared store; the server's
			// waiting call sees it.
			code, out, errs := run(t, "approvals", "deny", p.ID, "--db", s.db, "--note", "from the terminal", "--reason", "not today")
			if code != 0 || !strings.HasPrefix(out, "denied "+p.ID) {
				t.Fatalf("approvals deny: exit %d\n%s%s", code, out, errs)
			}
		}
		if _, err := c.Decide(ctx, p.ID, approve, httpapi.DecisionRequest{Digest: p.Digest}); !errors.As(err, &apiErr) || apiErr.Code != httpapi.CodeAlreadyDecided {
			t.Errorf("second decision: %v", err)
		}
		var a answer
		select {
		case a = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the call did not return within 30 s of the decision")
		}
		if a.err != nil {
			t.Fatal(a.err)
		}
		if approve && (!a.res.OK || string(a.res.Output) != `{"message":"launch"}`) {
			t.Errorf("approved call: %+v", a.res)
		}
		if !approve && (a.res.OK || a.res.ErrorType != wield.ErrApprovalDenied || !strings.Contains(a.res.Error, "not today")) {
			t.Errorf("denied call: %+v", a.res)
		}
	}
	if status, b := s.request(t, "GET", "/v1/approvals?status=approved", "", ""); status != 200 || !strings.Contains(string(b), `"by":"local user"`) || !strings.Contains(string(b), `"note":"tester"`) {
		t.Errorf("approved approvals: %d %s", status, b)
	}
	// The CLI decides as the user it runs as; --note is its own word.
	if status, b := s.request(t, "GET", "/v1/approvals?status=denied", "", ""); status != 200 ||
		!strings.Contains(string(b), `"by":"cli:`+os.Getenv("USER")+`"`) || !strings.Contains(string(b), `"note":"from the terminal"`) {
		t.Errorf("denied approvals: %d %s", status, b)
	}
}

// TestServeEventsResume reads events, reconnects with Last-Event-ID and
// gets the events that followed, then sees the heartbeat of an idle stream.
func TestServeEventsResume(t *testing.T) {
	s := startServe(t, "")
	c := httpapi.NewClient(s.url, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := httpapi.EventQuery{Types: []string{"execution_completed"}, ConversationID: "ev"}
	stream, err := c.Events(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for i := range 3 {
		res, err := c.Call(ctx, "echo", httpapi.CallRequest{Arguments: json.RawMessage(`{"message":"m` + string(rune('0'+i)) + `"}`), Caller: wield.Caller{ConversationID: "ev"}})
		if err != nil || !res.OK {
			t.Fatalf("call: %+v %v", res, err)
		}
		calls = append(calls, res.CallID)
		// A call outside the conversation is filtered out.
		if _, err := c.Call(ctx, "echo", httpapi.CallRequest{Arguments: json.RawMessage(`{"message":"other"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	var ids []string
	for range 3 {
		e, err := stream.Next()
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e.CallID)
		ids = append(ids, e.ID)
		if e.Type != "execution_completed" || e.Tool != "echo" || e.ConversationID != "ev" {
			t.Errorf("event %+v", e)
		}
	}
	stream.Close()
	if diff := cmp.Diff(calls, seen); diff != "" {
		t.Fatalf("events (-calls +events)\n%s", diff)
	}

	q.LastEventID = ids[0]
	resumed, err := c.Events(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	var again []string
	for range 2 {
		e, err := resumed.Next()
		if err != nil {
			t.Fatal(err)
		}
		again = append(again, e.CallID)
	}
	if diff := cmp.Diff(calls[1:], again); diff != "" {
		t.Errorf("resumed events (-want +got)\n%s", diff)
	}
	if n, gap := resumed.Lost(); n != 0 || gap {
		t.Errorf("an exact resume said lost %d, gap %v", n, gap)
	}

	// An idle stream gets heartbeats, as comments.
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/events?tool=nothing_happens_here", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	pinged := false
	for i := 0; i < 100 && !pinged && sc.Scan(); i++ {
		pinged = sc.Text() == ": ping"
	}
	if !pinged {
		t.Error("no heartbeat on an idle stream")
	}
}

// TestApprovalsCommand decides an approval from the command line, in the
// store a server would share.
func TestApprovalsCommand(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "w.db")
	code, out, errs := run(t, "approvals", "list", "--db", db)
	if code != 0 || !strings.HasPrefix(out, "ID") {
		t.Fatalf("approvals list: exit %d\n%s%s", code, out, errs)
	}
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"approvals", "approve", "nope", "--db", db}, 2},
		{[]string{"approvals", "deny", "--db", db}, 2},
		{[]string{"approvals", "list", "--status", "maybe", "--db", db}, 2},
		{[]string{"approvals", "list", "--status", "all", "--json", "--db", db}, 0},
	}
	for _, tt := range tests {
		if code, out, errs := run(t, tt.args...); code != tt.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tt.args, code, tt.code, out, errs)
		}
	}
}

func TestLoopbackOnly(t *testing.T) {
	tests := []struct {
		addr, want string
		changed    bool
	}{
		{"127.0.0.1:7420", "127.0.0.1:7420", false},
		{"[::1]:80", "[::1]:80", false},
		{"localhost:0", "localhost:0", false},
		{":8080", "127.0.0.1:8080", true},
		{"0.0.0.0:8080", "127.0.0.1:8080", true},
		{"10.1.2.3:9", "127.0.0.1:9", true},
	}
	for _, tt := range tests {
		got, changed, err := loopbackOnly(tt.addr)
		if err != nil || got != tt.want || changed != tt.changed {
			t.Errorf("loopbackOnly(%q) = %q, %v, %v; want %q, %v", tt.addr, got, changed, err, tt.want, tt.changed)
		}
	}
	if _, _, err := loopbackOnly("nonsense"); err == nil {
		t.Error("loopbackOnly(nonsense) succeeded")
	}
}

// TestServeGracefulShutdown stops the program while a call runs and an
// event stream is open: the stream ends, the call finishes and answers, the
// program exits 0, and the call's record (async mode) is in the store.
func TestServeGracefulShutdown(t *testing.T) {
	s := startServe(t, "", "--records", "async")
	c := httpapi.NewClient(s.url, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := c.Events(ctx, httpapi.EventQuery{Types: []string{"execution_started"}, Tool: "sleep"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	type answer struct {
		res *wield.Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := c.Call(ctx, "sleep", httpapi.CallRequest{Arguments: json.RawMessage(`{"duration":0.3}`), Caller: wield.Caller{ConversationID: "graceful"}})
		done <- answer{res, err}
	}()
	started, err := stream.Next()
	if err != nil || started.Tool != "sleep" {
		t.Fatalf("execution_started: %+v %v", started, err)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited with %d:\n%s", code, s.stderr.String())
	}
	if _, err := stream.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("the event stream after shutdown: %v, want io.EOF", err)
	}
	var a answer
	select {
	case a = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not answer")
	}
	if a.err != nil || !a.res.OK {
		t.Fatalf("the call in flight: %+v %v", a.res, a.err)
	}
	code, out, errs := run(t, "calls", "--db", s.db, "--conversation", "graceful", "--json")
	if code != 0 || !strings.Contains(out, a.res.CallID) {
		t.Errorf("the record of the call in flight is not in the store: exit %d\n%s%s", code, out, errs)
	}
}

func TestNewLogger(t *testing.T) {
	tests := []struct {
		format, level string
		want          string // in the output of an INFO line
		usage         bool
	}{
		{"text", "info", "level=INFO msg=hello", false},
		{"json", "info", `"msg":"hello"`, false},
		{"json", "warn", "", false},
		{"yaml", "info", "", true},
		{"text", "loud", "", true},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		log, err := newLogger(&b, tt.format, tt.level)
		var ue usageError
		if tt.usage != errors.As(err, &ue) {
			t.Errorf("%s/%s: error %v", tt.format, tt.level, err)
			continue
		}
		if err != nil {
			continue
		}
		log.Info("hello")
		if got := b.String(); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s/%s: logged %q, want %q", tt.format, tt.level, got, tt.want)
		}
	}
}
