//go:build unix

package journeys

// Input, attacked through the binary: a REST body whose keys a lenient
// decoder reads two ways, a timeout that overflows, a command tool that
// runs the model's text as shell code or as an option, and a hard link
// that leads a file tool outside its folder. Each is what a prompt-injected
// model, or the client that relays it, would try.

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// inputResult is a call's result as REST and wield call print it.
type inputResult struct {
	OK        bool            `json:"ok"`
	ErrorType string          `json:"error_type"`
	Error     string          `json:"error"`
	Output    json.RawMessage `json:"output"`
}

// apiMessage reads the message of a REST error answer.
func apiMessage(t *testing.T, b []byte) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("not an API error: %s", b)
	}
	return e.Error.Code + ": " + e.Error.Message
}

// TestJourneyAttackEnvelope: a body with "ARGUMENTS" beside "arguments"
// ran the second; duplicate keys ran the last; a timeout_ms of 1e30 or past
// int64, or one that overflows a duration, became a timeout of 0. Each is
// now a 400 naming the key or field, over REST and over MCP, and nothing
// runs or is recorded; the plain body still works.
func TestJourneyAttackEnvelope(t *testing.T) {
	u := newUser(t)
	s := u.serve()
	refused := []struct{ body, says string }{
		{`{"ARGUMENTS":{"message":"smuggled"},"arguments":{"message":"shown"}}`, `unknown key "ARGUMENTS" (keys are case-sensitive: did you mean "arguments"?)`},
		{`{"arguments":{"message":"shown"},"arguments":{"message":"smuggled"}}`, `duplicate key "arguments"`},
		{`{"arguments":{"message":"shown","message":"smuggled"}}`, `duplicate key "message" in arguments`},
		{`{"arguments":{"message":"a"},"timeout_ms":1e30}`, `timeout_ms: 1e30 is not an integer`},
		{`{"arguments":{"message":"a"},"timeout_ms":99999999999999999999}`, `timeout_ms: 99999999999999999999 is not an integer`},
		{`{"arguments":{"message":"a"},"timeout_ms":9223372036854775}`, `timeout_ms: 9223372036854775 is not from 0`},
		{`{"arguments":{"message":"a"},"timeout_ms":-5}`, `timeout_ms: -5 is not from 0`},
	}
	for _, rq := range refused {
		code, b := s.do("POST", "/v1/tools/echo/call", rq.body)
		if msg := apiMessage(t, b); code != 400 || !strings.Contains(msg, "bad_request: the request body is not valid") && !strings.Contains(msg, "bad_request: timeout_ms") || !strings.Contains(msg, rq.says) {
			t.Errorf("POST %s: %d %q, want 400 saying %q", rq.body, code, msg, rq.says)
		}
	}
	code, b := s.do("POST", "/v1/batch", `{"calls":[{"tool":"echo","arguments":{"message":"a"},"Tool":"calculator"}]}`)
	if msg := apiMessage(t, b); code != 400 || !strings.Contains(msg, `unknown key "Tool" in calls/0`) {
		t.Errorf("a batch with Tool beside tool: %d %q", code, msg)
	}

	// The same over MCP: the duplicate arguments never reach the tool.
	code, b = s.do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"shown"},"arguments":{"message":"smuggled"}}}`,
		"Accept: application/json, text/event-stream")
	if code != 400 || !strings.Contains(string(b), `duplicate key \"arguments\" in params`) || !strings.Contains(string(b), "-32600") {
		t.Errorf("MCP with two arguments: %d %s, want 400 and an Invalid Request error naming the key", code, b)
	}

	code, b = s.do("GET", "/v1/calls", "")
	if code != 200 || strings.Contains(string(b), "smuggled") || strings.Contains(string(b), `"tool":"echo"`) {
		t.Errorf("refused bodies left records: %d %s", code, b)
	}
	code, b = s.do("POST", "/v1/tools/echo/call", `{"arguments":{"message":"plain"},"timeout_ms":5000}`)
	var res inputResult
	if code != 200 || json.Unmarshal(b, &res) != nil || !res.OK || !strings.Contains(string(res.Output), "plain") {
		t.Errorf("a plain call: %d %s", code, b)
	}
}

// TestJourneyAttackCommandTool: a command tool that puts the model's text
// in sh -c runs whatever the text says, and ["ls", "{path}"] takes "-la" as
// an option. wield validate now warns at the shell string's line and
// column (the text itself cannot be made safe there), the safe way of
// passing it runs nothing else, and a value that starts with "-" is refused
// with a message naming the parameter unless "--" comes before it.
func TestJourneyAttackCommandTool(t *testing.T) {
	u := newUser(t)
	u.write("tools/say.yaml", `name: say
description: Say something through the shell
parameters:
  - {name: msg, type: string}
entry:
  type: command
  command: ["sh", "-c", "echo {msg}"]
`)
	u.write("tools/say_safely.yaml", `name: say_safely
description: Say something through the shell, the value as an argument
parameters:
  - {name: msg, type: string}
entry:
  type: command
  command: ["sh", "-c", "echo \"$1\"", "sh", "{msg}"]
`)
	u.write("tools/list_dir.yaml", `name: list_dir
description: List a folder
parameters:
  - {name: path, type: string}
entry: {type: command, command: ["ls", "{path}"]}
`)
	u.write("tools/list_dir_dashes.yaml", `name: list_dir_dashes
description: List a folder, options ended
parameters:
  - {name: path, type: string}
entry: {type: command, command: ["ls", "--", "{path}"]}
`)
	u.write("-la", "a file whose name looks like an option\n")

	r := u.wield("validate", "tools")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "tools/say.yaml:7:25: warning: entry: command runs {msg} as code (sh -c)") {
		t.Errorf("validate: exit %d, want 0 and a warning at tools/say.yaml:7:25:\n%s", r.code, r)
	}
	if strings.Contains(r.stdout+r.stderr, "say_safely.yaml") || strings.Contains(r.stdout+r.stderr, "list_dir") {
		t.Errorf("validate warns about the safe tools:\n%s", r)
	}

	// The warning is warranted: the text runs.
	u.wield("--tools", "tools", "call", "say", "msg=hi; touch owned")
	if _, err := os.Stat(u.path("owned")); err != nil {
		t.Errorf("sh -c with the text inside did not run it (the warning would be moot): %v", err)
	}
	os.Remove(u.path("owned"))
	r = u.wield("--tools", "tools", "call", "say_safely", "msg=hi; touch owned")
	var res inputResult
	r.json(t, &res)
	if _, err := os.Stat(u.path("owned")); err == nil || !res.OK || !strings.Contains(string(res.Output), "hi; touch owned") {
		t.Errorf("the value as an argument: ok=%v %s, and the text ran: %v", res.OK, res.Output, err == nil)
	}

	r = u.wield("--tools", "tools", "call", "list_dir", "path=-la")
	res = inputResult{}
	r.json(t, &res)
	if r.code != 1 || res.ErrorType != "validation_error" || !strings.Contains(res.Error, `parameter "path": the value "-la" starts with "-", so ls would read it as an option`) {
		t.Errorf("ls {path} with -la: exit %d %s %q, want a validation_error naming path", r.code, res.ErrorType, res.Error)
	}
	r = u.wield("--tools", "tools", "call", "list_dir_dashes", "path=-la")
	res = inputResult{}
	r.json(t, &res)
	if r.code != 0 || !res.OK || !strings.Contains(string(res.Output), "-la") {
		t.Errorf("ls -- {path} with -la: exit %d %s %q %s, want the file listed", r.code, res.ErrorType, res.Error, res.Output)
	}
}

// TestJourneyAttackHardLink: a hard link in the allowed folder to a file
// outside gave read_file the outside file. read_file and write_file now
// refuse it, saying it has more than one link, and the file outside is
// unchanged; allow_hard_links: true in wield.yaml allows it.
func TestJourneyAttackHardLink(t *testing.T) {
	u := newUser(t)
	u.write("secret.txt", "outside secret\n")
	u.write("data/notes.txt", "my notes\n")
	u.write("wield.yaml", "allowed_paths: [./data]\n")
	if err := os.Link(u.path("secret.txt"), u.path("data/link.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	for _, args := range [][]string{
		{"call", "read_file", "path=link.txt"},
		{"call", "read_file", "path=link.txt", "encoding=base64"},
		{"call", "write_file", "path=link.txt", "content=overwritten"},
	} {
		r := u.wield(append([]string{"--config", "wield.yaml"}, args...)...)
		var res inputResult
		r.json(t, &res)
		if r.code != 1 || res.ErrorType != "permission_denied" || !strings.Contains(res.Error, "Access denied") || !strings.Contains(res.Error, "has more than one link") {
			t.Errorf("%v: exit %d %s %q, want permission_denied saying it has more than one link", args, r.code, res.ErrorType, res.Error)
		}
		if strings.Contains(r.stdout, "outside secret") || strings.Contains(r.stdout, "b3V0c2lkZSBzZWNyZXQ") {
			t.Errorf("%v: the outside file's content was printed", args)
		}
	}
	if b, _ := os.ReadFile(u.path("secret.txt")); string(b) != "outside secret\n" {
		t.Errorf("the file outside holds %q", b)
	}
	r := u.wield("--config", "wield.yaml", "call", "read_file", "path=notes.txt")
	if r.code != 0 || !strings.Contains(r.stdout, "my notes") {
		t.Errorf("a plain file: exit %d\n%s", r.code, r)
	}

	u.write("wield.yaml", "allowed_paths: [./data]\nallow_hard_links: true\n")
	r = u.wield("--config", "wield.yaml", "call", "read_file", "path=link.txt")
	if r.code != 0 || !strings.Contains(r.stdout, "outside secret") {
		t.Errorf("with allow_hard_links: exit %d\n%s", r.code, r)
	}
}
