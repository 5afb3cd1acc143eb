//go:build unix

package journeys

// What a client of MCP 2026-07-28 is asked beyond one question, through
// `wield serve` with a configuration and tool files on disk: several
// questions in one input_required round (a tool file's ask step: the
// user, the model and the roots), a tool whose steps need a capability the
// client did not declare refused with -32021 before it runs, a prompt that
// asks the user first, and a task whose tool asks while the task waits
// (input_required on tasks/get, answered by tasks/update).

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

const askManyConfig = `tool_dirs: [tools]
mcp:
  prompts:
    - name: focus
      description: A review with the user's focus
      elicit:
        - {as: focus, message: "What should the review focus on?", schema: {type: object, properties: {area: {type: string}}, required: [area]}}
      messages:
        - {role: user, text: "Review this change, focusing on {{.focus.content.area}}."}
`

const askManyTools = `- name: trio
  description: Asks the user, the model and the roots in one round
  entry:
    type: mcp_client
    steps:
      - ask:
          - elicit: {message: "Your name?", schema: {type: object, properties: {name: {type: string}}, required: [name]}, as: who}
          - sample: {prompt: "A greeting", max_tokens: 20, as: greeting}
          - roots: {as: dirs}
    text: "{{.greeting.text}}, {{.who.content.name}}: {{range .dirs.roots}}{{.uri}} {{end}}"
- name: where
  description: Needs the client's roots
  entry:
    type: mcp_client
    steps:
      - roots: {as: dirs}
    text: "{{len .dirs.roots}} roots"
- name: confirm_later
  description: A task that asks for a confirmation
  task: required
  entry:
    type: mcp_client
    steps:
      - elicit: {message: "Go on?", schema: {type: object, properties: {ok: {type: boolean}}, required: [ok]}, as: answer}
    text: "ok={{.answer.content.ok}}"
`

func TestJourneyMCP2026AskMany(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", askManyConfig)
	u.write("tools/ask.yaml", askManyTools)
	s := u.serve("--config", u.path("wield.yaml"))
	post := func(method, name, caps, params string) (int, map[string]any) {
		t.Helper()
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s,%s}}`, method, params, meta)
		code, b := s.do("POST", "/mcp", body, "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: "+method, "Mcp-Name: "+name)
		raw := b
		for line := range strings.Lines(string(b)) {
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				raw = []byte(d)
			}
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s answered %d %q: %v", method, code, b, err)
		}
		return code, m
	}
	result := func(m map[string]any) map[string]any { r, _ := m["result"].(map[string]any); return r }
	const all = `{"elicitation":{"form":{}},"sampling":{},"roots":{}}`

	// Three questions, one round.
	_, m := post("tools/call", "trio", all, `"name":"trio","arguments":{}`)
	irs, _ := result(m)["inputRequests"].(map[string]any)
	state, _ := result(m)["requestState"].(string)
	if result(m)["resultType"] != "input_required" || len(irs) != 3 || irs["who"] == nil || irs["greeting"] == nil || irs["dirs"] == nil || state == "" {
		t.Fatalf("trio: %v, want input_required asking who, greeting and dirs at once", m)
	}
	st, _ := json.Marshal(state)
	answers := `"inputResponses":{"who":{"action":"accept","content":{"name":"Ann"}},"greeting":{"role":"assistant","content":{"type":"text","text":"Hello"},"model":"m"},"dirs":{"roots":[{"uri":"file:///work"}]}},"requestState":` + string(st)
	_, m = post("tools/call", "trio", all, `"name":"trio","arguments":{},`+answers)
	if c, _ := result(m)["content"].([]any); len(c) != 1 || c[0].(map[string]any)["text"] != "Hello, Ann: file:///work " {
		t.Errorf("trio answered: %v, want %q", m, "Hello, Ann: file:///work ")
	}

	// A capability missing: refused before the tool runs.
	code, m := post("tools/call", "where", `{"elicitation":{}}`, `"name":"where","arguments":{}`)
	e, _ := m["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if req, _ := data["requiredCapabilities"].(map[string]any); code != 400 || e["code"] != float64(-32021) || req["roots"] == nil {
		t.Errorf("where without roots: %d %v, want 400 and -32021 requiring roots", code, m)
	}

	// A prompt that asks.
	_, m = post("prompts/get", "focus", all, `"name":"focus"`)
	if irs, _ := result(m)["inputRequests"].(map[string]any); result(m)["resultType"] != "input_required" || irs["focus"] == nil {
		t.Errorf("prompts/get: %v, want input_required asking focus", m)
	}
	_, m = post("prompts/get", "focus", all, `"name":"focus","inputResponses":{"focus":{"action":"accept","content":{"area":"errors"}}}`)
	if b, _ := json.Marshal(result(m)["messages"]); !strings.Contains(string(b), "focusing on errors.") {
		t.Errorf("prompts/get with the answer: %v, want the message filled", m)
	}

	// A task that asks.
	tasks := `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	_, m = post("tools/call", "confirm_later", tasks, `"name":"confirm_later","arguments":{}`)
	id, _ := result(m)["taskId"].(string)
	if id == "" {
		t.Fatalf("confirm_later: %v, want a task", m)
	}
	get := func() map[string]any {
		_, m := post("tasks/get", id, tasks, `"taskId":"`+id+`"`)
		return result(m)
	}
	task := get()
	for i := 0; i < 500 && task["status"] == "working"; i++ {
		time.Sleep(10 * time.Millisecond)
		task = get()
	}
	if irs, _ := task["inputRequests"].(map[string]any); task["status"] != "input_required" || irs["answer"] == nil {
		t.Fatalf("tasks/get: %v, want input_required asking answer", task)
	}
	if _, m = post("tasks/update", id, tasks, `"taskId":"`+id+`","inputResponses":{"answer":{"action":"accept","content":{"ok":true}}}`); result(m)["resultType"] != "complete" {
		t.Errorf("tasks/update: %v, want the empty ack", m)
	}
	for i := 0; i < 500 && task["status"] != "completed"; i++ {
		time.Sleep(10 * time.Millisecond)
		task = get()
	}
	if b, _ := json.Marshal(task["result"]); task["status"] != "completed" || !strings.Contains(string(b), "ok=true") {
		t.Errorf("the task: %v, want completed with ok=true", task)
	}

	if code, took := s.stop(syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("serve exited with %d after %v:\n%s", code, took, s.stderr)
	}
}
