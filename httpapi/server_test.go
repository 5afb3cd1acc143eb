package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// newTestServer serves echo and calculator (calculator in toolset math)
// with a SQLite store of the test's own.
func newTestServer(t testing.TB, keys *Keyring) (*Server, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo(), builtin.Calculator())
	if err := reg.DefineToolset(wield.Toolset{Name: "math", Tools: []string{"calculator"}}); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(reg, &engine.Options{Store: store})
	t.Cleanup(func() { eng.Close(context.Background()) })
	s, err := New(Options{Engine: eng, Store: store, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return s, hs
}

func TestRoutesMatchDocument(t *testing.T) {
	s, _ := newTestServer(t, nil)
	var served []string
	for _, rt := range s.routes() {
		served = append(served, rt.method+" "+rt.path)
	}
	slices.Sort(served)
	documented, err := DocumentedRoutes()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(documented, served); diff != "" {
		t.Errorf("routes of openapi.json (-) and of the server (+) differ:\n%s", diff)
	}
}

// do sends a request and returns the status and body, checking that the
// answer fits the document when it is JSON.
func do(t *testing.T, hs *httptest.Server, method, path, key, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, hs.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && path != "/openapi.json" {
		p, _, _ := strings.Cut(path, "?")
		if err := CheckAnswer(method, p, resp.StatusCode, b); err != nil {
			t.Errorf("%s %s: %v\n%s", method, path, err, b)
		}
	}
	return resp.StatusCode, b
}

func errorCode(b []byte) string {
	var eb errorBody
	if json.Unmarshal(b, &eb) != nil || eb.Error == nil {
		return ""
	}
	return eb.Error.Code
}

func TestKeysAndScope(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys.json")
	all, _, err := CreateKey(file, "all", RightCall, nil)
	if err != nil {
		t.Fatal(err)
	}
	reader, _, err := CreateKey(file, "reader", RightRead, nil)
	if err != nil {
		t.Fatal(err)
	}
	math, _, err := CreateKey(file, "math", RightCall, []string{"math"})
	if err != nil {
		t.Fatal(err)
	}
	gone, goneKey, err := CreateKey(file, "gone", RightCall, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := RevokeKey(file, goneKey.ID); err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file, ConfigKey(0, "sha256:"+HashKey("from-config")))
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, ring)
	echo := `{"arguments":{"message":"hi"}}`
	calc := `{"arguments":{"expression":"1+2"}}`
	tests := []struct {
		name         string
		method, path string
		key, body    string
		status       int
		code         string
	}{
		{"health needs no key", "GET", "/healthz", "", "", 200, ""},
		{"ready needs no key", "GET", "/readyz", "", "", 200, ""},
		{"no key", "GET", "/v1/tools", "", "", 401, CodeUnauthorized},
		{"unknown key", "GET", "/v1/tools", "wield_nope", "", 401, CodeUnauthorized},
		{"revoked key", "GET", "/v1/tools", gone, "", 401, CodeUnauthorized},
		{"no key on an unknown path", "GET", "/v2/nothing", "", "", 401, CodeUnauthorized},
		{"no key for metrics", "GET", "/metrics", "", "", 401, CodeUnauthorized},
		{"config key", "POST", "/v1/tools/echo/call", "from-config", echo, 200, ""},
		{"call key", "POST", "/v1/tools/echo/call", all, echo, 200, ""},
		{"read key lists", "GET", "/v1/tools", reader, "", 200, ""},
		{"read key may not call", "POST", "/v1/tools/echo/call", reader, echo, 403, CodeForbidden},
		{"read key may not write artifacts", "POST", "/v1/artifacts", reader, `{"content":"x"}`, 403, CodeForbidden},
		{"scoped key calls its tool", "POST", "/v1/tools/calculator/call", math, calc, 200, ""},
		{"scoped key may not call others", "POST", "/v1/tools/echo/call", math, echo, 403, CodeForbidden},
		{"scoped key may not describe others", "GET", "/v1/tools/echo", math, "", 403, CodeForbidden},
		{"scoped key may not batch others", "POST", "/v1/batch", math, `{"calls":[{"tool":"calculator","arguments":{"expression":"1"}},{"tool":"echo","arguments":{"message":"x"}}]}`, 403, CodeForbidden},
		{"scoped key may not query others' calls", "GET", "/v1/calls?tool=echo", math, "", 403, CodeForbidden},
		{"scoped key may not stream others' events", "GET", "/v1/events?tool=echo", math, "", 403, CodeForbidden},
		{"scoped key may not use toolsets of others", "GET", "/v1/tools?toolset=nope", math, "", 404, CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, b := do(t, hs, tt.method, tt.path, tt.key, tt.body)
			if status != tt.status || errorCode(b) != tt.code {
				t.Errorf("got %d %q, want %d %q\n%s", status, errorCode(b), tt.status, tt.code, b)
			}
		})
	}

	// Listing hides what a scoped key does not reach.
	names := func(key string) []string {
		_, b := do(t, hs, "GET", "/v1/tools", key, "")
		var l ToolList
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range l.Tools {
			out = append(out, x.Name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"calculator"}, names(math)); diff != "" {
		t.Errorf("scoped listing (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"echo", "calculator"}, names(all)); diff != "" {
		t.Errorf("full listing (-want +got)\n%s", diff)
	}
	_, b := do(t, hs, "GET", "/v1/calls", math, "")
	var calls CallList
	if err := json.Unmarshal(b, &calls); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls.Calls {
		if c.Call.Tool != "calculator" {
			t.Errorf("scoped key sees a call of %s", c.Call.Tool)
		}
	}
	if len(calls.Calls) != 1 {
		t.Errorf("scoped key sees %d calls, want 1", len(calls.Calls))
	}
}

func TestErrorsShape(t *testing.T) {
	_, hs := newTestServer(t, nil)
	big := `{"arguments":{"message":"` + strings.Repeat("x", 9<<20) + `"}}`
	tests := []struct {
		name         string
		method, path string
		body         string
		status       int
		code         string
	}{
		{"not JSON", "POST", "/v1/tools/echo/call", `{"arguments":`, 400, CodeBadRequest},
		{"unknown field", "POST", "/v1/tools/echo/call", `{"args":{}}`, 400, CodeBadRequest},
		{"trailing data", "POST", "/v1/tools/echo/call", `{} {}`, 400, CodeBadRequest},
		{"empty body", "POST", "/v1/tools/echo/call", ``, 400, CodeBadRequest},
		{"too large", "POST", "/v1/tools/echo/call", big, 413, CodeTooLarge},
		{"other tool in body", "POST", "/v1/tools/echo/call", `{"tool":"calculator"}`, 400, CodeBadRequest},
		{"bad caller type", "POST", "/v1/tools/echo/call", `{"caller":{"type":"god"}}`, 400, CodeBadRequest},
		{"unknown agent", "POST", "/v1/tools/echo/call", `{"agent":"nobody"}`, 404, CodeNotFound},
		{"unknown route", "GET", "/v1/nothing", "", 404, CodeNotFound},
		{"wrong method", "DELETE", "/v1/tools", "", 405, CodeMethodNotAllowed},
		{"unknown tool", "GET", "/v1/tools/nope", "", 404, CodeNotFound},
		{"unknown format", "GET", "/v1/tools?format=cobol", "", 400, CodeBadRequest},
		{"unknown call", "GET", "/v1/calls/nope", "", 404, CodeNotFound},
		{"bad status", "GET", "/v1/calls?status=maybe", "", 400, CodeBadRequest},
		{"bad limit", "GET", "/v1/calls?limit=0", "", 400, CodeBadRequest},
		{"bad since", "GET", "/v1/calls?since=yesterday", "", 400, CodeBadRequest},
		{"unknown approval", "POST", "/v1/approvals/nope/approve", `{"digest":"x"}`, 404, CodeNotFound},
		{"decision without digest", "POST", "/v1/approvals/nope/approve", `{}`, 400, CodeBadRequest},
		{"unknown artifact", "GET", "/v1/artifacts/nope", "", 404, CodeNotFound},
		{"bad version", "GET", "/v1/artifacts/nope?version=zero", "", 400, CodeBadRequest},
		{"empty batch", "POST", "/v1/batch", `{"calls":[]}`, 400, CodeBadRequest},
		{"bad batch mode", "POST", "/v1/batch", `{"calls":[{"tool":"echo"}],"mode":"sideways"}`, 400, CodeBadRequest},
		{"unknown event type", "GET", "/v1/events?type=party", "", 400, CodeBadRequest},
		{"unknown parse format", "POST", "/v1/parse", `{"text":"x","format":"smoke"}`, 400, CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, b := do(t, hs, tt.method, tt.path, "", tt.body)
			if status != tt.status || errorCode(b) != tt.code {
				t.Errorf("got %d %q, want %d %q\n%.300s", status, errorCode(b), tt.status, tt.code, b)
			}
		})
	}
}

// failingStore fails every query, to show that a system failure reaches
// the client as "internal error" only.
type failingStore struct{ wield.Storage }

func (failingStore) Calls(context.Context, wield.CallQuery) (wield.CallPage, error) {
	return wield.CallPage{}, io.ErrUnexpectedEOF
}

func TestInternalErrorsHideTheirText(t *testing.T) {
	s, _ := newTestServer(t, nil)
	var logs bytes.Buffer
	s2, err := New(Options{Engine: s.eng, Store: failingStore{s.store}, Logger: slogTo(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	hs := httptest.NewServer(s2.Handler())
	defer hs.Close()
	status, b := do(t, hs, "GET", "/v1/calls", "", "")
	want := `{"error":{"code":"internal","message":"internal error"}}`
	if status != 500 || strings.TrimSpace(string(b)) != want {
		t.Errorf("got %d %s, want 500 %s", status, b, want)
	}
	if !strings.Contains(logs.String(), io.ErrUnexpectedEOF.Error()) {
		t.Errorf("the log lacks the real error:\n%s", logs.String())
	}
	if status, _ := do(t, hs, "GET", "/readyz", "", ""); status != 503 {
		t.Errorf("readyz with a failing store: %d, want 503", status)
	}
}

func TestMCPMount(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	all, _, err := CreateKey(file, "", RightCall, nil)
	if err != nil {
		t.Fatal(err)
	}
	scoped, _, err := CreateKey(file, "", RightCall, []string{"math"})
	if err != nil {
		t.Fatal(err)
	}
	reader, _, err := CreateKey(file, "", RightRead, nil)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t, nil)
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "mcp "+r.URL.Path)
	})
	s2, err := New(Options{Engine: s.eng, Store: s.store, Keys: ring, MCP: mcp})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	hs := httptest.NewServer(s2.Handler())
	defer hs.Close()
	tests := []struct {
		path, key string
		status    int
		body      string
	}{
		{"/mcp", "", 401, ""},
		{"/mcp", reader, 403, ""},
		{"/mcp", scoped, 403, "this key reaches toolsets math only: use their MCP endpoints (/mcp/math)"},
		{"/mcp/text", scoped, 403, "/mcp/math"},
		{"/mcp/math/x", scoped, 403, "/mcp/math"},
		{"/mcp/math", scoped, 200, "mcp /mcp/math"},
		{"/mcp/math", reader, 403, ""},
		{"/mcp", all, 200, "mcp /mcp"},
		{"/mcp/sse", all, 200, "mcp /mcp/sse"},
	}
	for _, tt := range tests {
		status, b := do(t, hs, "POST", tt.path, tt.key, "{}")
		if status != tt.status || (tt.body != "" && !strings.Contains(string(b), tt.body)) {
			t.Errorf("POST %s: got %d %s, want %d %s", tt.path, status, b, tt.status, tt.body)
		}
	}
}

// TestEventsInScope shows that a scoped key's stream leaves out the events
// of tools it does not reach.
func TestEventsInScope(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	all, _, err := CreateKey(file, "", RightCall, nil)
	if err != nil {
		t.Fatal(err)
	}
	math, _, err := CreateKey(file, "", RightRead, []string{"math"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, ring)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := NewClient(hs.URL, math).Events(ctx, EventQuery{Types: []string{"execution_completed"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	c := NewClient(hs.URL, all)
	for _, call := range []struct{ tool, args string }{{"echo", `{"message":"x"}`}, {"calculator", `{"expression":"1+1"}`}} {
		if _, err := c.Call(ctx, call.tool, CallRequest{Arguments: json.RawMessage(call.args)}); err != nil {
			t.Fatal(err)
		}
	}
	e, err := stream.Next()
	if err != nil {
		t.Fatal(err)
	}
	if e.Tool != "calculator" {
		t.Errorf("a key scoped to math got an event of %s first", e.Tool)
	}
}
