package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/internal/modeltest"
	"github.com/wieldhq/wield/llm/openai"
)

// conversation is a chat of n lines as the agent loop writes it: a system
// message, then for each line the user's words, up to three steps of
// calls (one to three each, their results right after) and the answer.
// Calls of one line may share IDs with another line's, as providers reuse
// them; sizes vary from a few bytes to a few KB.
func conversation(r *rand.Rand, n int) []llm.Message {
	text := func() string { return strings.Repeat("x", r.IntN(2000)) }
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "Be brief."}}
	for line := range n {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("line %d %s", line, text())})
		for step := range r.IntN(4) {
			var calls []llm.ToolCall
			for c := range 1 + r.IntN(3) {
				calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("call_%d_%d", step, c), Name: "echo", Arguments: json.RawMessage(`{"message":"` + text() + `"}`)})
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: strings.Repeat("x", r.IntN(2)), ToolCalls: calls})
			for _, c := range calls {
				msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name,
					Result: &wield.Result{Tool: c.Name, OK: true, Output: json.RawMessage(`"` + text() + `"`)}})
			}
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: "answer " + text()})
	}
	return msgs
}

func size(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += llm.HistorySize(m)
	}
	return n
}

// TestTrimHistory: a trimmed conversation keeps its system message, starts
// its turns with a user message, is a tail of the conversation, pairs
// every call with its result, and is within the bound unless it is only
// the latest line's turn; within the bound, nothing is left out.
func TestTrimHistory(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		msgs := conversation(r, 1+r.IntN(12))
		total := size(msgs)
		for _, bound := range []int{0, 1, 500, 5000, 20000, total, total + 1} {
			kept, dropped := llm.TrimHistory(msgs, bound)
			where := fmt.Sprintf("conversation %d (%d messages, %d bytes), bound %d", i, len(msgs), total, bound)
			if bound <= 0 || bound >= total {
				if dropped != 0 || len(kept) != len(msgs) {
					t.Fatalf("%s: %d left out, want none", where, dropped)
				}
				continue
			}
			if len(kept)+dropped != len(msgs) || kept[0].Role != llm.RoleSystem || (len(kept) > 1 && kept[1].Role != llm.RoleUser) {
				t.Fatalf("%s: kept %d, left out %d, starting %s then %s", where, len(kept), dropped, kept[0].Role, kept[1].Role)
			}
			for j, m := range kept[1:] {
				if o := msgs[1+dropped+j]; o.Role != m.Role || o.Content != m.Content || o.ToolCallID != m.ToolCallID {
					t.Fatalf("%s: message %d kept is not the conversation's %d", where, j+1, 1+dropped+j)
				}
			}
			if p := orphans(kept); p != "" {
				t.Fatalf("%s: %s", where, p)
			}
			last := 0
			for j, m := range msgs {
				if m.Role == llm.RoleUser {
					last = j
				}
			}
			if size(kept) > bound && 1+dropped != last {
				t.Fatalf("%s: kept %d bytes from message %d, over the bound though the latest line starts at %d", where, size(kept), 1+dropped, last)
			}
		}
	}
}

// orphans describes the first call without its result, or result without
// its call, in msgs: the result must follow its call's message, before the
// next turn.
func orphans(msgs []llm.Message) string {
	open := map[string]bool{}
	for i, m := range msgs {
		switch {
		case m.Role == llm.RoleTool:
			if !open[m.ToolCallID] {
				return fmt.Sprintf("message %d: result of %s without its call", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		case len(open) > 0:
			return fmt.Sprintf("message %d (%s): calls %v have no result", i, m.Role, open)
		}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("calls %v have no result", open)
	}
	return ""
}

// TestTrimHistoryDialects: what each client sends of a trimmed
// conversation pairs every call with its result in the provider's own
// terms (OpenAI's tool_calls and tool messages, the Responses API's
// function_call and function_call_output items, Anthropic's tool_use and
// tool_result blocks, Gemini's functionCall and functionResponse parts),
// and starts with the user's turn where Anthropic and Gemini require it.
func TestTrimHistoryDialects(t *testing.T) {
	for _, d := range []struct {
		name  string
		reply string
		new   func(url string) (llm.Model, error)
		wire  func(body map[string]any) string
	}{
		{"openai", `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`, func(url string) (llm.Model, error) {
			return openai.NewClient(openai.ClientOptions{Model: "m", BaseURL: url + "/v1", APIKey: "k", MaxRetries: -1})
		}, func(body map[string]any) string {
			var events []string
			for _, m := range items(body["messages"]) {
				if m["role"] == "tool" {
					events = append(events, "result "+fmt.Sprint(m["tool_call_id"]))
					continue
				}
				events = append(events, "turn "+fmt.Sprint(m["role"]))
				for _, c := range items(m["tool_calls"]) {
					events = append(events, "call "+fmt.Sprint(c["id"]))
				}
			}
			return pairing(events, "")
		}},
		{"responses", `{"id":"r","object":"response","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}`, func(url string) (llm.Model, error) {
			return openai.NewResponsesClient(openai.ClientOptions{Model: "m", BaseURL: url + "/v1", APIKey: "k", MaxRetries: -1})
		}, func(body map[string]any) string {
			var events []string
			for _, it := range items(body["input"]) {
				switch it["type"] {
				case "function_call":
					events = append(events, "call "+fmt.Sprint(it["call_id"]))
				case "function_call_output":
					events = append(events, "result "+fmt.Sprint(it["call_id"]))
				default:
					events = append(events, "turn "+fmt.Sprint(it["role"]))
				}
			}
			return pairing(events, "")
		}},
		{"anthropic", `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}`, func(url string) (llm.Model, error) {
			return anthropic.NewClient(anthropic.ClientOptions{Model: "m", BaseURL: url, APIKey: "k", MaxRetries: -1})
		}, func(body map[string]any) string {
			var events []string
			for _, m := range items(body["messages"]) {
				events = append(events, "turn "+fmt.Sprint(m["role"]))
				for _, b := range items(m["content"]) {
					switch b["type"] {
					case "tool_use":
						events = append(events, "call "+fmt.Sprint(b["id"]))
					case "tool_result":
						events = append(events, "result "+fmt.Sprint(b["tool_use_id"]))
					}
				}
			}
			return pairing(events, "user")
		}},
		{"gemini", `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`, func(url string) (llm.Model, error) {
			return gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "m", BaseURL: url, APIKey: "k"})
		}, func(body map[string]any) string {
			var events []string
			for _, c := range items(body["contents"]) {
				events = append(events, "turn "+fmt.Sprint(c["role"]))
				for _, p := range items(c["parts"]) {
					if fc, ok := p["functionCall"].(map[string]any); ok {
						events = append(events, "call "+fmt.Sprint(fc["id"]))
					}
					if fr, ok := p["functionResponse"].(map[string]any); ok {
						events = append(events, "result "+fmt.Sprint(fr["id"]))
					}
				}
			}
			return pairing(events, "user")
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			srv := modeltest.Serve(t, modeltest.Reply{Body: d.reply})
			m, err := d.new(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(3, 4))
			for i := range 40 {
				msgs := conversation(r, 2+r.IntN(10))
				for _, bound := range []int{1, 3000, 10000, 30000} {
					kept, dropped := llm.TrimHistory(msgs, bound)
					if _, err := m.Generate(context.Background(), &llm.ModelRequest{Messages: kept}); err != nil {
						t.Fatal(err)
					}
					reqs := srv.Requests()
					var body map[string]any
					if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
						t.Fatal(err)
					}
					if p := d.wire(body); p != "" {
						t.Fatalf("conversation %d, bound %d (%d of %d messages left out): %s", i, bound, dropped, len(msgs), p)
					}
				}
			}
		})
	}
}

// items are the objects of a JSON array.
func items(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// pairing checks a request's events ("turn ROLE", "call ID", "result ID"):
// every call is answered by exactly one result before the next call-making
// turn, every result answers a call made before it, and the first turn is
// first's role (any when "").
func pairing(events []string, first string) string {
	open := map[string]bool{}
	for i, e := range events {
		kind, arg, _ := strings.Cut(e, " ")
		switch kind {
		case "turn":
			if i == 0 && first != "" && arg != first {
				return fmt.Sprintf("the request starts with a %s turn, want %s", arg, first)
			}
		case "call":
			open[arg] = true
		case "result":
			if !open[arg] {
				return fmt.Sprintf("result of %s without its call: %v", arg, events)
			}
			delete(open, arg)
		}
		if kind == "turn" && arg != "tool" && arg != "user" && len(open) > 0 {
			return fmt.Sprintf("a %s turn while calls %v have no result", arg, open)
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("calls %v have no result", open)
	}
	return ""
}
