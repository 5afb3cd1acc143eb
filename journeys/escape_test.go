//go:build unix

package journeys

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The text a tool returns reaches a model and a person as it is: code with
// <, > and & is never written as \u003c, \u003e and \u0026, whatever path
// it takes (the CLI, the record, REST, MCP, a model's tool message).

// escCode is the text every journey here sends and looks for, byte for byte.
const escCode = "if a < b && c > d"

// TestJourneyEscapeCLI: `wield call echo message='a<b && c>d'` prints the
// message as it was given, and so does the record shown by `wield calls`.
func TestJourneyEscapeCLI(t *testing.T) {
	u := newUser(t)
	r := u.must("call", "echo", "message=a<b && c>d", "--conversation", "esc")
	if !strings.Contains(r.stdout, `"message": "a<b && c>d"`) || strings.Contains(r.stdout, `\u00`) {
		t.Errorf("wield call printed the message escaped, want a<b && c>d as it is:\n%s", r.stdout)
	}
	rec := u.must("calls", "--conversation", "esc", "--json")
	if !strings.Contains(rec.stdout, `"message": "a<b && c>d"`) || strings.Contains(rec.stdout, `\u00`) {
		t.Errorf("wield calls --json shows the record escaped:\n%s", rec.stdout)
	}
	// A tool folder's description and parameters list as written.
	u.write("tools/compare.json", `{"name": "compare", "description": "Say whether a<b && c>d", "category": "custom",
  "parameters": [{"name": "message", "type": "string", "description": "the <left> side & more"}],
  "entry": {"type": "builtin", "handler": "echo"}}`)
	l := u.must("list", "--json", "--tools", u.path("tools"))
	if !strings.Contains(l.stdout, "Say whether a<b && c>d") || !strings.Contains(l.stdout, "the <left> side & more") || strings.Contains(l.stdout, `\u00`) {
		t.Errorf("wield list --json escaped the tool's text:\n%s", l.stdout)
	}
}

// TestJourneyEscapeServe: over `wield serve`, the REST answer of a call,
// the record of it, and an MCP tools/call result over /mcp carry the text
// as it is, on the wire.
func TestJourneyEscapeServe(t *testing.T) {
	u := newUser(t)
	s := u.serve()
	msg, _ := json.Marshal(map[string]any{"arguments": map[string]string{"message": escCode}, "id": "esc-rest"})
	code, b := s.do("POST", "/v1/tools/echo/call", string(msg))
	if code != 200 || !strings.Contains(string(b), `{"message":"`+escCode+`"}`) || strings.Contains(string(b), `\u00`) {
		t.Errorf("REST call: %d %s, want the message as it is", code, b)
	}
	if !eventually(10*time.Second, func() bool {
		code, b = s.do("GET", "/v1/calls/esc-rest", "")
		return code == 200
	}) || !strings.Contains(string(b), escCode) || strings.Contains(string(b), `\u00`) {
		t.Errorf("the record over REST: %d %s, want the message as it is", code, b)
	}

	c := &http.Client{Timeout: commandLimit}
	post := func(session, body string) (string, []byte) {
		t.Helper()
		req, _ := http.NewRequest("POST", s.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("POST /mcp: %v", err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), raw
	}
	session, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"journey","version":"1"}}}`)
	if session == "" {
		t.Fatal("MCP initialize gave no session")
	}
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, raw := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+escCode+`"}}}`)
	if i := bytes.IndexByte(raw, '{'); i > 0 {
		raw = raw[i:] // an event's data
	}
	var res struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent map[string]string `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&res); err != nil || len(res.Result.Content) == 0 {
		t.Fatalf("MCP tools/call: %v: %s", err, raw)
	}
	if got, want := res.Result.Content[0].Text, `{"message":"`+escCode+`"}`; got != want {
		t.Errorf("MCP text content %q, want %q", got, want)
	}
	if got := res.Result.StructuredContent["message"]; got != escCode {
		t.Errorf("MCP structuredContent message %q, want %q", got, escCode)
	}
	if !bytes.Contains(raw, []byte(escCode)) {
		t.Errorf("MCP tools/call on the wire: %s, want %q as it is", raw, escCode)
	}
}

// TestJourneyEscapeChat: a model that calls echo natively gets the tool
// message with the text as it is; one without function calling gets it in
// the XML tool_result's CDATA as it is.
func TestJourneyEscapeChat(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"message": escCode})
	model, _ := newFakeModel(t, "",
		reply(completion("", [2]string{"echo", string(args)})),
		reply(completion("Echoed.")),
	)
	u := newUser(t)
	r := u.wieldIn("Echo some code\n", "chat", "--model", model.srv.URL+"/v1/journey", "--conversation", "esc-chat")
	if r.code != 0 || !strings.Contains(r.stdout, "Echoed.") {
		t.Fatalf("want exit 0 and the model's answer:\n%s", r)
	}
	reqs := model.requests()
	if len(reqs) < 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
	found := false
	for i, m := range reqs[1].Messages {
		if m.Role == "tool" {
			found = true
			if got, want := reqs[1].text(i), `{"message":"`+escCode+`"}`; got != want {
				t.Errorf("the tool message reads %q, want %q", got, want)
			}
		}
	}
	if !found {
		t.Errorf("no tool message in the second request")
	}

	xmlCall := "<tool_call>\n  <name>echo</name>\n  <params>\n    <message><![CDATA[" + escCode + "]]></message>\n  </params>\n</tool_call>\n"
	plain, _ := newFakeModel(t, "", reply(completion(xmlCall)), reply(completion("Echoed.")))
	r = u.wieldIn("Echo some code\n", "chat", "--model", plain.srv.URL+"/v1/plain", "--no-function-calling", "--conversation", "esc-xml")
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	reqs = plain.requests()
	if len(reqs) < 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
	back := ""
	for i := range reqs[1].Messages {
		back += reqs[1].text(i) + "\n"
	}
	if want := `<data><![CDATA[{"message":"` + escCode + `"}]]></data>`; !strings.Contains(back, want) {
		t.Errorf("the XML tool_result lacks %s:\n%s", want, back)
	}
}
