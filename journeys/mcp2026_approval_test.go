//go:build unix

package journeys

// Approvals in the protocol (MCP 2026-07-28, Multi Round-Trip Requests): a
// client of the new era that can elicit calls a confirm tool of `wield
// serve` and is answered input_required, asking its person; its retry with
// the answer and the requestState runs the call once, recorded once. A
// tampered, replayed or expired state is refused with a clear JSON-RPC
// error, and nothing runs. The approval is the inbox's: approving from the
// console (REST) instead also works, and the retry gets the result.

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mcp2026Meta is the _meta of a raw 2026-07-28 client that can elicit.
const mcp2026Meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw-client","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// mcp2026Reply is a JSON-RPC answer of tools/call, as the wire carried it.
type mcp2026Reply struct {
	Result *struct {
		ResultType    string `json:"resultType"`
		RequestState  string `json:"requestState"`
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				Mode    string `json:"mode"`
				Message string `json:"message"`
			} `json:"params"`
		} `json:"inputRequests"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// mcp2026Call posts a tools/call of mark with args, and extra params (the
// retry's), as a raw client of the new era does: the headers the revision
// requires, no session.
func mcp2026Call(t *testing.T, s *server, id int, args, extra string) (int, mcp2026Reply) {
	t.Helper()
	if extra != "" {
		extra = "," + extra
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mark","arguments":%s,%s%s}}`, id, args, mcp2026Meta, extra)
	code, b := s.do("POST", "/mcp", body, "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: mark")
	raw := b
	for line := range strings.Lines(string(b)) { // an event stream, if the server chose one
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			raw = []byte(d)
		}
	}
	var r mcp2026Reply
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("tools/call answered %d %q: %v", code, b, err)
	}
	return code, r
}

// mcp2026Ask makes the first request and returns the requestState,
// checking the question.
func mcp2026Ask(t *testing.T, s *server, id int, args, message string) string {
	t.Helper()
	code, r := mcp2026Call(t, s, id, args, "")
	if code != 200 || r.Result == nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("first call: %d %+v %+v, want input_required with a requestState", code, r.Result, r.Error)
	}
	q := r.Result.InputRequests["wield_approval"]
	if q.Method != "elicitation/create" || q.Params.Mode != "form" || !strings.Contains(q.Params.Message, "'mark'") || !strings.Contains(q.Params.Message, message) {
		t.Errorf("the question: %+v, want an elicitation naming mark and %q", q, message)
	}
	return r.Result.RequestState
}

func mcp2026Retry(answer, state string) string {
	s, _ := json.Marshal(state)
	return `"inputResponses":{"wield_approval":` + answer + `},"requestState":` + string(s)
}

const mcp2026Yes = `{"action":"accept","content":{"approve":true}}`

func TestJourneyMCP2026Approval(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	u.write("wield.yaml", "mcp: {request_state_ttl: 2s}\n")
	s := u.serve("--tools", "tools", "--config", "wield.yaml")

	// Asked in the protocol: nothing runs, the approval waits in the inbox.
	state := mcp2026Ask(t, s, 1, `{"message":"first"}`, "first")
	if got := ranLines(t, u); got != "" {
		t.Fatalf("the tool ran before the answer: %q", got)
	}
	pendingIDs(t, u, 1)

	// A tampered state is refused, saying why; nothing runs.
	tampered := state[:len(state)-4] + "AAAA"
	if code, r := mcp2026Call(t, s, 2, `{"message":"first"}`, mcp2026Retry(mcp2026Yes, tampered)); code != 400 || r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "signature does not match") {
		t.Errorf("tampered state: %d %+v, want 400 and -32602 saying the signature does not match", code, r.Error)
	}
	// Bound to the arguments.
	if _, r := mcp2026Call(t, s, 3, `{"message":"other"}`, mcp2026Retry(mcp2026Yes, state)); r.Error == nil || !strings.Contains(r.Error.Message, "other arguments") {
		t.Errorf("state with other arguments: %+v, want it refused", r.Error)
	}

	// The retry approves: the call runs once, recorded once.
	code, r := mcp2026Call(t, s, 4, `{"message":"first"}`, mcp2026Retry(mcp2026Yes, state))
	if code != 200 || r.Result == nil || r.Result.ResultType != "complete" || r.Result.IsError {
		t.Fatalf("approving retry: %d %+v %+v", code, r.Result, r.Error)
	}
	if got := ranLines(t, u); got != "first\n" {
		t.Errorf("ran.txt %q, want the one run", got)
	}
	// Replayed: refused, and nothing runs again.
	if code, r := mcp2026Call(t, s, 5, `{"message":"first"}`, mcp2026Retry(mcp2026Yes, state)); code != 400 || r.Error == nil || !strings.Contains(r.Error.Message, "already answered") {
		t.Errorf("replayed state: %d %+v, want it refused as already answered", code, r.Error)
	}
	if got := ranLines(t, u); got != "first\n" {
		t.Errorf("ran.txt %q after the replay, want the one run", got)
	}
	if recs := records(t, s, "mark"); len(recs) != 1 || !recs[0].Result.OK {
		t.Errorf("records of mark: %+v, want one, successful", recs)
	}

	// Approved from the console instead: the retry gets that run's result.
	state = mcp2026Ask(t, s, 6, `{"message":"console"}`, "console")
	id := pendingIDs(t, u, 1)[0]
	_, body := s.do("GET", "/v1/approvals/"+id, "")
	var pending struct {
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal(body, &pending); err != nil || pending.Digest == "" {
		t.Fatalf("GET /v1/approvals/%s: %s", id, body)
	}
	if code, body := s.do("POST", "/v1/approvals/"+id+"/approve", `{"digest":"`+pending.Digest+`"}`); code != 200 {
		t.Fatalf("approve from the console: %d %s", code, body)
	}
	code, r = mcp2026Call(t, s, 7, `{"message":"console"}`, mcp2026Retry(mcp2026Yes, state))
	if code != 200 || r.Result == nil || r.Result.ResultType != "complete" || r.Result.IsError {
		t.Fatalf("retry after the console approved: %d %+v %+v", code, r.Result, r.Error)
	}
	if got := ranLines(t, u); got != "first\nconsole\n" {
		t.Errorf("ran.txt %q, want each call run once", got)
	}
	if recs := records(t, s, "mark"); len(recs) != 2 {
		t.Errorf("%d records of mark, want 2", len(recs))
	}

	// Expired: past request_state_ttl the state is refused; nothing runs.
	state = mcp2026Ask(t, s, 8, `{"message":"late"}`, "late")
	time.Sleep(2100 * time.Millisecond) // past the 2 s TTL configured above
	if code, r := mcp2026Call(t, s, 9, `{"message":"late"}`, mcp2026Retry(mcp2026Yes, state)); code != 400 || r.Error == nil || !strings.Contains(r.Error.Message, "expired") {
		t.Errorf("expired state: %d %+v, want it refused as expired", code, r.Error)
	}
	if got := ranLines(t, u); got != "first\nconsole\n" {
		t.Errorf("ran.txt %q after the expired state, want nothing more", got)
	}

	// The server stops promptly.
	if code, took := s.stop(syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("serve exited with %d after %v:\n%s", code, took, s.stderr)
	}
}
