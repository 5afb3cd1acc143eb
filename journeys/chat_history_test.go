//go:build unix

package journeys

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestJourneyChatHistoryBound: a chat of 60 lines, each a call of 2 KB
// and an answer of 2 KB, with --max-history 16KiB: every request the model
// gets holds the system prompt, starts its turns with a user line, holds
// the latest line and each call's result, and stays near the bound, however
// long the chat; stderr says, in one line for each line that does, that the
// oldest messages are no longer sent. Every line is answered.
func TestJourneyChatHistoryBound(t *testing.T) {
	const lines, bound = 60, 16 << 10
	pad := strings.Repeat("p", 2000)
	model, _ := newFakeModel(t, "", func(r chatRequest) any {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "tool" {
			return completion("answered " + pad)
		}
		return completion("", [2]string{"echo", `{"message":"` + pad + `"}`})
	})
	var in strings.Builder
	for i := range lines {
		fmt.Fprintf(&in, "line %d %s\n", i, pad)
	}
	u := newUser(t)
	r := u.wieldIn(in.String(), "chat", "--model", model.srv.URL+"/v1/m", "--system", "Be brief.", "--max-history", "16KiB")
	if r.code != 0 || strings.Count(r.stdout, "answered ") != lines {
		t.Fatalf("want %d answers and exit 0:\n%.3000s", lines, r)
	}
	notices := strings.Count(r.stderr, "oldest messages are no longer sent to the model")
	if notices == 0 || notices > lines || !strings.Contains(r.stderr, "is over --max-history 16KiB") {
		t.Errorf("%d notices of messages left out, want one a line at most, some:\n%.3000s", notices, r.stderr)
	}
	bodies := model.bodies(t)
	if len(bodies) != 2*lines {
		t.Fatalf("%d requests, want %d", len(bodies), 2*lines)
	}
	for n, b := range bodies {
		msgs := chatObjects(b["messages"])
		raw, _ := json.Marshal(msgs)
		latest := fmt.Sprintf("line %d ", n/2)
		if len(msgs) < 2 || msgs[0]["role"] != "system" || msgs[1]["role"] != "user" || !strings.Contains(string(raw), latest) || len(raw) > bound+8<<10 {
			t.Fatalf("request %d: %d messages of %d bytes; want the system prompt, a user line first, %q, and about %d bytes at most", n, len(msgs), len(raw), latest, bound)
		}
		called := map[string]bool{}
		for _, m := range msgs {
			for _, c := range chatObjects(m["tool_calls"]) {
				called[fmt.Sprint(c["id"])] = true
			}
			if m["role"] == "tool" && !called[fmt.Sprint(m["tool_call_id"])] {
				t.Fatalf("request %d: the result of %v without its call", n, m["tool_call_id"])
			}
		}
		for _, m := range msgs {
			for _, c := range chatObjects(m["tool_calls"]) {
				id, answered := fmt.Sprint(c["id"]), false
				for _, o := range msgs {
					answered = answered || (o["role"] == "tool" && o["tool_call_id"] == id)
				}
				if !answered {
					t.Fatalf("request %d: call %s without its result", n, id)
				}
			}
		}
	}

	// A size that is not one is refused before the chat starts.
	r = u.wieldIn("hi\n", "chat", "--model", model.srv.URL+"/v1/m", "--max-history", "lots")
	if r.code != 2 || !strings.Contains(r.stderr, `--max-history "lots": want a size such as 256KiB`) {
		t.Errorf("want exit 2 naming --max-history:\n%s", r)
	}
}

// chatObjects are the objects of a decoded JSON array.
func chatObjects(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
