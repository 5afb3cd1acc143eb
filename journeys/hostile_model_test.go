//go:build unix

package journeys

// Journeys of a hostile model: one prompt-injected (or a server speaking
// for one) that answers `wield chat` in its provider's documented wire
// format with what wield must not obey, show whole, or pass on ambiguous.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestJourneyHostileModelShown: a model that calls a tool whose name is an
// escape sequence, 10 KB and a bidi override, with 2 MB of arguments, then
// answers with escape sequences (clear the screen, write the clipboard),
// gets its call shown once on stderr, escaped and clipped, and its answer
// printed with the escapes visible: nothing of it is obeyed by the
// terminal, and a terminal is not filled with its arguments.
func TestJourneyHostileModelShown(t *testing.T) {
	u := newUser(t)
	name := "\x1b]0;pwned\x07" + strings.Repeat("n", 10<<10) + "\u202etxt.exe"
	args := `{"message":"` + strings.Repeat("a", 2<<20) + `"}`
	model, _ := newFakeModel(t, "",
		reply(completion("", [2]string{name, args})),
		reply(completion("\x1b[2J\x1b]52;c;SGVsbG8=\x07Done\u202e.")))
	r := u.wieldIn("hi\n", "chat", "--conversation", "hostile1", "--model", model.srv.URL+"/v1/m")
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%.3000s", r)
	}
	if strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07\u202e") {
		t.Errorf("the terminal got a control character or a bidi override:\nstdout %.300q\nstderr %.300q", r.stdout, r.stderr)
	}
	if r.stdout != `\x1b[2J\x1b]52;c;SGVsbG8=\x07Done\u202e.`+"\n" {
		t.Errorf("stdout %q, want the answer with its escapes shown", r.stdout)
	}
	if len(r.stderr) > 8<<10 || strings.Count(r.stderr, "→ ") != 1 || strings.Count(r.stderr, "← ") != 1 || !strings.Contains(r.stderr, `→ \x1b]0;pwned\x07nnn`) {
		t.Errorf("stderr is %d bytes; want the call shown once, escaped, in at most 8 KiB:\n%.3000s", len(r.stderr), r.stderr)
	}
}

// TestJourneyHostileModelGeminiThought: a Gemini answer whose thought part
// (the model's reasoning, "thought": true) holds a functionCall runs
// nothing, in `wield chat` as in `wield parse --format gemini`: the
// answer is the text part's, after one request.
func TestJourneyHostileModelGeminiThought(t *testing.T) {
	u := newUser(t)
	for _, kv := range []string{"GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"} {
		u.setenv(kv, "")
	}
	answer := map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{
		map[string]any{"thought": true, "functionCall": map[string]any{"name": "echo", "args": map[string]any{"message": "from a thought"}}, "thoughtSignature": geminiSignature},
		map[string]any{"text": "Done."}}}, "finishReason": "STOP", "index": 0}}}
	model, _ := newFakeProvider(t, wireGemini, "k", "", reply(answer))
	u.setenv("GEMINI_API_KEY", "k")
	u.setenv("GOOGLE_GEMINI_BASE_URL", model.srv.URL)
	r := u.wieldIn("hi\n", "chat", "--provider", "gemini", "--model", "gemini-journey", "--conversation", "thought1")
	if r.code != 0 || r.stdout != "Done.\n" || strings.Contains(r.stderr, "→ echo") || len(model.bodies(t)) != 1 {
		t.Errorf("want the answer after one request and no call:\n%s", r)
	}
	if rec := u.must("calls", "--conversation", "thought1", "--json"); strings.Contains(rec.stdout, "from a thought") {
		t.Errorf("a call from a thought part was recorded:\n%s", rec.stdout)
	}
	body, _ := json.Marshal(answer)
	calls, p := u.parseCalls(string(body), "--format", "gemini")
	if p.code != 0 || len(calls) != 0 {
		t.Errorf("wield parse --format gemini read %v from a thought part:\n%s", calls, p)
	}
}

// TestJourneyHostileModelDuplicateIDs: an Anthropic answer whose two
// tool_use blocks share one id (and would share it with the next turn's)
// still has each call's tool_result answer one tool_use: the ids sent back
// are unique, as the Messages API requires, and each is answered once.
func TestJourneyHostileModelDuplicateIDs(t *testing.T) {
	u := newUser(t)
	for _, kv := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"} {
		u.setenv(kv, "")
	}
	use := func(msg string) any {
		return map[string]any{"type": "tool_use", "id": "toolu_same", "name": "echo", "input": map[string]any{"message": msg}}
	}
	calls := map[string]any{"id": "msg_dup", "type": "message", "role": "assistant", "model": "claude-journey",
		"content": []any{use("one"), use("two")}, "stop_reason": "tool_use", "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}
	model, _ := newFakeProvider(t, wireAnthropic, "k", "", reply(calls), reply(calls), reply(anthropicMessage("Done.")))
	u.setenv("ANTHROPIC_API_KEY", "k")
	r := u.wieldIn("hi\n", "chat", "--model", model.srv.URL+"/v1/claude-journey")
	bodies := model.bodies(t)
	if r.code != 0 || r.stdout != "Done.\n" || len(bodies) != 3 {
		t.Fatalf("want the answer after three requests:\n%s", r)
	}
	uses, results := map[string]int{}, map[string]string{}
	for _, m := range bodies[2]["messages"].([]any) {
		blocks, _ := m.(map[string]any)["content"].([]any)
		for _, b := range blocks {
			bm := b.(map[string]any)
			switch bm["type"] {
			case "tool_use":
				uses[bm["id"].(string)]++
			case "tool_result":
				text, _ := json.Marshal(bm["content"])
				results[bm["tool_use_id"].(string)] += string(text)
			}
		}
	}
	if len(uses) != 4 || len(results) != 4 {
		t.Errorf("tool_use ids %v, tool_result ids %v; want four of each, unique", uses, results)
	}
	for id, n := range uses {
		if n != 1 || strings.Count(results[id], `"type"`) != 1 {
			t.Errorf("tool_use %s: sent %d times, answered by %s", id, n, results[id])
		}
	}
}

// TestJourneyHostileModelManyCalls: a reply asking for 300 calls at once
// (a prompt-injected model) has only --max-calls-per-reply of them run
// (5 here; 64 by default): the others are answered "not run", each call
// still gets its tool_result as the Messages API requires, stderr says
// how many were not run, and only those that ran are recorded.
func TestJourneyHostileModelManyCalls(t *testing.T) {
	u := newUser(t)
	for _, kv := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"} {
		u.setenv(kv, "")
	}
	const n, max = 300, 5
	calls := make([][2]string, n)
	for i := range calls {
		calls[i] = [2]string{"echo", fmt.Sprintf(`{"message":"m%d"}`, i)}
	}
	model, _ := newFakeProvider(t, wireAnthropic, "k", "", reply(anthropicMessage("", calls...)), reply(anthropicMessage("Done.")))
	u.setenv("ANTHROPIC_API_KEY", "k")
	r := u.wieldIn("hi\n", "chat", "--model", model.srv.URL+"/v1/claude-journey", "--conversation", "many1", "--max-calls-per-reply", fmt.Sprint(max))
	bodies := model.bodies(t)
	if r.code != 0 || r.stdout != "Done.\n" || len(bodies) != 2 {
		t.Fatalf("want the answer after two requests:\n%.3000s", r)
	}
	if !strings.Contains(r.stderr, "wield: line 1: 295 calls were not run, past the 5 one reply may ask for (--max-calls-per-reply)") {
		t.Errorf("stderr does not say how many calls were not run:\n%.3000s", r.stderr)
	}
	if got := strings.Count(r.stderr, "→ echo"); got != max {
		t.Errorf("stderr shows %d calls starting, want the %d that ran", got, max)
	}
	results, notRun := 0, 0
	for _, m := range bodies[1]["messages"].([]any) {
		blocks, _ := m.(map[string]any)["content"].([]any)
		for _, b := range blocks {
			bm := b.(map[string]any)
			if bm["type"] == "tool_result" {
				results++
				text, _ := json.Marshal(bm["content"])
				if strings.Contains(string(text), "not run: one reply may ask for at most 5 calls, and this one asked for 300") {
					notRun++
				}
			}
		}
	}
	if results != n || notRun != n-max {
		t.Errorf("the next request answers %d calls, %d of them \"not run\"; want %d and %d", results, notRun, n, n-max)
	}
	rec := u.must("calls", "--conversation", "many1", "--json")
	var recs struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal([]byte(rec.stdout), &recs); err != nil || len(recs.Records) != max {
		got := len(recs.Records)
		t.Errorf("%d calls recorded, want the %d that ran:\n%.2000s", got, max, rec.stdout)
	}
}
