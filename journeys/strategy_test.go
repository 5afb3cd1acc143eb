//go:build unix

package journeys

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// ollamaNoTools is an OpenAI-compatible server on loopback that answers
// as Ollama does for a model whose template has no tools: a request that
// carries tools gets 400 and Ollama's error body; one without them gets
// the next reply of the script (the last one again when it runs out).
type ollamaNoTools struct {
	srv      *httptest.Server
	mu       sync.Mutex
	refused  int
	answered []chatRequest
	script   []string
}

func newOllamaNoTools(t *testing.T, script ...string) *ollamaNoTools {
	t.Helper()
	o := &ollamaNoTools{script: script}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req chatRequest
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(b, &req) != nil {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		o.mu.Lock()
		defer o.mu.Unlock()
		if len(req.Tools) > 0 {
			o.refused++
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"registry.ollama.ai/library/`+req.Model+` does not support tools","type":"api_error","param":null,"code":null}}`)
			return
		}
		step := o.script[min(len(o.answered), len(o.script)-1)]
		o.answered = append(o.answered, req)
		_ = json.NewEncoder(w).Encode(completion(step))
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *ollamaNoTools) counts() (refused int, answered []chatRequest) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refused, append([]chatRequest(nil), o.answered...)
}

// prompt is the text of every message of a request, one after the other.
func (r chatRequest) prompt() string {
	var b strings.Builder
	for i := range r.Messages {
		b.WriteString(r.text(i))
		b.WriteString("\n")
	}
	return b.String()
}

// TestJourneyStrategyFallback: `wield chat` against a server that refuses
// native tools with Ollama's 400 "… does not support tools". The default
// output strategy allows the fallback: the turn is asked again with the
// tools in the prompt (the XML call format), the model's text call runs
// and is recorded, stderr says so once, and the next line goes to the
// prompt at once. An agent whose output_strategy forbids the fallback
// gets exit 1 and what to change; --prompt-format json asks for JSON calls;
// an unknown format is a usage error.
func TestJourneyStrategyFallback(t *testing.T) {
	u := newUser(t)
	model := newOllamaNoTools(t,
		"<tool_call>\n  <name>echo</name>\n  <params>\n    <message><![CDATA[a<b && c>d]]></message>\n  </params>\n</tool_call>",
		"It said a<b && c>d.",
		"Nothing to call this time.",
	)
	r := u.wieldIn("echo a<b && c>d\nand now?\n", "chat", "--model", model.srv.URL+"/v1/gemma3:4b", "--conversation", "fb1")
	if r.code != 0 || r.stdout != "It said a<b && c>d.\nNothing to call this time.\n" {
		t.Fatalf("want exit 0 and both answers:\n%s", r)
	}
	if n := strings.Count(r.stderr, "refused native tools"); n != 1 || !strings.Contains(r.stderr, "registry.ollama.ai/library/gemma3:4b does not support tools") ||
		!strings.Contains(r.stderr, "described in the prompt (the XML call format) from now on") {
		t.Errorf("stderr says the fallback %d times, want once with the server's words:\n%s", n, r.stderr)
	}
	if !strings.Contains(r.stderr, "→ echo") || !strings.Contains(r.stderr, "← echo ok") {
		t.Errorf("stderr does not show the call:\n%s", r.stderr)
	}
	if r.took > 20*time.Second {
		t.Errorf("chat took %v", r.took)
	}
	refused, answered := model.counts()
	if refused != 1 || len(answered) != 3 {
		t.Fatalf("the server refused %d requests and answered %d; want 1 refused (remembered after it), 3 answered", refused, len(answered))
	}
	if p := answered[0].prompt(); !strings.Contains(p, "### echo") || !strings.Contains(p, "<message><![CDATA[") {
		t.Errorf("the retried turn does not describe the tools in the XML call format:\n%s", p)
	}
	if p := answered[1].prompt(); !strings.Contains(p, "<tool_result>") || !strings.Contains(p, "a<b && c>d") {
		t.Errorf("the result the model reads is not the XML tool_result with the text as it is:\n%s", p)
	}
	rec := u.must("calls", "--conversation", "fb1", "--json")
	var page struct {
		Records []struct {
			Result struct {
				Tool string `json:"tool"`
				OK   bool   `json:"ok"`
			} `json:"result"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(rec.stdout), &page); err != nil || len(page.Records) != 1 || page.Records[0].Result.Tool != "echo" || !page.Records[0].Result.OK {
		t.Errorf("the records of fb1 are not the one echo call (%v):\n%s", err, rec.stdout)
	}

	// An agent that forbids the fallback: the refusal stops the line, and
	// the error says what to change.
	u.write("strict.yaml", "kind: agent\nname: strict\ntools: [echo]\noutput_strategy:\n  function_calling: true\n  fallback_to_structured_output: false\n")
	strict := newOllamaNoTools(t, "never asked")
	r = u.wieldIn("echo hi\n", "chat", "--model", strict.srv.URL+"/v1/gemma3:4b", "--agent", "strict.yaml")
	if r.code != 1 || !strings.Contains(r.stderr, "does not support tools") || !strings.Contains(r.stderr, "set fallback_to_structured_output: true in the agent's output_strategy") {
		t.Errorf("want exit 1 and what to change:\n%s", r)
	}
	if refused, answered := strict.counts(); refused != 1 || len(answered) != 0 {
		t.Errorf("strict agent: %d refused, %d answered; want 1 and 0", refused, len(answered))
	}

	// --prompt-format json: the tools as JSON Schema, a JSON call, the
	// result as the JSON fallback's tool message.
	js := newOllamaNoTools(t, `{"name": "echo", "parameters": {"message": "x<y"}}`, "done")
	r = u.wieldIn("echo x<y\n", "chat", "--model", js.srv.URL+"/v1/gemma3:4b", "--prompt-format", "json", "--conversation", "fb2")
	if r.code != 0 || r.stdout != "done\n" || !strings.Contains(r.stderr, "described in the prompt (JSON) from now on") {
		t.Fatalf("--prompt-format json: want exit 0 and the answer:\n%s", r)
	}
	_, answered = js.counts()
	if len(answered) != 2 || !strings.Contains(answered[0].prompt(), "Parameters (JSON Schema):") || !strings.Contains(answered[1].prompt(), `{"tool_name":"echo","output":{"message":"x<y"}}`) {
		t.Errorf("--prompt-format json: the prompt or the result is not in the JSON format: %d requests", len(answered))
	}

	r = u.wieldIn("hi\n", "chat", "--model", js.srv.URL+"/v1/gemma3:4b", "--prompt-format", "yaml")
	if r.code != 2 || !strings.Contains(r.stderr, `--prompt-format: prompt format "yaml" is not one of xml, json`) {
		t.Errorf("an unknown prompt format: want exit 2 and why:\n%s", r)
	}
}

// TestJourneyChatSearchRecorded: `wield chat` with a catalog too large to
// list (more than 40 tools) offers the model search_tools alone; the
// model's search and the call it then makes both go through the engine and
// are recorded under the conversation, the search as any other call.
func TestJourneyChatSearchRecorded(t *testing.T) {
	u := newUser(t)
	var b strings.Builder
	b.WriteString("kind: tools\ntools:\n")
	for i := range 45 {
		fmt.Fprintf(&b, "  - name: crm_record_%02d\n    description: Update customer record field number %d in the CRM.\n    parameters: [{name: message, type: string}]\n    entry: {type: builtin, handler: echo}\n", i, i)
	}
	u.write("tools/crm.yaml", b.String())
	model, _ := newFakeModel(t, "",
		reply(completion("", [2]string{"search_tools", `{"query":"evaluate an arithmetic expression"}`})),
		reply(completion("", [2]string{"calculator", `{"expression":"6*7"}`})),
		reply(completion("42")),
	)
	r := u.wieldIn("what is 6*7?\n", "chat", "--tools", "tools", "--model", model.srv.URL+"/v1/gpt-test", "--conversation", "s1")
	if r.code != 0 || r.stdout != "42\n" || !strings.Contains(r.stderr, "→ search_tools") {
		t.Fatalf("want exit 0, the answer and the search shown:\n%s", r)
	}
	reqs := model.requests()
	if len(reqs) != 3 || len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Function.Name != "search_tools" {
		t.Fatalf("the first turn offered %d tools, want search_tools alone (%d requests)", len(reqs[0].Tools), len(reqs))
	}
	offered := map[string]bool{}
	for _, tl := range reqs[1].Tools {
		offered[tl.Function.Name] = true
	}
	if !offered["calculator"] || !offered["search_tools"] {
		t.Errorf("the second turn offered %v, want search_tools and what it found", offered)
	}
	rec := u.must("calls", "--conversation", "s1", "--json")
	var page struct {
		Records []struct {
			Call struct {
				Tool   string `json:"tool"`
				Caller struct {
					ID string `json:"id"`
				} `json:"caller"`
			} `json:"call"`
			Result struct {
				OK bool `json:"ok"`
			} `json:"result"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(rec.stdout), &page); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range page.Records {
		got[r.Call.Tool] = r.Result.OK && r.Call.Caller.ID == "chat"
	}
	if len(page.Records) != 2 || !got["search_tools"] || !got["calculator"] {
		t.Errorf("the records of s1 are %v, want search_tools and calculator, both ok, by the chat agent:\n%s", got, rec.stdout)
	}
}
