//go:build unix

package journeys

// A caller that cancels its call while it waits for approval, on purpose:
// the approval ends (denied, the reason saying the caller canceled) and the
// call is recorded as canceled at once. One that merely disconnects leaves
// the approval pending (TestJourneyApprovalCallerLeft).

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// approvalShown is one approval as `wield approvals list --status all --json`
// shows it.
type approvalShown struct {
	ID       string `json:"id"`
	CallID   string `json:"call_id"`
	Status   string `json:"status"`
	Decision *struct {
		By     string `json:"by"`
		Reason string `json:"reason"`
	} `json:"decision"`
}

// endedByCaller waits (up to 5 s) for the only approval to be denied by
// the caller, and checks the record of its call says canceled.
func endedByCaller(t *testing.T, u *user, s *server) {
	t.Helper()
	var list []approvalShown
	ok := eventually(5*time.Second, func() bool {
		u.must("approvals", "list", "--status", "all", "--json").json(t, &list)
		return len(list) == 1 && list[0].Status != "pending"
	})
	if !ok || list[0].Status != "denied" || list[0].Decision == nil || list[0].Decision.By != "caller" ||
		!strings.Contains(list[0].Decision.Reason, "the caller canceled the call while waiting for approval") {
		t.Fatalf("approvals after the cancel: %+v; want one, denied by the caller, saying why", list)
	}
	var rec []record
	ok = eventually(5*time.Second, func() bool {
		rec = records(t, s, "mark")
		return len(rec) == 1
	})
	if !ok || rec[0].Call.ID != list[0].CallID || rec[0].Result.ErrorType != "canceled" ||
		!strings.Contains(rec[0].Result.Error, "the caller canceled the call while it waited for approval "+list[0].ID) {
		t.Fatalf("records of mark: %+v; want the call, canceled while waiting for approval %s", rec, list[0].ID)
	}
	if _, err := os.Stat(u.path("ran.txt")); err == nil {
		t.Error("the canceled call ran")
	}
}

// TestJourneyApprovalCanceledMCP: an MCP client calls a confirm tool over
// /mcp and cancels (its context ends: the SDK sends
// notifications/cancelled). The approval is denied by the caller, saying
// so, and the call is recorded as canceled.
func TestJourneyApprovalCanceledMCP(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	s := u.serve("--tools", "tools")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "mark", Arguments: map[string]any{"message": "x"}})
		done <- err
	}()
	pendingIDs(t, u, 1)
	stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the canceled call did not return")
	}
	endedByCaller(t, u, s)
}

// TestJourneyApprovalCanceledTimeout: a REST call of a confirm tool with
// timeout_ms 500 answers when its timeout elapses, canceled, saying it
// waited for approval; the approval is denied by the caller.
func TestJourneyApprovalCanceledTimeout(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	s := u.serve("--tools", "tools")
	start := time.Now()
	code, b := s.do("POST", "/v1/tools/mark/call", `{"arguments":{"message":"x"},"timeout_ms":500}`)
	if took := time.Since(start); took > 5*time.Second || !strings.Contains(string(b), `"error_type":"canceled"`) {
		t.Fatalf("the call answered after %v: %d %s; want canceled after its 500 ms", took, code, b)
	}
	endedByCaller(t, u, s)
}
