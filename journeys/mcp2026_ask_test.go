//go:build unix

package journeys

// A tool's own questions in MCP 2026-07-28 (Multi Round-Trip Requests): the
// conformance example's tools that ask the client's user (elicitation) and
// the client's model (sampling), served by `wield serve`, are called by a
// client of the new era without a session. The go-sdk v1.8.0 client is no
// longer steered to the handshake: its handlers are asked through
// input_required and its retries, and each call is recorded once. A raw
// client sees the round trip on the wire: input_required with the question
// and a signed requestState, a tampered or replayed state refused with
// -32602, and the retry with the answer ending the call.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcp2026AskMeta is the _meta of a raw client of 2026-07-28 that can elicit
// and sample.
const mcp2026AskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw-client","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"sampling":{}}}`

// mcp2026AskPost posts a tools/call of test_elicitation with extra params,
// returning the status and the decoded JSON-RPC answer.
func mcp2026AskPost(t *testing.T, s *server, id int, extra string) (int, map[string]any) {
	t.Helper()
	if extra != "" {
		extra = "," + extra
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"Who are you?"},%s%s}}`, id, mcp2026AskMeta, extra)
	code, b := s.do("POST", "/mcp", body, "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: test_elicitation")
	raw := b
	for line := range strings.Lines(string(b)) {
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			raw = []byte(d)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("tools/call answered %d %q: %v", code, b, err)
	}
	return code, m
}

func TestJourneyMCP2026ToolAsks(t *testing.T) {
	u := newUser(t)
	example, err := os.ReadFile("../examples/conformance/tools/client.yaml")
	if err != nil {
		t.Fatal(err)
	}
	u.write("tools/client.yaml", string(example))
	s := u.serve("--tools", "tools")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The go-sdk's client of 2026-07-28 with both handlers.
	var mu sync.Mutex
	var asked []string
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, "elicit: "+r.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "bo", "email": "bo@example.org"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			mu.Lock()
			asked = append(asked, "sample: "+r.Params.Messages[0].Content.(*mcp.TextContent).Text)
			mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "journey-model", Content: &mcp.TextContent{Text: "four"}}, nil
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" || cs.ID() != "" {
		t.Fatalf("protocol %q, session %q; want 2026-07-28 without a session (not steered to the handshake)", v, cs.ID())
	}
	text := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := text("test_elicitation", map[string]any{"message": "Who are you?"}); got != `User response: action=accept, content={"email":"bo@example.org","username":"bo"}` {
		t.Errorf("test_elicitation: %q", got)
	}
	if got := text("test_sampling", map[string]any{"prompt": "2+2?"}); got != "LLM response: four" {
		t.Errorf("test_sampling: %q", got)
	}
	mu.Lock()
	if got := strings.Join(asked, " | "); got != "elicit: Who are you? | sample: 2+2?" {
		t.Errorf("the client was asked %q, want each question once", got)
	}
	mu.Unlock()
	for _, tool := range []string{"test_elicitation", "test_sampling"} {
		if recs := records(t, s, tool); len(recs) != 1 || !recs[0].Result.OK {
			t.Errorf("records of %s: %+v, want one, successful", tool, recs)
		}
	}

	// On the wire: input_required with the question and a state.
	code, m := mcp2026AskPost(t, s, 1, "")
	res, _ := m["result"].(map[string]any)
	if code != 200 || res == nil || res["resultType"] != "input_required" {
		t.Fatalf("first request: %d %v, want input_required", code, m)
	}
	q, _ := res["inputRequests"].(map[string]any)["answer"].(map[string]any)
	params, _ := q["params"].(map[string]any)
	if q["method"] != "elicitation/create" || params["message"] != "Who are you?" {
		t.Errorf("the question: %v, want the tool's elicitation under answer, its step's as: name", q)
	}
	state, _ := res["requestState"].(string)
	retry := func(st string) string {
		b, _ := json.Marshal(st)
		return `"inputResponses":{"answer":{"action":"accept","content":{"username":"al","email":"al@example.org"}}},"requestState":` + string(b)
	}
	rpcErr := func(m map[string]any) string {
		e, _ := m["error"].(map[string]any)
		return fmt.Sprint(e["code"], " ", e["message"])
	}
	if code, m := mcp2026AskPost(t, s, 2, retry(state[:len(state)-4]+"AAAA")); code != 400 || !strings.Contains(rpcErr(m), "-32602 requestState refused: its signature does not match") {
		t.Errorf("tampered state: %d %s, want 400 and -32602 saying the signature does not match", code, rpcErr(m))
	}
	code, m = mcp2026AskPost(t, s, 3, retry(state))
	res, _ = m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if code != 200 || res["resultType"] != "complete" || len(content) != 1 || content[0].(map[string]any)["text"] != `User response: action=accept, content={"email":"al@example.org","username":"al"}` {
		t.Fatalf("retry with the answer: %d %v", code, m)
	}
	if code, m := mcp2026AskPost(t, s, 4, retry(state)); code != 400 || !strings.Contains(rpcErr(m), "not waiting for an answer") {
		t.Errorf("replayed state: %d %s, want it refused", code, rpcErr(m))
	}
	if recs := records(t, s, "test_elicitation"); len(recs) != 2 {
		t.Errorf("%d records of test_elicitation, want 2 (one per call)", len(recs))
	}

	if code, took := s.stop(syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("serve exited with %d after %v:\n%s", code, took, s.stderr)
	}
}
