//go:build unix

package journeys

// The engine's smaller defects, as a user meets them through the binary:
// arguments (defaults of an omitted object, formats, messages), tool_loaded
// on reload, secrets in refused values, a remote entry's own timeout,
// web_search's base URL, a PDF without /Widths, and the tool-system
// format's own keys.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// notesTool is a tool file whose input schema has an object of defaults, a
// date-time and an email; its content entry answers the arguments it got.
const notesTool = `name: search_notes
description: Search the notes
input_schema:
  type: object
  properties:
    q: {type: string, minLength: 1}
    page:
      type: object
      properties:
        limit: {type: integer, minimum: 1, default: 10}
        sort: {type: string, default: date}
    since: {type: string, format: date-time}
    owner: {type: string, format: email}
  required: [q]
entry: {type: content, text: "{{json .}}"}
`

// contentText is the text a content entry answered through wield call.
func contentText(t *testing.T, r *run) string {
	t.Helper()
	var res struct {
		OK     bool `json:"ok"`
		Output struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"mcp_content"`
		} `json:"output"`
	}
	r.json(t, &res)
	if !res.OK || len(res.Output.Content) != 1 {
		t.Fatalf("not one text answered:\n%s", r)
	}
	return res.Output.Content[0].Text
}

// TestJourneyEngineArguments: a model that leaves out an object whose
// members have defaults gets them filled, a date-time or an email that is
// not one is refused saying what was expected, and the messages read
// "got null" and "at least 1 character".
func TestJourneyEngineArguments(t *testing.T) {
	u := newUser(t)
	u.write("tools/notes.yaml", notesTool)
	r := u.must("call", "search_notes", "--tools", "tools", "q=meeting")
	if got, want := contentText(t, r), `{"page":{"limit":10,"sort":"date"},"q":"meeting"}`; got != want {
		t.Errorf("arguments the tool got = %s, want %s", got, want)
	}
	r = u.must("call", "search_notes", "--tools", "tools", "q=meeting", `page:={"limit":3}`, "since=2024-05-01T13:45:00Z", "owner=ann@example.com")
	if got, want := contentText(t, r), `{"owner":"ann@example.com","page":{"limit":3,"sort":"date"},"q":"meeting","since":"2024-05-01T13:45:00Z"}`; got != want {
		t.Errorf("arguments the tool got = %s, want %s", got, want)
	}

	r = u.wield("call", "search_notes", "--tools", "tools", "q=", "since=tomorrow", "owner=ann at example")
	var res callResult
	r.json(t, &res)
	if r.code == 0 || res.OK || res.ErrorType != "validation_error" {
		t.Fatalf("want a validation_error and a failing exit:\n%s", r)
	}
	want := []string{
		"q: must be at least 1 character long, got 0",
		`since: must be a date and time in RFC 3339 form, like 2024-05-01T13:45:00Z (format date-time), got string "tomorrow"`,
		`owner: must be an email address, like name@example.com (format email), got string "ann at example"`,
	}
	for _, w := range want {
		if !strings.Contains(res.Error, w) {
			t.Errorf("the error does not say %q:\n%s", w, res.Error)
		}
	}
	r = u.wield("call", "search_notes", "--tools", "tools", "q:=null")
	r.json(t, &res)
	if !strings.Contains(res.Error, "q: expected string, got null") || strings.Contains(res.Error, "null null") {
		t.Errorf("the error for null:\n%s", r)
	}
}

// TestJourneyEngineToolLoaded: a tool file added while serve watches its
// folder is announced as tool_loaded on the event stream, naming the tool
// and its file.
func TestJourneyEngineToolLoaded(t *testing.T) {
	u := newUser(t)
	u.write("tools/.keep", "")
	u.write("wield.yaml", "tool_dirs: [tools]\nreload: {watch: true}\n")
	s := u.serve("--config", "wield.yaml")
	ev := openEvents(t, s)
	u.write("tools/notes.yaml", notesTool)
	if !eventually(10*time.Second, func() bool { return strings.Contains(ev.buf.String(), `"type":"tool_loaded"`) }) {
		t.Fatalf("no tool_loaded event:\n%s", ev.buf.String())
	}
	var loaded struct {
		Type, Tool, Source, Message string
	}
	for line := range strings.Lines(ev.buf.String()) {
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && strings.Contains(data, `"tool_loaded"`) {
			if err := json.Unmarshal([]byte(data), &loaded); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if loaded.Tool != "search_notes" || !strings.HasSuffix(loaded.Source, "notes.yaml") || !strings.HasPrefix(loaded.Message, "loaded from ") {
		t.Errorf("tool_loaded = %+v", loaded)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exited %d after %v:\n%s", code, took, s.stderr)
	}
}

// TestJourneyEngineSecretInRefusedValue: a secret inside a value that
// validation refuses is shown to the caller (the model sent it) and kept
// out of the record, both inside a quoted object and as the value of a
// secret-named parameter.
func TestJourneyEngineSecretInRefusedValue(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "secret_names: [pin]\n")
	u.write("tools/login.yaml", "name: login\ndescription: Log in\nparameters:\n  - {name: user, type: string}\n  - {name: pin, type: integer, required: false}\nentry: {type: content, text: ok}\n")
	r := u.wield("call", "echo", "--config", "wield.yaml", `message:={"user":"ann","password":"hunter2"}`)
	if r.code == 0 || !strings.Contains(r.stdout, "hunter2") {
		t.Errorf("the caller does not see the value it sent:\n%s", r)
	}
	r = u.wield("call", "login", "--config", "wield.yaml", "--tools", "tools", "user=ann", "pin=p1n-4321")
	if r.code == 0 || !strings.Contains(r.stdout, "p1n-4321") {
		t.Errorf("the caller does not see the value it sent:\n%s", r)
	}
	calls := u.must("calls", "--json", "--config", "wield.yaml")
	for _, secret := range []string{"hunter2", "p1n-4321"} {
		if i := strings.Index(calls.stdout, secret); i >= 0 {
			t.Errorf("the records hold %q: …%s…", secret, calls.stdout[max(0, i-120):min(len(calls.stdout), i+40)])
		}
	}
	for _, want := range []string{`\"password\":\"[REDACTED]\"`, `pin: expected integer, got [REDACTED]`} {
		if !strings.Contains(calls.stdout, want) {
			t.Errorf("the records do not show %s:\n%s", want, calls.stdout)
		}
	}
}

// TestJourneyEngineRemoteTimeout: a remote entry's own timeout ends the
// call as a timeout that names the tool and the limit.
func TestJourneyEngineRemoteTimeout(t *testing.T) {
	other := newUser(t)
	far := other.serve()
	u := newUser(t)
	u.write("tools/slow.yaml", "name: far_sleep\ndescription: The other server's sleep\nparameters:\n  - {name: duration, type: number}\n"+
		"entry: {type: remote, url: \""+far.url+"\", tool: sleep, timeout: 300ms}\n")
	start := time.Now()
	r := u.wield("call", "far_sleep", "--tools", "tools", "duration:=5")
	took := time.Since(start)
	var res callResult
	r.json(t, &res)
	if r.code == 0 || res.ErrorType != "timeout" || res.Error != "the remote tool sleep did not answer within 300ms (the entry's timeout)" {
		t.Errorf("want the entry's timeout:\n%s", r)
	}
	if took > 4*time.Second {
		t.Errorf("the call took %v, well past its 300ms", took)
	}
	r = u.must("call", "far_sleep", "--tools", "tools", "duration:=0")
	r.json(t, &res)
	if !res.OK {
		t.Errorf("a quick call failed:\n%s", r)
	}
}

// TestJourneyEngineSearchBaseURL: web_search's base_url in wield.yaml sends
// the provider's requests to a proxy on the operator's network, which
// answers in the provider's shape.
func TestJourneyEngineSearchBaseURL(t *testing.T) {
	var path, key atomic.Value
	path.Store("")
	key.Store("")
	brave, err := os.ReadFile(filepath.Join("..", "builtin", "testdata", "search", "brave.json"))
	if err != nil {
		t.Fatal(err)
	}
	proxy, _ := loopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.Path)
		key.Store(r.Header.Get("X-Subscription-Token"))
		w.Header().Set("Content-Type", "application/json")
		w.Write(brave)
	}))
	u := newUser(t)
	u.write("wield.yaml", "web_search: {provider: brave, api_key: BSA-KEY, base_url: \""+proxy.URL+"/search/brave\"}\n")
	r := u.must("call", "web_search", "--config", "wield.yaml", "query=wield")
	var res callResult
	r.json(t, &res)
	var out struct {
		Provider string `json:"provider"`
		Results  []any  `json:"results"`
	}
	json.Unmarshal(res.Output, &out)
	if !res.OK || out.Provider != "brave" || len(out.Results) != 2 {
		t.Errorf("web_search through the proxy:\n%s", r)
	}
	if path.Load() != "/search/brave/res/v1/web/search" || key.Load() != "BSA-KEY" {
		t.Errorf("the proxy got path %q key %q", path.Load(), key.Load())
	}
	// A base URL with a password in it is refused where it is written,
	// without showing the password.
	u.write("bad.yaml", "web_search: {provider: brave, api_key: k, base_url: \"https://ann:pw@h/x\"}\n")
	r = u.wield("list", "--config", "bad.yaml")
	if r.code == 0 || !strings.Contains(r.stderr, "bad.yaml:1:53: base_url:") || strings.Contains(r.stderr+r.stdout, ":pw@") {
		t.Errorf("want the base URL refused at its line:\n%s", r)
	}
}

// TestJourneyEnginePDFWithoutWidths: web_fetch of a PDF whose font has no
// /Widths keeps the spaces between its words.
func TestJourneyEnginePDFWithoutWidths(t *testing.T) {
	pdf, err := os.ReadFile(filepath.Join("..", "builtin", "testdata", "fetch", "kerned.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := loopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(pdf)
	}))
	u := newUser(t)
	u.write("wield.yaml", "http_allow: [127.0.0.1/32]\n")
	r := u.must("call", "web_fetch", "--config", "wield.yaml", "url="+srv.URL+"/kerned.pdf")
	var res struct {
		Output struct {
			Content string `json:"content"`
		} `json:"output"`
	}
	r.json(t, &res)
	if want := "Kerned words here!\nPlaced word by word\nGlyph set"; res.Output.Content != want {
		t.Errorf("content = %q, want %q", res.Output.Content, want)
	}
}

// TestJourneyEngineShortEntries: tool files in the tool-system format's own
// keys load as written: api_url with auth_method calls the API with the key
// from the environment, and mcp_server_url runs the tool on the configured
// MCP server of that URL.
func TestJourneyEngineShortEntries(t *testing.T) {
	var got atomic.Value
	got.Store("")
	api, _ := loopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		got.Store(fmt.Sprintf("%s %s %s %v", r.Method, r.URL.Path, r.Header.Get("Authorization"), body["query"]))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"hits":["wield"]}`)
	}))
	inner := newUser(t)
	innerDB := "sqlite:" + inner.path("inner.db")
	mcp := inner.mcpHTTP("--db", innerDB)

	u := newUser(t)
	u.setenv("SEARCH_TOOL_API_KEY", "tok-1")
	u.write("wield.yaml", "tool_dirs: [tools]\nhttp_allow: [127.0.0.1/32]\nmcp_servers:\n  - {name: inner, url: \""+mcp.url+"/mcp\"}\n")
	u.write("tools/native/search_tool.yaml", "name: search_tool\ndescription: Search\nparameters:\n  - {name: query, type: string, required: true}\n"+
		"api_url: "+api.URL+"/search\nauth_method: Bearer\n")
	u.write("tools/mcp/calculator.yaml", "name: calculator\ndescription: The inner server's calculator\nparameters:\n  - {name: expression, type: string, required: true}\n"+
		"mcp_server_url: "+mcp.url+"/mcp/\n")
	v := u.wield("validate", "--config", "wield.yaml")
	if v.code != 0 || strings.Contains(v.stdout+v.stderr, "unknown field") {
		t.Fatalf("the files do not load as written:\n%s", v)
	}
	r := u.must("call", "search_tool", "--config", "wield.yaml", "query=go")
	var res callResult
	r.json(t, &res)
	if !res.OK || got.Load() != "POST /search Bearer tok-1 go" {
		t.Errorf("the API got %q:\n%s", got.Load(), r)
	}
	r = u.must("call", "calculator", "--config", "wield.yaml", "expression=6*7")
	r.json(t, &res)
	if !res.OK || !strings.Contains(string(res.Output), "42") {
		t.Errorf("calculator through the inner server:\n%s", r)
	}
	var recs *run
	if !eventually(5*time.Second, func() bool {
		// The inner server writes its records in batches.
		recs = inner.must("calls", "--json", "--db", innerDB)
		return strings.Contains(recs.stdout, `"calculator"`) && strings.Contains(recs.stdout, "6*7")
	}) {
		t.Errorf("the inner server has no record of the call:\n%s", recs.stdout)
	}
	// A URL no configured server has is refused at its line.
	u.write("tools/mcp/other.yaml", "name: other\ndescription: d\nmcp_server_url: http://127.0.0.1:9/mcp\n")
	v = u.wield("validate", "--config", "wield.yaml")
	if v.code == 0 || !strings.Contains(v.stdout+v.stderr, `other.yaml:3:17: mcp_server_url: no MCP server with the URL "http://127.0.0.1:9/mcp" is configured`) {
		t.Errorf("want the unknown server refused:\n%s", v)
	}
}

// TestJourneyEngineApprovalIDInEvents: a listener of the event stream reads
// the approval's ID in a field of permission_requested and
// permission_decided, and approves with it.
func TestJourneyEngineApprovalIDInEvents(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	s := u.serve("--tools", "tools")
	ev := openEvents(t, s)
	abandon(t, s, "mark", `{"message":"one"}`)
	id := pendingIDs(t, u, 1)[0]
	approvalOf := func(typ string) string {
		for line := range strings.Lines(ev.buf.String()) {
			data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
			if !ok {
				continue
			}
			var e struct {
				Type       string `json:"type"`
				ApprovalID string `json:"approval_id"`
			}
			if json.Unmarshal([]byte(data), &e) == nil && e.Type == typ {
				return e.ApprovalID
			}
		}
		return ""
	}
	if !eventually(5*time.Second, func() bool { return approvalOf("permission_requested") != "" }) {
		t.Fatalf("no permission_requested with an approval_id:\n%s", ev.buf.String())
	}
	if got := approvalOf("permission_requested"); got != id {
		t.Errorf("permission_requested names approval %q, the inbox %q", got, id)
	}
	u.must("approvals", "approve", approvalOf("permission_requested"))
	if !eventually(5*time.Second, func() bool { return approvalOf("permission_decided") == id }) {
		t.Errorf("no permission_decided naming approval %s:\n%s", id, ev.buf.String())
	}
	if !eventually(5*time.Second, func() bool { return ranLines(t, u) == "one\n" }) {
		t.Errorf("the approved call did not run: %q", ranLines(t, u))
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exited %d after %v:\n%s", code, took, s.stderr)
	}
}
