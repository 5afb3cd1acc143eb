//go:build unix

package journeys

// Programs that call tools: `wield serve --programs` offers run_program;
// a program's inner calls each go through the pipeline and are recorded
// under the program's call; the sandbox ends runaway programs with a clear
// result while the server keeps serving.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// programTools are nine auto tools, one confirm tool admitted for
// programs (approve_me) and one confirm tool with the default callers
// (guarded, direct only).
func programTools() string {
	var b strings.Builder
	b.WriteString("tools:\n")
	for i := range 9 {
		fmt.Fprintf(&b, "  - name: step%d\n    description: Echo a message\n    parameters:\n      - {name: message, type: string}\n    entry: {type: builtin, handler: echo}\n", i)
	}
	b.WriteString(`  - name: approve_me
    description: Echo, after a person approves
    permission: confirm
    allowed_callers: [direct, program]
    parameters:
      - {name: message, type: string}
    entry: {type: builtin, handler: echo}
  - name: guarded
    description: Echo, after a person approves; never from a program
    permission: confirm
    parameters:
      - {name: message, type: string}
    entry: {type: builtin, handler: echo}
`)
	return b.String()
}

// runProgram posts a program to run_program and returns the result.
func runProgram(t *testing.T, s *server, code string, timeoutMS int) (result struct {
	CallID    string          `json:"call_id"`
	OK        bool            `json:"ok"`
	Output    json.RawMessage `json:"output"`
	Error     string          `json:"error"`
	ErrorType string          `json:"error_type"`
}, took time.Duration) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"arguments": map[string]string{"code": code}, "caller": map[string]string{"id": "agent-7", "conversation_id": "conv-programs"}, "timeout_ms": timeoutMS})
	start := time.Now()
	code2, b := s.do("POST", "/v1/tools/run_program/call", string(body))
	took = time.Since(start)
	if code2 != 200 {
		t.Fatalf("run_program: status %d: %s", code2, b)
	}
	if err := json.Unmarshal(b, &result); err != nil {
		t.Fatalf("run_program answered %s: %v", b, err)
	}
	return result, took
}

func TestJourneyPrograms(t *testing.T) {
	u := newUser(t)
	u.write("tools/steps.yaml", programTools())
	s := u.serve("--programs", "--tools", "tools")

	// The description lists the tools as functions; guarded is not one.
	code, b := s.do("GET", "/v1/tools/run_program", "")
	if code != 200 || !strings.Contains(string(b), "step0(message: str)") || !strings.Contains(string(b), "approve_me(") || strings.Contains(string(b), "guarded(") {
		t.Fatalf("GET /v1/tools/run_program: %d %s", code, b)
	}

	// Ten inner calls, the last needing approval: the program waits.
	done := make(chan struct{})
	var res struct {
		CallID    string          `json:"call_id"`
		OK        bool            `json:"ok"`
		Output    json.RawMessage `json:"output"`
		Error     string          `json:"error"`
		ErrorType string          `json:"error_type"`
	}
	go func() {
		defer close(done)
		res, _ = runProgram(t, s, "out = []\nfor i in range(9):\n    out.append(call('step%d' % i, {'message': 'm%d' % i}))\nout.append(approve_me(message='last'))\nresult = len(out)\n", 0)
	}()
	ids := pendingIDs(t, u, 1)
	select {
	case <-done:
		t.Fatal("the program ended before its confirm call was approved")
	default:
	}
	u.must("approvals", "approve", ids[0])
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the program did not end within 20 s of the approval")
	}
	if !res.OK || !strings.Contains(string(res.Output), `"result":10`) || !strings.Contains(string(res.Output), `"calls":10`) {
		t.Fatalf("program result: %+v %s", res, res.Output)
	}
	// Ten records under the program's call, each naming it as parent.
	var page struct {
		Records []struct {
			Call struct {
				Tool   string `json:"tool"`
				Caller struct {
					ID             string         `json:"id"`
					Type           string         `json:"type"`
					ConversationID string         `json:"conversation_id"`
					Variables      map[string]any `json:"variables"`
				} `json:"caller"`
			} `json:"call"`
			Result struct {
				OK bool `json:"ok"`
			} `json:"result"`
		} `json:"records"`
	}
	// Records are written in groups: they are all there within seconds.
	eventually(5*time.Second, func() bool {
		page.Records = nil
		u.must("calls", "--caller", res.CallID, "--json", "--limit", "100").json(t, &page)
		return len(page.Records) >= 10
	})
	if len(page.Records) != 10 {
		all := u.must("calls", "--conversation", "conv-programs", "--json", "--limit", "100")
		t.Fatalf("%d records under program call %s, want 10; the conversation's:\n%s", len(page.Records), res.CallID, all.stdout)
	}
	tools := map[string]bool{}
	for _, r := range page.Records {
		c := r.Call.Caller
		if c.Type != "program" || c.ConversationID != "conv-programs" || c.Variables["parent_call_id"] != res.CallID || !r.Result.OK {
			t.Errorf("record of %s: %+v ok=%v", r.Call.Tool, c, r.Result.OK)
		}
		tools[r.Call.Tool] = true
	}
	if len(tools) != 10 || !tools["approve_me"] {
		t.Errorf("inner calls of %v, want the ten tools", tools)
	}

	// Runaway programs end with a clear result within their limits.
	limits := []struct {
		name, code string
		timeoutMS  int
		errType    string
		errHas     string
		within     time.Duration
	}{
		{"busy loop past its deadline", "while True:\n    pass\n", 50, "timeout", "timed out", 5 * time.Second},
		{"busy loop past its steps", "while True:\n    pass\n", 0, "execution_error", "more than 10000000 steps", 30 * time.Second},
		{"memory bomb", "s = 'x' * 1024\nwhile True:\n    s = s + s\n", 0, "execution_error", "over the program's limit", 5 * time.Second},
		{"recursion", "def f(n):\n    return f(n + 1)\nresult = f(0)\n", 0, "execution_error", "called recursively", 5 * time.Second},
		{"10,000 inner calls", "for i in range(10000):\n    step0(message='x')\n", 0, "execution_error", "more than 1000 tool calls", 60 * time.Second},
		{"a tool not for programs", "guarded(message='x')\n", 0, "validation_error", "undefined: guarded", 5 * time.Second},
		{"a tool not for programs by name", "call('guarded', {'message': 'x'})\n", 0, "permission_denied", "may not be called from a program", 5 * time.Second},
	}
	for _, l := range limits {
		r, took := runProgram(t, s, l.code, l.timeoutMS)
		if r.OK || r.ErrorType != l.errType || !strings.Contains(r.Error, l.errHas) {
			t.Errorf("%s: ok=%v %s %q, want %s containing %q", l.name, r.OK, r.ErrorType, r.Error, l.errType, l.errHas)
		}
		if took > l.within {
			t.Errorf("%s: took %s, want within %s", l.name, took, l.within)
		}
		if code, _ := s.do("GET", "/healthz", ""); code != 200 {
			t.Fatalf("after %s the server answers /healthz with %d", l.name, code)
		}
	}
	// The same from the command line, against the running server.
	r := u.wield("call", "--server", s.url, "run_program", "code=result = step1(message='cli')")
	if r.code != 0 || !strings.Contains(r.stdout, "cli") {
		t.Errorf("wield call run_program:\n%s", r)
	}
	// --programs=fail: an inner call needing approval stops the program
	// at once, saying so, and nothing waits in the inbox.
	r = u.wield("call", "--programs=fail", "--tools", "tools", "run_program", "code=approve_me(message='x')")
	if r.code == 0 || !strings.Contains(r.stdout, "permission_denied") || !strings.Contains(r.stdout, "do not wait") || r.took > 10*time.Second {
		t.Errorf("wield call --programs=fail:\n%s", r)
	}
	if r := u.wield("call", "--programs=later", "run_program", "code=1"); r.code != 2 || !strings.Contains(r.stderr, "--programs=fail") {
		t.Errorf("wield call --programs=later:\n%s", r)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exited %d after %s:\n%s", code, took, s.stderr)
	}
}

// TestJourneyProgramsScopedKey: a key scoped to a toolset that holds
// run_program and step0 runs programs whose inner calls stay within its
// scope: step0 runs, step1 (outside it) is refused inside the program.
func TestJourneyProgramsScopedKey(t *testing.T) {
	u := newUser(t)
	u.write("tools/steps.yaml", programTools())
	u.write("tools/scope.yaml", "kind: toolset\nname: prog_scope\ntools: [run_program, step0]\n")
	key, id := makeKey(t, u, "--toolset", "prog_scope", "--tools", "tools", "--programs")
	s := u.serve("--programs", "--tools", "tools")
	call := func(code string) (int, string) {
		body, _ := json.Marshal(map[string]any{"arguments": map[string]string{"code": code}})
		status, b := s.do("POST", "/v1/tools/run_program/call", string(body), bearer(key))
		return status, string(b)
	}
	if status, b := call("result = step0(message='in scope')"); status != 200 || !strings.Contains(b, `"ok":true`) || !strings.Contains(b, "in scope") {
		t.Errorf("step0 inside the key's scope: %d %s", status, b)
	}
	// Outside the scope a tool is no function in the program, and by name
	// the engine refuses it.
	if status, b := call("result = step1(message='out of scope')"); status != 200 || !strings.Contains(b, "undefined: step1") {
		t.Errorf("step1 as a function outside the key's scope: %d %s", status, b)
	}
	status, b := call("result = call('step1', {'message': 'out of scope'})")
	if status != 200 || !strings.Contains(b, `"error_type":"tool_not_found"`) || !strings.Contains(b, "not available in key "+id) {
		t.Errorf("step1 outside the key's scope: %d %s", status, b)
	}
}

// TestJourneyProgramsMCPCode: `wield mcp --code` serves one tool,
// run_program, and a program run by an MCP client calls the other tools.
func TestJourneyProgramsMCPCode(t *testing.T) {
	u := newUser(t)
	srv := u.mcpHTTP("--code")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, srv.stderr)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "run_program" || !strings.Contains(list.Tools[0].Description, "calculator(expression: str)") {
		t.Fatalf("tools/list: %d tools, first %+v", len(list.Tools), list.Tools[0])
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_program", Arguments: map[string]any{"code": "result = [echo(message='hi'), calculator(expression='6*7')]"}})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	if len(res.Content) > 0 {
		if c, ok := res.Content[0].(*mcp.TextContent); ok {
			text = c.Text
		}
	}
	if res.IsError || !strings.Contains(text, "hi") || !strings.Contains(text, "42") || !strings.Contains(text, `"calls":2`) {
		t.Errorf("run_program over MCP: error=%v %s", res.IsError, text)
	}
	if r := u.wield("mcp", "--code", "--toolset", "x"); r.code != 2 || !strings.Contains(r.stderr, "does not go with --toolset") {
		t.Errorf("mcp --code --toolset:\n%s", r)
	}
}

// TestJourneyProgramsDescriptionFollowsReload: a tool file added while
// serve watches its folder shows in run_program's description and is a
// function in the next program.
func TestJourneyProgramsDescriptionFollowsReload(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "tool_dirs: [tools]\nreload: {watch: true}\n")
	u.write("tools/steps.yaml", programTools())
	s := u.serve("--programs", "--config", "wield.yaml")
	u.write("tools/late.yaml", "name: late_tool\ndescription: Arrived after the start\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	ok := eventually(10*time.Second, func() bool {
		_, b := s.do("GET", "/v1/tools/run_program", "")
		return strings.Contains(string(b), "late_tool(message: str)")
	})
	if !ok {
		_, b := s.do("GET", "/v1/tools/run_program", "")
		t.Fatalf("run_program's description lacks late_tool 10 s after its file was written:\n%s", b)
	}
	if r, _ := runProgram(t, s, "result = late_tool(message='late')", 0); !r.OK || !strings.Contains(string(r.Output), "late") {
		t.Errorf("late_tool in a program: %+v", r)
	}
}

// TestJourneyProgramLoadSaysWhy: docs/programs.md says `load` is not
// allowed; a program that tries it (as a model used to Python's imports
// would) fails with an execution_error saying a program loads no modules
// and what it has instead, not Starlark's "load not implemented by this
// application".
func TestJourneyProgramLoadSaysWhy(t *testing.T) {
	u := newUser(t)
	r := u.wield("call", "--programs", "run_program", `code=load("math.star", "sqrt")`+"\nresult = 1")
	if r.code != 1 || !strings.Contains(r.stdout, `a program loads no modules; the tools are its functions already`) ||
		!strings.Contains(r.stdout, `"error_type": "execution_error"`) || strings.Contains(r.stdout, "not implemented") {
		t.Errorf("want exit 1 and an execution_error saying a program loads no modules:\n%s", r)
	}
}
