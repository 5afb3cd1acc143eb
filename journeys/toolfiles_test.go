//go:build unix

package journeys

// Tool files beside the built-in tools: a file re-declaring a built-in, a
// toolset naming built-ins, two files of one name, a file shadowing a
// built-in, and all of it at serve's start and on hot reload.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// callResult is what `wield call` prints and POST /v1/tools/{name}/call answers.
type callResult struct {
	OK               bool            `json:"ok"`
	ErrorType        string          `json:"error_type"`
	Error            string          `json:"error"`
	Output           json.RawMessage `json:"output"`
	ValidationErrors []struct {
		Path    string `json:"path"`
		Message string `json:"message"`
	} `json:"validation_errors"`
}

// listedTool is a tool as `wield list --json` and GET /v1/tools show it.
type listedTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema struct {
		Properties map[string]struct {
			Pattern string   `json:"pattern"`
			Enum    []string `json:"enum"`
			Minimum *float64 `json:"minimum"`
			Maximum *float64 `json:"maximum"`
		} `json:"properties"`
	} `json:"input_schema"`
}

// lineOf returns the line of out that starts with name and a space.
func lineOf(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}

// toolsOf decodes GET /v1/tools (path may add a query), by name.
func toolsOf(t *testing.T, s *server, path string) map[string]listedTool {
	t.Helper()
	code, body := s.do("GET", path, "")
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	var page struct {
		Tools []listedTool `json:"tools"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatalf("GET %s: %v\n%.2000s", path, err, body)
	}
	list := page.Tools
	out := map[string]listedTool{}
	for _, tl := range list {
		out[tl.Name] = tl
	}
	return out
}

// TestJourneyToolFilesHTTPRequestExample puts the tool format's own
// http_request.yaml example, as written, in tools/native beside a toolset
// file (name, description, tools) that names it and the built-in echo: it validates, lists with the file's
// description and rules, refuses what the rules refuse, and sends a real
// request through the built-in handler.
func TestJourneyToolFilesHTTPRequestExample(t *testing.T) {
	u := newUser(t)
	u.copy("seeds/004/http_request.yaml", "tools/native/http_request.yaml")
	u.write("configs/tool_sets/basic_set.yaml", "name: basic_set\ndescription: 基础工具集\ntools:\n  - http_request\n  - echo\n")

	r := u.must("validate", "tools", "configs")
	for _, bad := range []string{"is not defined", "is not provided"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("validate reports %q:\n%s", bad, r)
		}
	}
	if !strings.Contains(r.stdout, "info: tool \"http_request\" re-declares the built-in tool") || !strings.HasSuffix(strings.TrimSpace(r.stdout), "ok") {
		t.Errorf("validate does not say the file re-declares the built-in, then ok:\n%s", r)
	}
	// Naming the dialect makes what it cannot express an error.
	if r := u.wield("validate", "--dialect", "gemini", "tools"); r.code != 1 || !strings.Contains(r.stdout, "gemini:") {
		t.Errorf("validate --dialect gemini: want exit 1 with gemini's refusals:\n%s", r)
	}

	r = u.must("list", "--tools", "tools", "--tools", "configs")
	if line := lineOf(r.stdout, "http_request"); !strings.Contains(line, "发送 HTTP 请求并返回响应") {
		t.Errorf("list shows http_request as %q, want the file's description:\n%s", line, r)
	}
	if strings.Contains(r.stderr, "duplicate") || strings.Contains(r.stderr, "warning") {
		t.Errorf("list warns about a re-declaration:\n%s", r)
	}
	var tools []listedTool
	u.must("list", "--json", "--tools", "tools").json(t, &tools)
	var found bool
	for _, tl := range tools {
		if tl.Name != "http_request" {
			continue
		}
		found = true
		p := tl.InputSchema.Properties
		if p["url"].Pattern != "^https?://" || strings.Join(p["method"].Enum, ",") != "GET,POST,PUT,DELETE,PATCH" ||
			p["timeout"].Minimum == nil || *p["timeout"].Minimum != 1 || p["timeout"].Maximum == nil || *p["timeout"].Maximum != 300 {
			t.Errorf("list --json: http_request's rules are not the file's: %+v", p)
		}
	}
	if !found {
		t.Fatal("list --json has no http_request")
	}

	refused := func(field, want string, args ...string) {
		t.Helper()
		r := u.wield(append([]string{"call", "http_request", "--tools", "tools"}, args...)...)
		var res callResult
		r.json(t, &res)
		if r.code != 1 || res.ErrorType != "validation_error" || len(res.ValidationErrors) == 0 ||
			res.ValidationErrors[0].Path != field || !strings.Contains(res.ValidationErrors[0].Message, want) {
			t.Errorf("want a validation_error naming %s (%s):\n%s", field, want, r)
		}
	}
	refused("url", "^https?://", "url=ftp://x")
	refused("method", "one of", "url=http://example.com", "method=FETCH")
	refused("timeout", "<= 300", "url=http://example.com", "timeout:=301")

	// A real request to a loopback server that the configuration allows.
	var mu sync.Mutex
	var gotHeader, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotHeader, gotBody = r.Header.Get("X-Count"), string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		io.WriteString(w, `{"created":"yes-7"}`)
	}))
	defer srv.Close()
	u.write("wield.yaml", "http_allow: [127.0.0.1/32]\n")
	r = u.must("call", "http_request", "--config", "wield.yaml", "--tools", "tools",
		"url="+srv.URL+"/items", "method=POST", `body:={"n":1}`, `headers:={"X-Count":5}`, "timeout:=10")
	var res callResult
	r.json(t, &res)
	var out struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil || !res.OK || out.StatusCode != 201 || !strings.Contains(string(out.Body), "yes-7") {
		t.Errorf("the request's status and body are not in the output (%v):\n%s", err, r)
	}
	mu.Lock()
	if gotHeader != "5" || gotBody != `{"n":1}` {
		t.Errorf("the server got X-Count %q and body %q, want 5 and {\"n\":1}", gotHeader, gotBody)
	}
	mu.Unlock()
	// Without the allowance, the guard refuses loopback.
	if r := u.wield("call", "http_request", "--tools", "tools", "url="+srv.URL); r.code != 1 || !strings.Contains(r.stdout, "permission_denied") {
		t.Errorf("a loopback request without http_allow: want permission_denied:\n%s", r)
	}

	// The toolset names a file's tool and a built-in; serve offers both.
	s := u.serve("--tools", "tools", "--tools", "configs")
	set := toolsOf(t, s, "/v1/tools?toolset=basic_set")
	if len(set) != 2 || set["http_request"].Description != "发送 HTTP 请求并返回响应" || set["echo"].Name == "" {
		t.Errorf("GET /v1/tools?toolset=basic_set = %+v, want the file's http_request and the built-in echo", set)
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}
}

// TestJourneyToolFilesDuplicates: two files define one name. Nothing stops:
// the first in load order wins, and the warning names both files and lines,
// in list, call and serve alike.
func TestJourneyToolFilesDuplicates(t *testing.T) {
	u := newUser(t)
	u.write("tools/a.yaml", "# the first\nname: greet\ndescription: Greeting from a\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	u.write("tools/b.yaml", "# the second\nname: greet\ndescription: Greeting from b\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	bothNamed := func(what, stderr string) {
		t.Helper()
		for _, want := range []string{"tools/a.yaml:2", "tools/b.yaml:2"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: the warning does not name %s:\n%s", what, want, stderr)
			}
		}
	}
	r := u.must("list", "--tools", "tools")
	if line := lineOf(r.stdout, "greet"); !strings.Contains(line, "Greeting from a") {
		t.Errorf("list shows greet as %q, want the first file's", line)
	}
	bothNamed("list", r.stderr)
	r = u.must("call", "greet", "message=hi", "--tools", "tools")
	bothNamed("call", r.stderr)

	s := u.serve("--tools", "tools")
	if got := toolsOf(t, s, "/v1/tools")["greet"].Description; got != "Greeting from a" {
		t.Errorf("serve: greet is %q, want the first file's", got)
	}
	bothNamed("serve", s.stderr.String())
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}
}

// TestJourneyToolFilesReload: serve watches its tool folder (reload.watch):
// a file dropped in appears within seconds and can be called, a second file
// of a taken name is warned about while the first keeps winning, a file
// named like a built-in replaces it and gives it back when deleted, and a
// restart with the same files starts.
func TestJourneyToolFilesReload(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "tool_dirs: [tools]\nreload: {watch: true}\n")
	u.write("tools/a.yaml", "# the first\nname: greet\ndescription: Greeting from a\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	s := u.serve("--config", "wield.yaml")

	u.write("tools/shout.yaml", "name: shout\ndescription: Say it loud\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	u.write("tools/b.yaml", "# the second\nname: greet\ndescription: Greeting from b\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	start := time.Now()
	if !eventually(10*time.Second, func() bool { _, ok := toolsOf(t, s, "/v1/tools")["shout"]; return ok }) {
		t.Fatalf("shout did not appear within 10 s:\n%s", s.stderr)
	}
	t.Logf("a dropped-in file appeared after %v", time.Since(start).Round(time.Millisecond))
	code, body := s.do("POST", "/v1/tools/shout/call", `{"arguments":{"message":"hey"}}`)
	var res callResult
	if err := json.Unmarshal(body, &res); err != nil || code != 200 || !res.OK || !strings.Contains(string(res.Output), "hey") {
		t.Errorf("call shout: %d %s", code, body)
	}
	if !eventually(5*time.Second, func() bool {
		e := s.stderr.String()
		return strings.Contains(e, "tools/a.yaml:2") && strings.Contains(e, "tools/b.yaml:2")
	}) {
		t.Errorf("no warning naming both files on reload:\n%s", s.stderr)
	}
	if got := toolsOf(t, s, "/v1/tools")["greet"].Description; got != "Greeting from a" {
		t.Errorf("after the reload greet is %q, want the first file's", got)
	}

	// A file named like a built-in replaces it; deleting it gives it back.
	u.write("tools/echo.yaml", "name: echo\ndescription: The house echo\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	if !eventually(10*time.Second, func() bool { return toolsOf(t, s, "/v1/tools")["echo"].Description == "The house echo" }) {
		t.Errorf("the file's echo did not replace the built-in:\n%s", s.stderr)
	}
	if err := os.Remove(u.path("tools/echo.yaml")); err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool {
		return strings.HasPrefix(toolsOf(t, s, "/v1/tools")["echo"].Description, "Echo a message back")
	}) {
		t.Errorf("the built-in echo did not come back after its file went:\n%s", s.stderr)
	}
	if code, _ := s.do("GET", "/healthz", ""); code != 200 {
		t.Errorf("GET /healthz = %d after the reloads", code)
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}

	// The same files at a restart: it starts, the first still wins.
	s = u.serve("--config", "wield.yaml")
	tools := toolsOf(t, s, "/v1/tools")
	if tools["greet"].Description != "Greeting from a" || tools["shout"].Name == "" {
		t.Errorf("after a restart: greet %q, shout %q", tools["greet"].Description, tools["shout"].Name)
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exit %d:\n%s", code, s.stderr)
	}
	u.must("list", "--config", "wield.yaml")
}

// TestJourneyToolFilesShadowBuiltin: a file named like a built-in is the
// user's choice: list shows the file's description and call runs the file's
// definition. With another entry the warning says the built-in is shadowed;
// a builtin entry of the same handler is a re-declaration, not warned about.
func TestJourneyToolFilesShadowBuiltin(t *testing.T) {
	u := newUser(t)
	u.write("tools/echo.yaml", "name: echo\ndescription: Echo through the shell's echo\nparameters:\n  - {name: message, type: string}\nentry: {type: command, command: [echo, \"mine: {message}\"]}\n")
	r := u.must("list", "--tools", "tools")
	if line := lineOf(r.stdout, "echo"); !strings.Contains(line, "Echo through the shell's echo") {
		t.Errorf("list shows echo as %q, want the file's", line)
	}
	if !strings.Contains(r.stderr, `tools/echo.yaml:1:1: warning: tool "echo" shadows the built-in tool`) {
		t.Errorf("no warning that the built-in is shadowed:\n%s", r)
	}
	// validate tells it the same way (one code path).
	if v := u.must("validate", "--tools", "tools"); !strings.Contains(v.stdout, `tools/echo.yaml:1:1: warning: tool "echo" shadows the built-in tool`) {
		t.Errorf("validate does not tell the shadowed built-in as list does:\n%s", v)
	}
	r = u.must("call", "echo", "message=hi", "--tools", "tools")
	if !strings.Contains(r.stdout, `"stdout": "mine: hi\n"`) {
		t.Errorf("call echo did not run the file's command:\n%s", r)
	}

	u.write("redeclared/echo.yaml", "name: echo\ndescription: 回声\nparameters:\n  - {name: message, type: string, validation: {max_length: 5}}\nentry: {type: builtin, handler: echo}\n")
	r = u.must("list", "--tools", "redeclared")
	if line := lineOf(r.stdout, "echo"); !strings.Contains(line, "回声") || strings.Contains(r.stderr, "warning") {
		t.Errorf("a re-declared echo: list shows %q, stderr:\n%s", line, r.stderr)
	}
	r = u.must("call", "echo", "message=hi", "--tools", "redeclared")
	if !strings.Contains(r.stdout, `"message": "hi"`) {
		t.Errorf("the re-declared echo did not run the built-in:\n%s", r)
	}
	if r := u.wield("call", "echo", "message=toolong", "--tools", "redeclared"); r.code != 1 || !strings.Contains(r.stdout, "validation_error") {
		t.Errorf("the file's max_length does not hold:\n%s", r)
	}
}
