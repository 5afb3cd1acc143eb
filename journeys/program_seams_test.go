//go:build unix

package journeys

// Programs and policies at the seams, through `wield serve` with wield.yaml's
// programs key: what the policies deny a key it does not find with
// search_tools nor see in a toolset or in run_program's description; a
// key scoped to a toolset sees run_program list that toolset's tools only,
// and a program it runs over /mcp/{toolset} cannot reach another tool
// (tool_not_found, recorded under the program); max_calls from the file
// holds; as many programs as max_concurrent at once all finish; `wield
// policy schema` prints the model and a policy outside it is refused with
// its file and line.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// seamTools are note and secret_note, and forty fillers so that the
// catalog is large enough for search_tools to be offered.
func seamTools() string {
	var b strings.Builder
	b.WriteString("tools:\n")
	b.WriteString("  - name: note\n    description: Write a note\n    parameters:\n      - {name: message, type: string}\n    entry: {type: builtin, handler: echo}\n")
	b.WriteString("  - name: secret_note\n    description: Write a secret note in the vault\n    parameters:\n      - {name: message, type: string}\n    entry: {type: builtin, handler: echo}\n")
	for i := range 40 {
		fmt.Fprintf(&b, "  - name: filler%d\n    description: Paint fence number %d\n    parameters:\n      - {name: message, type: string}\n    entry: {type: builtin, handler: echo}\n", i, i)
	}
	return b.String()
}

// seamCall posts a call of tool with args as key and returns its result.
func seamCall(t *testing.T, s *server, key, tool string, args any) (res struct {
	CallID    string          `json:"call_id"`
	OK        bool            `json:"ok"`
	Output    json.RawMessage `json:"output"`
	Error     string          `json:"error"`
	ErrorType string          `json:"error_type"`
}) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"arguments": args})
	code, b := s.do("POST", "/v1/tools/"+tool+"/call", string(body), bearer(key))
	if code != 200 || json.Unmarshal(b, &res) != nil {
		t.Fatalf("%s as key: %d %s", tool, code, b)
	}
	return res
}

func TestJourneyProgramSeams(t *testing.T) {
	u := newUser(t)
	u.write("tools/notes.yaml", seamTools())
	u.write("tools/tool_sets/ops.yaml", "name: ops\ndescription: programs over arithmetic\ntools:\n  - run_program\n  - calculator\n")
	u.write("tools/tool_sets/notes.yaml", "name: notes\ndescription: notes\ntools:\n  - note\n  - secret_note\n")
	alice, _ := makeKey(t, u, "--name", "alice", "--rights", "call,read")
	bob, bobID := makeKey(t, u, "--name", "bob", "--rights", "call,read")
	ops, _ := makeKey(t, u, "--name", "ops", "--toolset", "ops", "--rights", "call", "--tools", "tools")
	u.write("tools/policies.cedar", `@id("everyone")
permit(principal, action == Action::"call", resource);

@id("bob-no-secrets")
forbid(principal == Key::"`+bobID+`", action, resource == Tool::"secret_note");
`)
	// No --programs: the file offers run_program, with its own limits.
	u.write("wield.yaml", "programs: {enabled: true, max_calls: 5, timeout: 30s}\nconcurrency: {max: 2, queue_timeout: 5s}\n")
	s := u.serve("--config", "wield.yaml", "--tools", "tools")

	// run_program's description lists what each key's programs can call.
	describe := func(key string) string {
		code, b := s.do("GET", "/v1/tools/run_program", "", bearer(key))
		var info struct{ Description string }
		if code != 200 || json.Unmarshal(b, &info) != nil {
			t.Fatalf("GET /v1/tools/run_program: %d %s", code, b)
		}
		return info.Description
	}
	if d := describe(alice); !strings.Contains(d, "secret_note(message: str)") || !strings.Contains(d, "note(") {
		t.Errorf("alice's run_program description lacks secret_note or note:\n%s", d)
	}
	if d := describe(bob); strings.Contains(d, "secret_note") || !strings.Contains(d, "\nnote(") {
		t.Errorf("bob's run_program description names secret_note, which he may not call, or lacks note:\n%s", d)
	}
	if d := describe(ops); !strings.Contains(d, "calculator(") || strings.Contains(d, "note(") || strings.Contains(d, "echo(") {
		t.Errorf("the ops key's run_program description should list calculator alone:\n%s", d)
	}
	// ... and the same in the exports.
	if _, b := s.do("GET", "/v1/tools?format=openai", "", bearer(bob)); strings.Contains(string(b), "secret_note") {
		t.Error("bob's openai export names secret_note (a tool or a function of run_program)")
	}

	// search_tools finds for each key what it may call.
	found := func(key string) []string {
		res := seamCall(t, s, key, "search_tools", map[string]any{"query": "secret note vault", "limit": 5})
		var out struct{ Tools []struct{ Name string } }
		if !res.OK || json.Unmarshal(res.Output, &out) != nil {
			t.Fatalf("search_tools: %+v", res)
		}
		var names []string
		for _, tl := range out.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	if n := found(alice); !slices.Contains(n, "secret_note") {
		t.Errorf("alice's search_tools found %v, want secret_note among them", n)
	}
	if n := found(bob); slices.Contains(n, "secret_note") || !slices.Contains(n, "note") {
		t.Errorf("bob's search_tools found %v: secret_note is denied him, note is not", n)
	}
	// A toolset names to bob only what he may call.
	for key, want := range map[string]bool{alice: true, bob: false} {
		_, b := s.do("GET", "/v1/toolsets/notes", "", bearer(key))
		if strings.Contains(string(b), "secret_note") != want || !strings.Contains(string(b), `"note"`) {
			t.Errorf("GET /v1/toolsets/notes: %s (secret_note shown: want %v)", b, want)
		}
	}

	// wield.yaml's max_calls: 5 holds.
	if res := seamCall(t, s, alice, "run_program", map[string]string{"code": "for i in range(6):\n    note(message='n')\n"}); res.OK || !strings.Contains(res.Error, "more than 5 tool calls") {
		t.Errorf("a program of 6 calls under max_calls 5: %+v", res)
	}

	// Two programs at once under concurrency.max 2 both finish: each lends
	// its slot to its inner calls.
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i := range 2 {
		wg.Go(func() {
			res := seamCall(t, s, alice, "run_program", map[string]string{"code": "sleep(duration=0.3)\nsleep(duration=0.3)\nresult = 'done'\n"})
			results[i] = fmt.Sprintf("%v %s %s", res.OK, res.ErrorType, res.Error)
		})
	}
	wg.Wait()
	for i, r := range results {
		if r != "true  " {
			t.Errorf("program %d of 2 under max 2: %s", i, r)
		}
	}

	// The ops key over /mcp/ops: run_program lists calculator only, and a
	// program cannot reach a tool outside the key's toolset.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := connectMCP(ctx, s.url+"/mcp/ops", ops)
	if err != nil {
		t.Fatalf("the ops key on /mcp/ops: %v", err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "run_program" && (!strings.Contains(tl.Description, "calculator(") || strings.Contains(tl.Description, "note(")) {
			t.Errorf("run_program on /mcp/ops for the ops key:\n%s", tl.Description)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_program", Arguments: map[string]any{"code": "result = calculator(expression='6*7')"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "42") {
		t.Errorf("a program of calculator over /mcp/ops: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_program", Arguments: map[string]any{"code": "result = call('note', {'message': 'out of scope'})"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "tool_not_found") {
		t.Fatalf("a program calling note, outside the ops toolset, over /mcp/ops: %v %+v; want tool_not_found", err, res)
	}
	programID, _ := res.Meta["wield/call_id"].(string)
	if programID == "" {
		t.Fatalf("no call ID in the result's _meta: %+v", res.Meta)
	}
	var page struct {
		Records []struct {
			Call struct {
				Tool string `json:"tool"`
			} `json:"call"`
			Result struct {
				ErrorType string `json:"error_type"`
			} `json:"result"`
		} `json:"records"`
	}
	eventually(5*time.Second, func() bool {
		page.Records = nil
		u.must("calls", "--caller", programID, "--json").json(t, &page)
		return len(page.Records) >= 1
	})
	if len(page.Records) != 1 || page.Records[0].Call.Tool != "note" || page.Records[0].Result.ErrorType != "tool_not_found" {
		t.Errorf("records under the ops key's program: %+v; want one call of note, tool_not_found", page.Records)
	}

	// The flag wins over the file: --programs=off turns run_program off.
	if r := u.must("list", "--config", "wield.yaml", "--tools", "tools"); !strings.Contains(r.stdout, "run_program") {
		t.Errorf("wield list with programs.enabled lacks run_program:\n%s", r)
	}
	if r := u.must("list", "--config", "wield.yaml", "--programs=off"); strings.Contains(r.stdout, "run_program") {
		t.Errorf("wield list --programs=off still lists run_program:\n%s", r)
	}
	if r := u.wield("list", "--programs=later"); r.code != 2 || !strings.Contains(r.stderr, "--programs=off") {
		t.Errorf("wield list --programs=later: want a usage error naming the values:\n%s", r)
	}

	// The Cedar model: printed, and a policy outside it refused at its line.
	if r := u.must("policy", "schema"); !strings.Contains(r.stdout, "entity Tool in [Toolset]") || !strings.Contains(r.stdout, "action call appliesTo") {
		t.Errorf("wield policy schema:\n%s", r)
	}
	u.write("bad/p.cedar", "permit(principal, action, resource);\npermit(principal, action, resource) when { resource.readonly };\n")
	if r := u.wield("validate", "bad"); r.code == 0 || !strings.Contains(r.stderr+r.stdout, "p.cedar:2:") || !strings.Contains(r.stderr+r.stdout, "readonly") {
		t.Errorf("wield validate of a policy reading resource.readonly: exit %d\n%s", r.code, r)
	}
}
