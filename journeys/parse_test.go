//go:build unix

package journeys

// Journeys of `wield parse`: a model's reply on stdin, the calls in it on
// stdout, what could not be read on stderr with exit 1.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parsed is one call as `wield parse` prints it, arguments decoded so they
// compare as JSON values.
type parsed struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// parseCalls runs `wield parse args…` on reply and decodes what it printed.
func (u *user) parseCalls(reply string, args ...string) ([]parsed, *run) {
	u.t.Helper()
	r := u.wieldIn(reply, append([]string{"parse"}, args...)...)
	var calls []parsed
	r.json(u.t, &calls)
	return calls, r
}

// wantCalls decodes the expected calls from JSON text.
func wantCalls(t *testing.T, text string) []parsed {
	t.Helper()
	var out []parsed
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("bad expected calls %s: %v", text, err)
	}
	return out
}

// A tool without parameters is called with a name and no arguments: the
// call is there, with {}, in every shape a model writes it.
func TestJourneyParseCallWithoutArguments(t *testing.T) {
	u := newUser(t)
	calls, r := u.parseCalls(`<tool_call>{"name":"current_time"}</tool_call>` + "\n")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and nothing on stderr:\n%s", r)
	}
	if diff := cmp.Diff(wantCalls(t, `[{"name":"current_time","arguments":{}}]`), calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s\n%s", diff, r)
	}
	var compact []json.RawMessage
	r.json(t, &compact)
	if len(compact) != 1 || strings.Join(strings.Fields(string(compact[0])), "") != `{"name":"current_time","arguments":{}}` {
		t.Errorf("printed %s, want [{\"name\":\"current_time\",\"arguments\":{}}]", r.stdout)
	}

	for _, reply := range []string{
		`<tool_call>{"name": "current_time", "arguments": null}</tool_call>`,
		`<tool_call>{"name": "current_time", "arguments": ""}</tool_call>`,
		`<tool_call>{"name": "current_time", "arguments": "null"}</tool_call>`,
		"<|python_tag|>{\"name\": \"current_time\"}<|eom_id|>",
		`[TOOL_CALLS][{"name": "current_time"}]`,
		"好的：\n```json\n{\"name\": \"current_time\"}\n```\n",
		`{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"current_time","arguments":"null"}}]}}]}`,
	} {
		calls, r := u.parseCalls(reply)
		if r.code != 0 {
			t.Errorf("want exit 0:\n%s", r)
			continue
		}
		if diff := cmp.Diff(wantCalls(t, `[{"name":"current_time","arguments":{}}]`), calls); diff != "" {
			t.Errorf("%q: calls (-want +got):\n%s", reply, diff)
		}
	}

	// With the tools known, a bare name is a call only of a known tool.
	calls, r = u.parseCalls("```json\n{\"name\": \"current_time\"}\n```\nand {\"name\": \"Alice\"}", "--tools", u.path("."))
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	if diff := cmp.Diff(wantCalls(t, `[{"name":"current_time","arguments":{}}]`), calls); diff != "" {
		t.Errorf("with --tools: calls (-want +got):\n%s\n%s", diff, r)
	}
}

// The XML call format's own example, byte for byte, reads as web_search
// with its query and 10 results, whichever way it is asked for.
func TestJourneyParseXMLFormatExample(t *testing.T) {
	u := newUser(t)
	example, err := os.ReadFile(filepath.Join("testdata", "seeds", "000", "tool_call.xml"))
	if err != nil {
		t.Fatal(err)
	}
	want := wantCalls(t, `[{"name":"web_search","arguments":{"query":"Python async best practices","max_results":10}}]`)
	u.copy("seeds/004/http_request.yaml", "tools/http_request.yaml")
	for _, args := range [][]string{nil, {"--format", "xml"}, {"--format", "xml", "--tools", "tools"}} {
		calls, r := u.parseCalls("I'll search for that.\n\n"+string(example), args...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("want exit 0 and nothing on stderr:\n%s", r)
			continue
		}
		if diff := cmp.Diff(want, calls); diff != "" {
			t.Errorf("parse %v: calls (-want +got):\n%s", args, diff)
		}
	}
}

// A coding agent writes an SVG whose <style> holds CDATA, inside the CDATA
// of the XML call format: the file comes back whole, and so does the
// parameter after it.
func TestJourneyParseNestedCDATA(t *testing.T) {
	u := newUser(t)
	svg := "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">\n  <style><![CDATA[\n    .a { fill: red; }\n  ]]></style>\n  <rect class=\"a\" width=\"16\" height=\"16\"/>\n</svg>\n"
	reply := "Writing the icon.\n<tool_call>\n  <name>write_file</name>\n  <params>\n    <content><![CDATA[" + svg + "]]></content>\n    <path><![CDATA[static/icon.svg]]></path>\n  </params>\n</tool_call>\n"
	for _, args := range [][]string{nil, {"--format", "xml"}} {
		calls, r := u.parseCalls(reply, args...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("want exit 0 and nothing on stderr:\n%s", r)
		}
		want := []parsed{{Name: "write_file", Arguments: map[string]any{"content": svg, "path": "static/icon.svg"}}}
		if diff := cmp.Diff(want, calls); diff != "" {
			t.Errorf("parse %v: calls (-want +got):\n%s", args, diff)
		}
	}
}

// A reasoning model drafts a destructive call in its thinking, then makes
// the real one: only the real one is printed.
func TestJourneyParseCallsInReasoning(t *testing.T) {
	u := newUser(t)
	for _, tc := range []struct {
		name, reply string
		args        []string
	}{
		{
			name:  "think block, hermes",
			reply: "<think>\nI could run <tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call> but no.\n</think>\n\n<tool_call>{\"name\":\"list_files\",\"arguments\":{\"path\":\".\"}}</tool_call>\n",
		},
		{
			name:  "think block, the XML call format",
			reply: "<think>Maybe <tool_call><name>delete_file</name><params><path><![CDATA[/]]></path></params></tool_call>? No.</think>\n<tool_call><name>list_files</name><params><path><![CDATA[.]]></path></params></tool_call>\n",
			args:  []string{"--format", "xml"},
		},
		{
			name:  "only the closing tag, the opening one was in the prompt",
			reply: "The user wants a listing. <tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call> would be wrong.\n</think>\n<tool_call>{\"name\":\"list_files\",\"arguments\":{\"path\":\".\"}}</tool_call>\n",
		},
		{
			name:  "gpt-oss analysis channel",
			reply: "<|channel|>analysis<|message|><tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call><|end|><|start|>assistant<|channel|>final<|message|><tool_call>{\"name\":\"list_files\",\"arguments\":{\"path\":\".\"}}</tool_call>",
		},
	} {
		calls, r := u.parseCalls(tc.reply, tc.args...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("%s: want exit 0 and nothing on stderr:\n%s", tc.name, r)
			continue
		}
		if diff := cmp.Diff(wantCalls(t, `[{"name":"list_files","arguments":{"path":"."}}]`), calls); diff != "" {
			t.Errorf("%s: calls (-want +got):\n%s", tc.name, diff)
		}
	}

	// Thinking that never ends: its call is not printed, and stderr says why.
	calls, r := u.parseCalls("<think>First <tool_call>{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/\"}}</tool_call> then")
	if r.code != 1 || len(calls) != 0 || !strings.Contains(r.stderr, "call 1 (delete_file) is inside <think>, reasoning that is never closed") {
		t.Errorf("want no call, exit 1 and the reason on stderr:\n%s", r)
	}
}

// A value whose end cannot be told is never printed as "": the call is
// left out, stderr names the parameter and why, and the exit code is 1.
func TestJourneyParseUnrecoverableValue(t *testing.T) {
	u := newUser(t)
	for _, tc := range []struct{ reply, stderr string }{
		{
			reply:  "<tool_call><name>write_file</name><params><path>index.html</path><content><div>hi</div>\n<p>there</p></params></tool_call>\n",
			stderr: `call 1 (write_file) has parameter "content" with markup but no closing tag </content>, so its value cannot be recovered`,
		},
		{
			reply:  "<tool_call><name>write_file</name><params><content><![CDATA[<svg>unfinished</params></tool_call>\n",
			stderr: `call 1 (write_file) has parameter "content" with a CDATA section that is never closed (no ]]>) and no closing tag </content>, so its value cannot be recovered`,
		},
	} {
		calls, r := u.parseCalls(tc.reply, "--format", "xml")
		if r.code != 1 {
			t.Errorf("want exit 1:\n%s", r)
		}
		if len(calls) != 0 || strings.Contains(r.stdout, `""`) {
			t.Errorf("want no call and no empty value printed:\n%s", r)
		}
		if !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("stderr does not say %q:\n%s", tc.stderr, r)
		}
	}
}
