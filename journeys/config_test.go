//go:build unix

package journeys

import (
	"encoding/json"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The TypeScript agent's config.yml on a first run: its folders not all
// made, no search key yet, and nothing listening where its MCP server is.
// wield starts anyway and says what it cannot use yet; what appears later
// is used without a restart.

// cfgUnsetenv removes a variable the user might have in their own shell, for
// every later command.
func (u *user) cfgUnsetenv(k string) {
	env := u.env[:0]
	for _, kv := range u.env {
		if !strings.HasPrefix(kv, k+"=") {
			env = append(env, kv)
		}
	}
	u.env = env
}

// cfgListening reports whether something accepts connections on addr.
func cfgListening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// cfgCountDials listens on addr and counts the connections made to it until
// the journey ends; ok is false when addr is taken.
func cfgCountDials(t *testing.T, addr string) (dials *atomic.Int32, ok bool) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, false
	}
	dials = &atomic.Int32{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return dials, true
}

// cfgToolNames are the first column of `wield list`.
func cfgToolNames(out string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names[f[0]] = true
		}
	}
	return names
}

// cfgFirstRun is a user with the document's config.yml, byte for byte, and
// only ./data made.
func cfgFirstRun(t *testing.T) *user {
	t.Helper()
	u := newUser(t)
	u.cfgUnsetenv("WEB_SEARCH_API_KEY")
	u.copy("seeds/003/config.yml", "config.yml")
	if err := os.Mkdir(u.path("data"), 0o755); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestJourneyConfigFirstRun(t *testing.T) {
	u := cfgFirstRun(t)
	mcpDown := !cfgListening("127.0.0.1:3000")
	disabled, watchDisabled := cfgCountDials(t, "127.0.0.1:3001")

	r := u.wield("list", "--config", "config.yml")
	if r.code != 0 {
		t.Fatalf("a first run's list: want exit 0:\n%s", r)
	}
	for _, want := range []string{
		`config.yml:12:7: warning: tools.allowedPaths[1]: the folder "./docs" (` + u.path("docs") + `) does not exist yet`,
		`config.yml:13:7: warning: tools.allowedPaths[2]: the folder "./src" (` + u.path("src") + `) does not exist yet`,
		"config.yml:18:14: warning: web_search is off: environment variable WEB_SEARCH_API_KEY is not set",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "./data") {
		t.Errorf("a warning about ./data, which exists:\n%s", r.stderr)
	}
	if mcpDown && !strings.Contains(r.stderr, "config.yml:23:7: warning: mcp server filesystem (http://localhost:3000) does not answer now") {
		t.Errorf("no warning naming the MCP server that does not answer:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "database") || strings.Contains(r.stderr, "3001") {
		t.Errorf("the disabled MCP server is spoken of:\n%s", r.stderr)
	}
	names := cfgToolNames(r.stdout)
	if names["web_search"] {
		t.Errorf("web_search is listed without its key:\n%s", r.stdout)
	}
	for _, want := range []string{"read_file", "write_file", "list_files", "delete_file", "move_file", "get_file_info"} {
		if !names[want] {
			t.Errorf("list lacks %s:\n%s", want, r.stdout)
		}
	}

	// The user makes ./docs and puts a file in it: the file tools read it.
	// Their relative paths start at the first allowed folder (./data), so
	// a file elsewhere is named by its full path, as the tools'
	// descriptions say.
	u.write("docs/x.txt", "made after the first run")
	r = u.wield("call", "read_file", "--config", "config.yml", "path="+u.path("docs/x.txt"))
	var res struct {
		OK     bool `json:"ok"`
		Output struct {
			Content string `json:"content"`
		} `json:"output"`
	}
	r.json(t, &res)
	if r.code != 0 || !res.OK || res.Output.Content != "made after the first run" {
		t.Errorf("read_file in the folder made later:\n%s", r)
	}
	if strings.Contains(r.stderr, `"./docs"`) {
		t.Errorf("still a warning about ./docs once it exists:\n%s", r.stderr)
	}
	r = u.wield("call", "write_file", "--config", "config.yml", "path=notes.txt", "content=in data")
	if b, err := os.ReadFile(u.path("data/notes.txt")); r.code != 0 || string(b) != "in data" {
		t.Errorf("write_file of a relative path: %q %v\n%s", b, err, r)
	}
	// ./src is still missing: the call says so, as a result.
	r = u.wield("call", "list_files", "--config", "config.yml", "path="+u.path("src"))
	if r.code != 1 || !strings.Contains(r.stdout, `"error_type": "execution_error"`) || !strings.Contains(r.stdout, "does not exist (yet)") {
		t.Errorf("list_files of the folder still missing:\n%s", r)
	}

	// With the key, web_search is there, and nothing is said of it.
	u.setenv("WEB_SEARCH_API_KEY", "k")
	r = u.must("list", "--config", "config.yml")
	if !cfgToolNames(r.stdout)["web_search"] {
		t.Errorf("web_search is not listed with its key:\n%s", r.stdout)
	}
	if strings.Contains(r.stderr, "WEB_SEARCH_API_KEY") {
		t.Errorf("a warning about the key that is set:\n%s", r.stderr)
	}

	if !watchDisabled {
		t.Log("127.0.0.1:3001 is taken: whether the disabled server is dialled is not checked")
	} else if n := disabled.Load(); n != 0 {
		t.Errorf("the disabled MCP server (localhost:3001) was dialled %d times", n)
	}
}

func TestJourneyConfigFirstRunServe(t *testing.T) {
	u := cfgFirstRun(t)
	disabled, watchDisabled := cfgCountDials(t, "127.0.0.1:3001")
	s := u.serve("--config", "config.yml")

	status, b := s.do("GET", "/v1/tools", "")
	if status != 200 {
		t.Fatalf("GET /v1/tools: %d %s\nserver stderr:\n%s", status, b, s.stderr)
	}
	if !strings.Contains(string(b), `"read_file"`) || strings.Contains(string(b), `"web_search"`) {
		t.Errorf("GET /v1/tools: want the file tools and no web_search:\n%s", b)
	}
	if !strings.Contains(s.stderr.String(), "web_search is off: environment variable WEB_SEARCH_API_KEY is not set") {
		t.Errorf("serve did not say web_search is off:\n%s", s.stderr)
	}

	// A folder made while the server runs is used by the next call.
	u.write("src/main.go", "package main\n")
	status, b = s.do("POST", "/v1/tools/read_file/call", `{"arguments":{"path":`+cfgQuote(u.path("src/main.go"))+`}}`)
	var res struct {
		OK     bool `json:"ok"`
		Output struct {
			Content string `json:"content"`
		} `json:"output"`
	}
	if err := json.Unmarshal(b, &res); status != 200 || err != nil || !res.OK || res.Output.Content != "package main\n" {
		t.Errorf("read_file in the folder made after start: %d %v %s\nserver stderr:\n%s", status, err, b, s.stderr)
	}
	status, b = s.do("POST", "/v1/tools/list_files/call", `{"arguments":{"path":`+cfgQuote(u.path("src"))+`}}`)
	if status != 200 || !strings.Contains(string(b), `"ok":true`) || !strings.Contains(string(b), `"name":"main.go"`) {
		t.Errorf("list_files of the folder made after start: %d %s", status, b)
	}

	code, took := s.stop(syscall.SIGTERM, 10*time.Second)
	if code != 0 || took > 5*time.Second {
		t.Errorf("SIGTERM: exit %d after %v, want 0 within 5s\n%s", code, took, s.stderr)
	}
	if watchDisabled && disabled.Load() != 0 {
		t.Errorf("the disabled MCP server (localhost:3001) was dialled %d times", disabled.Load())
	}
}

// cfgQuote is s as a JSON string.
func cfgQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestJourneyConfigAgentOfMCPServerDown: toolsets-and-agents.md's analyst
// agent names inner__current_time, a tool of the MCP server inner. On a
// first run that server does not answer yet (a warning): `wield call echo`
// and `wield list` still run, the analyst agent is left out with a warning
// saying why, and the file's other agent is offered.
func TestJourneyConfigAgentOfMCPServerDown(t *testing.T) {
	u := newUser(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens there now
	u.write("tools/analyst.agent.yaml", "name: analyst\ndescription: Answers questions about the sales data\ntool_sets: [basics]\ntools: [calculator, inner__current_time]\noutput_strategy:\n  function_calling: true\n")
	u.write("tools/basics.toolset.yaml", "name: basics\ndescription: Small tools\ntools: [echo]\n")
	u.write("tools/helper.agent.yaml", "kind: agent\nname: helper\ntools: [echo, calculator]\n")
	u.write("wield.yaml", "tool_dirs: [tools]\nmcp_servers:\n  - name: inner\n    url: \"http://"+closed+"/mcp\"\n")

	r := u.wield("call", "echo", "--config", "wield.yaml", "message=hi")
	if r.code != 0 || !strings.Contains(r.stdout, `"ok": true`) {
		t.Fatalf("call echo while the MCP server is down: want exit 0 and the result\n%s", r)
	}
	for _, want := range []string{"mcp server inner", "does not answer now", `"analyst"`, "left out"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r := u.wield("list", "--config", "wield.yaml", "--agent", "helper"); r.code != 0 || !strings.Contains(r.stdout, "calculator") {
		t.Errorf("list --agent helper: want exit 0 with its tools\n%s", r)
	}
	if r := u.wield("list", "--config", "wield.yaml", "--toolset", "basics"); r.code != 0 || !strings.Contains(r.stdout, "echo") {
		t.Errorf("list --toolset basics: want exit 0 with echo\n%s", r)
	}
}
