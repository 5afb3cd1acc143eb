//go:build unix

package journeys

// Cedar policies beside the tool files, through `wield serve`: what one key
// may not call it does not see (REST list, exports, MCP tools/list of both
// eras) while another key does; a call it makes anyway is answered as a call
// of a tool that does not exist (tool_not_found, no policy named; over MCP
// 2026-07-28, with the status and body of an unknown tool's call, before any
// answer telling of the tool's task or of the capabilities it needs), and it is
// not shown the other key's calls of it; a call a policy denies for its
// arguments is permission_denied naming the policy, and the record keeps
// the decision; a broken file on
// reload leaves the last good policies in force; monitor mode runs what it
// would deny and records so; `wield policy check` explains a decision.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// policyFile lets everyone call everything except: bob's key may not call
// calculator, the command line without a key may not call sleep, and
// nobody may echo "secret".
func policyFile(bob string) string {
	return `@id("everyone")
permit(principal, action == Action::"call", resource);

@id("bob-no-calculator")
forbid(principal == Key::"` + bob + `", action, resource == Tool::"calculator");

@id("no-local-sleep")
forbid(principal == Anonymous::"local", action, resource == Tool::"sleep");

@id("no-secret-echo")
forbid(principal, action, resource == Tool::"echo")
when { context has args && context.args has message && context.args.message == "secret" };
`
}

// listNames answers GET /v1/tools for key: the names listed.
func listNames(t *testing.T, s *server, key string) []string {
	t.Helper()
	code, b := s.do("GET", "/v1/tools", "", bearer(key))
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if code != 200 || json.Unmarshal(b, &list) != nil {
		t.Fatalf("GET /v1/tools: %d %s", code, b)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// mcpNames lists the tools of /mcp for key, in the handshake era
// (2025-11-25) or, with modern, the stateless one (2026-07-28).
func mcpNames(t *testing.T, s *server, key string, modern bool) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: keyed{key}}}
	opts := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	if modern {
		opts = nil
	}
	cs, err := client.Connect(ctx, tr, opts)
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	// A call of a tool not listed is answered as a call of a tool that
	// does not exist, naming no policy.
	if !slices.ContainsFunc(list.Tools, func(tl *mcp.Tool) bool { return tl.Name == "calculator" }) {
		answer := func(name string) string {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"expression": "1+1"}})
			if err != nil {
				return "error: " + strings.ReplaceAll(err.Error(), name, "TOOL")
			}
			if !res.IsError || len(res.Content) == 0 {
				return fmt.Sprintf("not an error: %+v", res)
			}
			return strings.ReplaceAll(res.Content[0].(*mcp.TextContent).Text, name, "TOOL")
		}
		hidden, unknown := answer("calculator"), answer("no_such_tool")
		if hidden != unknown || strings.Contains(hidden, "bob-no-calculator") {
			t.Errorf("MCP tools/call of an unlisted calculator (2026 era %v): %q; want what a tool that does not exist gets, %q", modern, hidden, unknown)
		}
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestJourneyPolicies: two keys, one policy file beside the tool files.
func TestJourneyPolicies(t *testing.T) {
	u := newUser(t)
	alice, _ := makeKey(t, u, "--name", "alice", "--rights", "call")
	bob, bobID := makeKey(t, u, "--name", "bob", "--rights", "call")
	u.write("configs/tools/note.yaml", "name: note\ndescription: Say a note\nparameters:\n  - {name: message, type: string, required: true}\nentry: {type: builtin, handler: echo}\n")
	u.write("configs/policies.cedar", policyFile(bobID))
	u.write("configs/tools/asking.yaml", hiddenAskingTools)
	u.write("configs/asking.cedar", `@id("bob-no-asking")
forbid(principal == Key::"`+bobID+`", action, resource == Tool::"named");

@id("bob-no-roots")
forbid(principal == Key::"`+bobID+`", action, resource == Tool::"where");
`)
	u.write("wield.yaml", "reload: {watch: true}\n")

	// wield validate reads the policy files too.
	u.must("validate", "configs")

	s := u.serve("--config", "wield.yaml", "--tools", "configs")

	// Listing: bob does not see calculator, alice does.
	if names := listNames(t, s, alice); !slices.Contains(names, "calculator") || !slices.Contains(names, "echo") {
		t.Errorf("alice's /v1/tools = %v, want calculator and echo", names)
	}
	if names := listNames(t, s, bob); slices.Contains(names, "calculator") || !slices.Contains(names, "echo") {
		t.Errorf("bob's /v1/tools = %v, want echo without calculator", names)
	}
	for _, f := range []string{"openai", "anthropic", "gemini", "mcp"} {
		_, ab := s.do("GET", "/v1/tools?format="+f, "", bearer(alice))
		_, bb := s.do("GET", "/v1/tools?format="+f, "", bearer(bob))
		if !strings.Contains(string(ab), `"calculator"`) || strings.Contains(string(bb), `"calculator"`) || !strings.Contains(string(bb), `"echo"`) {
			t.Errorf("?format=%s: alice's has calculator %v, bob's has it %v (want true, false)", f, strings.Contains(string(ab), `"calculator"`), strings.Contains(string(bb), `"calculator"`))
		}
	}
	// wield list: through the server as the key, and locally as
	// Anonymous::"local".
	if r := u.must("list", "--server", s.url, "--key", bob); strings.Contains(r.stdout, "calculator") || !strings.Contains(r.stdout, "echo") {
		t.Errorf("wield list --server as bob: want echo without calculator:\n%s", r)
	}
	if r := u.must("list", "--server", s.url, "--key", alice); !strings.Contains(r.stdout, "calculator") || !strings.Contains(r.stdout, "sleep") {
		t.Errorf("wield list --server as alice: want calculator and sleep:\n%s", r)
	}
	if r := u.must("list", "--tools", "configs"); strings.Contains(r.stdout, "sleep") || !strings.Contains(r.stdout, "calculator") {
		t.Errorf("wield list locally: want calculator without sleep:\n%s", r)
	}
	if r := u.must("list", "--tools", "configs", "--format", "openai"); strings.Contains(r.stdout, `"sleep"`) || !strings.Contains(r.stdout, `"calculator"`) {
		t.Errorf("wield list --format openai locally: want calculator without sleep:\n%s", r)
	}
	if code, _ := s.do("GET", "/v1/tools/calculator", "", bearer(bob)); code != 404 {
		t.Errorf("bob's GET /v1/tools/calculator: %d, want 404 (absent, as from the list)", code)
	}
	for _, modern := range []bool{false, true} {
		if names := mcpNames(t, s, alice, modern); !slices.Contains(names, "calculator") {
			t.Errorf("alice's MCP tools/list (2026 era %v) = %v, want calculator", modern, names)
		}
		if names := mcpNames(t, s, bob, modern); slices.Contains(names, "calculator") || !slices.Contains(names, "echo") {
			t.Errorf("bob's MCP tools/list (2026 era %v) = %v, want echo without calculator", modern, names)
		}
	}

	hiddenMCP2026(t, s, alice, bob)

	// Calling anyway: to bob calculator is a tool that does not exist, with
	// arguments good or bad, and no policy is named.
	var res struct {
		CallID    string `json:"call_id"`
		OK        bool   `json:"ok"`
		ErrorType string `json:"error_type"`
		Error     string `json:"error"`
	}
	for _, args := range []string{`{"expression":"6*7"}`, `{"nope":1}`} {
		code, b := s.do("POST", "/v1/tools/calculator/call", `{"arguments":`+args+`}`, bearer(bob))
		if code != 200 || json.Unmarshal(b, &res) != nil || res.OK || res.ErrorType != "tool_not_found" || res.Error != "Can not find tool named 'calculator'" {
			t.Fatalf("bob calls calculator with %s: %d %s; want tool_not_found, as for a tool that does not exist", args, code, b)
		}
	}
	code, b := s.do("POST", "/v1/tools/no_such_tool/call", `{"arguments":{"expression":"6*7"}}`, bearer(bob))
	if code != 200 || !strings.Contains(string(b), `"error":"Can not find tool named 'no_such_tool'"`) {
		t.Errorf("bob calls a tool that does not exist: %d %s; want the same answer", code, b)
	}
	// A claimed user or agent ID does not replace the key as the principal.
	code, b = s.do("POST", "/v1/tools/calculator/call", `{"arguments":{"expression":"6*7"},"caller":{"id":"helper","user_id":"root"}}`, bearer(bob))
	if code != 200 || !strings.Contains(string(b), `"error_type":"tool_not_found"`) || strings.Contains(string(b), "bob-no-calculator") {
		t.Errorf("bob calls calculator claiming user root: %d %s; want the same answer", code, b)
	}
	code, b = s.do("GET", "/v1/calls/"+res.CallID, "", bearer(bob))
	if code != 200 || !strings.Contains(string(b), `"error_type":"tool_not_found"`) || strings.Contains(string(b), "bob-no-calculator") || strings.Contains(string(b), `"tool_version"`) {
		t.Errorf("bob reads his call's record: %d %s; want it as a call of an unknown tool", code, b)
	}
	// A denial for the arguments names its policy; the record keeps the
	// decision with its policy IDs.
	code, b = s.do("POST", "/v1/tools/echo/call", `{"arguments":{"message":"secret"}}`, bearer(alice))
	var denied struct {
		CallID string `json:"call_id"`
	}
	if code != 200 || !strings.Contains(string(b), "no-secret-echo") || json.Unmarshal(b, &denied) != nil {
		t.Errorf("alice echoes secret: %d %s; want a denial naming no-secret-echo", code, b)
	}
	code, b = s.do("GET", "/v1/calls/"+denied.CallID, "", bearer(alice))
	if code != 200 || !strings.Contains(string(b), `"policy":{"allow":false,"policies":["no-secret-echo"]}`) {
		t.Errorf("the denied call's record: %d %s; want its policy decision", code, b)
	}
	code, b = s.do("POST", "/v1/tools/calculator/call", `{"arguments":{"expression":"6*7"}}`, bearer(alice))
	var alices struct {
		CallID string `json:"call_id"`
	}
	if code != 200 || !strings.Contains(string(b), `"ok":true`) || !strings.Contains(string(b), `"policies":["everyone"]`) || json.Unmarshal(b, &alices) != nil {
		t.Errorf("alice calls calculator: %d %s; want it run, permitted by everyone", code, b)
	}
	// Bob is not shown alice's calculator call: not listed, and read by
	// its ID as an ID no call has.
	if code, b = s.do("GET", "/v1/calls?tool=calculator", "", bearer(bob)); code != 200 || strings.Contains(string(b), alices.CallID) {
		t.Errorf("bob lists calculator's calls: %d %s; want none of alice's", code, b)
	}
	code, b = s.do("GET", "/v1/calls/"+alices.CallID, "", bearer(bob))
	if code2, b2 := s.do("GET", "/v1/calls/no-such-call", "", bearer(bob)); code != 404 || code != code2 || string(b) != string(b2) {
		t.Errorf("bob reads alice's calculator call: %d %s; want what an unknown ID answers, %d %s", code, b, code2, b2)
	}

	// A dry run says so, as the call would, naming no policy.
	r := u.wield("call", "calculator", "expression=6*7", "--dry-run", "--server", s.url, "--key", bob)
	if r.code != 1 || strings.Contains(r.stdout, "bob-no-calculator") || !strings.Contains(r.stdout, "tool_not_found") {
		t.Errorf("wield call --dry-run as bob: want exit 1 and tool_not_found, no policy named:\n%s", r)
	}

	// `wield policy check` explains.
	r = u.wield("policy", "check", "--tools", "configs", "--key", bobID, "--tool", "calculator", "--args", `{"expression":"1+1"}`)
	if r.code != 1 || !strings.HasPrefix(r.stdout, "deny\n") || !strings.Contains(r.stdout, "forbidden by: bob-no-calculator") {
		t.Errorf("policy check of bob's calculator: want exit 1, deny, forbidden by bob-no-calculator:\n%s", r)
	}
	r = u.wield("policy", "check", "--tools", "configs", "--key", "someone", "--tool", "echo", "--args", `{"message":"hi"}`)
	var dec struct {
		Allow    bool     `json:"allow"`
		Policies []string `json:"policies"`
	}
	if j := u.wield("policy", "check", "--tools", "configs", "--key", bobID, "--tool", "calculator", "--json"); j.code != 1 {
		t.Errorf("policy check --json of bob's calculator: want exit 1:\n%s", j)
	} else if j.json(t, &dec); dec.Allow || !slices.Equal(dec.Policies, []string{"bob-no-calculator"}) {
		t.Errorf("policy check --json: %+v", dec)
	}
	if r.code != 0 || !strings.HasPrefix(r.stdout, "allow\npermitted by: everyone\n") || !strings.Contains(r.stdout, "own permission: auto") {
		t.Errorf("policy check of an echo: want exit 0, allow, permitted by everyone, then auto:\n%s", r)
	}

	// A broken file on reload: the last good set stays in force, the log
	// and a load_error event say which file and where.
	loadErrors := make(chan string, 4)
	ectx, ecancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ecancel()
	ereq, _ := http.NewRequestWithContext(ectx, "GET", s.url+"/v1/events?type=load_error", nil)
	ereq.Header.Set("Authorization", "Bearer "+alice)
	eresp, err := http.DefaultClient.Do(ereq)
	if err != nil || eresp.StatusCode != 200 {
		t.Fatalf("GET /v1/events: %v %v", err, eresp)
	}
	go func() {
		defer eresp.Body.Close()
		sc := bufio.NewScanner(eresp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				loadErrors <- data
			}
		}
		close(loadErrors)
	}()
	u.write("configs/policies.cedar", "permit(principal, action, resource);\nforbid(principal action, resource);\n")
	if !eventually(10*time.Second, func() bool { return strings.Contains(s.stderr.String(), "policies.cedar:2:") }) {
		t.Fatalf("no reload error naming policies.cedar:2: in the log:\n%s", s.stderr)
	}
	select {
	case ev := <-loadErrors:
		if !strings.Contains(ev, "policies.cedar:2:") || !strings.Contains(ev, "last good") {
			t.Errorf("the load_error event: %s; want the file:line and that the last good policies stay", ev)
		}
	case <-ectx.Done():
		t.Errorf("no load_error event on /v1/events")
	}
	ecancel()
	if names := listNames(t, s, bob); slices.Contains(names, "calculator") {
		t.Errorf("after a broken reload bob sees %v; want the last good policies (no calculator)", names)
	}
	if r := u.wield("validate", "configs"); r.code != 1 || !strings.Contains(r.stdout, "policies.cedar:2:") {
		t.Errorf("validate of the broken file: want exit 1 naming policies.cedar:2:\n%s", r)
	}
	// Mended, without bob's forbid: bob sees calculator.
	u.write("configs/policies.cedar", "@id(\"everyone\") permit(principal, action, resource);\n")
	if !eventually(10*time.Second, func() bool { return slices.Contains(listNames(t, s, bob), "calculator") }) {
		t.Errorf("after the mended reload bob still lacks calculator:\n%s", s.stderr)
	}
	if code, took := s.stop(syscall.SIGTERM, 20*time.Second); code != 0 {
		t.Fatalf("serve exit %d after %v:\n%s", code, took, s.stderr)
	}

	// Monitor mode: the call bob may not make runs, and its record says
	// would_deny; the tool is listed.
	u.write("configs/policies.cedar", policyFile(bobID))
	u.write("configs/tools/asking.yaml", hiddenAskingTools)
	u.write("configs/asking.cedar", `@id("bob-no-asking")
forbid(principal == Key::"`+bobID+`", action, resource == Tool::"named");

@id("bob-no-roots")
forbid(principal == Key::"`+bobID+`", action, resource == Tool::"where");
`)
	u.write("monitor.yaml", "policy: {mode: monitor}\n")
	m := u.serve("--config", "monitor.yaml", "--tools", "configs")
	if names := listNames(t, m, bob); !slices.Contains(names, "calculator") {
		t.Errorf("monitor mode: bob's list %v; want calculator listed", names)
	}
	code, b = m.do("POST", "/v1/tools/calculator/call", `{"arguments":{"expression":"6*7"}}`, bearer(bob))
	if code != 200 || json.Unmarshal(b, &res) != nil || !res.OK {
		t.Fatalf("monitor mode: bob's calculator: %d %s; want it run", code, b)
	}
	code, b = m.do("GET", "/v1/calls/"+res.CallID, "", bearer(bob))
	if code != 200 || !strings.Contains(string(b), `"would_deny":true`) || !strings.Contains(string(b), "bob-no-calculator") {
		t.Errorf("monitor mode record: %d %s; want would_deny with bob-no-calculator", code, b)
	}
	if !strings.Contains(m.stderr.String(), "policy would deny") {
		t.Errorf("monitor mode logs nothing of the would-be denial:\n%s", m.stderr)
	}
}

// hiddenAskingTools are tools whose MCP answers tell, before the engine
// decides a call, what the server knows of them: a task tool that asks
// before its task is made, and one that needs the client's roots.
const hiddenAskingTools = `- name: named
  description: Asks a name before its task is made
  task: required
  entry:
    type: mcp_client
    steps:
      - elicit: {message: "Who?", schema: {type: object, properties: {name: {type: string}}, required: [name]}, as: who}
        before_task: true
    text: "Hi, {{.who.content.name}}"
- name: where
  description: Needs the client's roots
  entry:
    type: mcp_client
    steps:
      - roots: {as: dirs}
    text: "{{len .dirs.roots}} roots"
`

// hiddenMCP2026 checks the 2026-07-28 tools/call of the tools of
// hiddenAskingTools, which the policies hide from bob: alice is asked the
// task's first question (input_required) and refused for the roots her
// client lacks (-32021), where bob gets, as HTTP status and body, exactly
// what a tool the server does not have gets, whatever his client declares.
func hiddenMCP2026(t *testing.T, s *server, alice, bob string) {
	t.Helper()
	post := func(key, name, caps string) (int, string) {
		t.Helper()
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{},%s}}`, name, meta)
		code, b := s.do("POST", "/mcp", body, "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2026-07-28",
			"Mcp-Method: tools/call", "Mcp-Name: "+name, bearer(key))
		return code, strings.ReplaceAll(string(b), name, "TOOL")
	}
	const tasks = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	if code, b := post(alice, "named", tasks); code != 200 || !strings.Contains(b, `"input_required"`) {
		t.Errorf("alice's 2026-07-28 call of a task tool asking first: %d %s, want input_required", code, b)
	}
	if code, b := post(alice, "where", tasks); code != 400 || !strings.Contains(b, "-32021") {
		t.Errorf("alice's 2026-07-28 call of a tool needing roots: %d %s, want 400 and -32021", code, b)
	}
	for _, caps := range []string{tasks, `{}`, `{"roots":{}}`} {
		for _, name := range []string{"named", "where"} {
			code, b := post(bob, name, caps)
			ucode, ub := post(bob, "no_such_tool", caps)
			if code != ucode || b != ub || !strings.Contains(ub, `unknown tool \"TOOL\"`) {
				t.Errorf("bob's 2026-07-28 call of %s hidden from him (client capabilities %s): %d %s; want what a tool that does not exist gets, %d %s", name, caps, code, b, ucode, ub)
			}
		}
	}
}

// TestJourneyPoliciesThroughLink: a tool folder given through a symbolic
// link (a shared folder linked into the project) has its policies in
// force, as its tool files are: the forbid there holds for wield call.
// Before, the link alone was visited: the folder's tool files loaded and
// its policies were silently left out.
func TestJourneyPoliciesThroughLink(t *testing.T) {
	u := newUser(t)
	u.write("shared/policies.cedar", `@id("everyone")
permit(principal, action == Action::"call", resource);

@id("no-echo")
forbid(principal, action, resource == Tool::"echo");
`)
	if err := os.Symlink(u.path("shared"), u.path("tools")); err != nil {
		t.Fatal(err)
	}
	if r := u.wield("call", "--tools", "tools", "echo", "message=hi"); r.code == 0 || strings.Contains(r.stdout, `"hi"`) {
		t.Errorf("echo, forbidden by the linked folder's policy, ran:\n%s", r)
	}
	if r := u.wield("call", "--tools", "tools", "calculator", "expression=1+1"); r.code != 0 || !strings.Contains(r.stdout, "2") {
		t.Errorf("calculator, permitted, did not run:\n%s", r)
	}
}
