//go:build unix

package journeys

import (
	"strings"
	"testing"
)

// TestJourneyXMLPromptChat: a model without function calling (a plain-text
// chat endpoint) is given the tools in the prompt in the XML call format,
// writes a call in that format with a CDATA value holding markup, and
// wield runs it through the engine (recorded), hands the result back as
// text the model can read (literal < > &), and prints the model's answer.
func TestJourneyXMLPromptChat(t *testing.T) {
	xmlCall := "I will echo it.\n<tool_call>\n  <name>echo</name>\n  <params>\n    <message><![CDATA[if a < b && c > d { return \"<ok>\" }]]></message>\n  </params>\n</tool_call>\n"
	model, _ := newFakeModel(t, "",
		reply(completion(xmlCall)),
		reply(completion("The tool said what I sent.")),
	)
	u := newUser(t)
	r := u.wieldIn("Please echo some code\n", "chat", "--model", model.srv.URL+"/v1/plain-model", "--no-function-calling", "--conversation", "xml1")
	if r.code != 0 || !strings.Contains(r.stdout, "The tool said what I sent.") {
		t.Fatalf("want exit 0 and the model's answer:\n%s", r)
	}
	reqs := model.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2 (the call, then the answer)", len(reqs))
	}
	if len(reqs[0].Tools) != 0 {
		t.Errorf("a model without function calling was sent %d native tools", len(reqs[0].Tools))
	}
	prompt := ""
	for i := range reqs[0].Messages {
		prompt += reqs[0].text(i) + "\n"
	}
	// The tool prompt generator's format: a heading per tool, its
	// description, its parameters, and an example call with CDATA values.
	for _, part := range []string{"### echo", "Description:", "Parameters:", "  - message: string (required)", "Example:", "<tool_call>", "<name>echo</name>", "<message><![CDATA["} {
		if !strings.Contains(prompt, part) {
			t.Errorf("the prompt lacks %q", part)
		}
	}
	back := ""
	for i := range reqs[1].Messages {
		back += reqs[1].text(i) + "\n"
	}
	if !strings.Contains(back, `if a < b && c > d { return \"<ok>\" }`) && !strings.Contains(back, `if a < b && c > d { return "<ok>" }`) {
		t.Errorf("the result the model reads does not keep the text as sent (< > & literal):\n%s", back)
	}
	rec := u.must("calls", "--conversation", "xml1", "--json")
	if !strings.Contains(rec.stdout, `"tool": "echo"`) && !strings.Contains(rec.stdout, `"tool":"echo"`) {
		t.Errorf("the call is not recorded under its conversation:\n%s", rec)
	}
}
