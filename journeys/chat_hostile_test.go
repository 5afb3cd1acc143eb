//go:build unix

package journeys

import (
	"encoding/json"
	"strings"
	"testing"
)

// geminiChat runs `wield chat` on a Gemini fake with line as stdin.
func geminiChat(t *testing.T, model *fakeModel, line string) *run {
	t.Helper()
	u := newUser(t)
	for _, k := range []string{"GOOGLE_API_KEY", "GEMINI_BASE_URL"} {
		u.setenv(k, "")
	}
	u.setenv("GEMINI_API_KEY", "journey-key")
	u.setenv("GOOGLE_GEMINI_BASE_URL", model.srv.URL)
	return u.wieldIn(line, "chat", "--provider", "gemini", "--model", "gemini-journey")
}

// geminiCallParts is a generateContent answer whose model turn is parts.
func geminiCallParts(parts ...any) any {
	return map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}}}
}

// TestJourneyChatGeminiRenamedSigned: Gemini names two calls of one reply
// alike; wield renames the second so each result answers one call, and
// both go back with their thought signatures, which the fake (as Gemini 3
// does) requires: the line is answered.
func TestJourneyChatGeminiRenamedSigned(t *testing.T) {
	call := func(msg string) any {
		return map[string]any{"functionCall": map[string]any{"id": "dup", "name": "echo", "args": map[string]any{"message": msg}}, "thoughtSignature": geminiSignature}
	}
	model, _ := newFakeProvider(t, wireGemini, "journey-key", "",
		reply(geminiCallParts(call("one"), call("two"))),
		reply(geminiContent("Said both.")))
	r := geminiChat(t, model, "say one and two\n")
	if r.code != 0 || !strings.Contains(r.stdout, "Said both.") || strings.Count(r.stderr, "← echo ok") != 2 {
		t.Fatalf("want both calls run and the answer, exit 0:\n%s", r)
	}
	raw, _ := json.Marshal(model.bodies(t)[1]["contents"])
	if !strings.Contains(string(raw), `"id":"dup_2"`) || strings.Count(string(raw), `"functionResponse"`) != 2 {
		t.Errorf("the second call was not renamed, or the results are not one each:\n%s", raw)
	}
}

// TestJourneyChatHostileArgs: a model's call whose arguments are not an
// object (Gemini), or are 10 MB (over the engine's 8 MiB): the call fails
// as its result, the line is answered, and the next request carries {}
// in the arguments' place, not what the model sent.
func TestJourneyChatHostileArgs(t *testing.T) {
	t.Run("gemini not an object", func(t *testing.T) {
		model, _ := newFakeProvider(t, wireGemini, "journey-key", "",
			reply(geminiCallParts(map[string]any{"functionCall": map[string]any{"name": "echo", "args": []any{1, 2}}, "thoughtSignature": geminiSignature})),
			reply(geminiContent("Sorry.")))
		r := geminiChat(t, model, "echo\n")
		if r.code != 0 || !strings.Contains(r.stdout, "Sorry.") || !strings.Contains(r.stderr, "← echo validation_error") {
			t.Fatalf("want the call failed as its result and the answer, exit 0:\n%s", r)
		}
		contents := chatObjects(model.bodies(t)[1]["contents"])
		if len(contents) < 2 {
			t.Fatalf("the next request holds %d contents", len(contents))
		}
		for _, p := range chatObjects(contents[1]["parts"]) {
			if fc, ok := p["functionCall"].(map[string]any); ok && fc["args"] != nil {
				t.Errorf("the next request sends the call with args %v, want none", fc["args"])
			}
		}
	})
	t.Run("openai 10 MB", func(t *testing.T) {
		model, _ := newFakeModel(t, "",
			reply(completion("", [2]string{"echo", `{"message":"` + strings.Repeat("a", 10<<20) + `"}`})),
			reply(completion("Too long, sorry.")))
		u := newUser(t)
		r := u.wieldIn("echo\n", "chat", "--model", model.srv.URL+"/v1/m")
		if r.code != 0 || !strings.Contains(r.stdout, "Too long, sorry.") || !strings.Contains(r.stderr, "exceed the limit of 8388608 bytes") || len(r.stderr) > 16<<10 {
			t.Fatalf("want the call refused for its size, the answer, exit 0, stderr short:\n%.3000s", r)
		}
		if n := len(model.raw[1]); n > 1<<20 {
			t.Errorf("the next request is %d bytes, want the 10 MB left out", n)
		}
	})
}
