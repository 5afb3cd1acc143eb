package mcpbridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/memstore"
)

// TestServerConfirmEndedByShutdown: a confirm tool's question put to the
// client by elicitation, when the server stops waiting for approvals
// (engine.EndApprovalWaits, which a shutting-down wield serve calls), ends
// the call saying that the server shut down, and not that the client left
// (which it did not: it was still looking at the question).
func TestServerConfirmEndedByShutdown(t *testing.T) {
	f := srvNew(t, nil, &engine.Options{Approver: mcpbridge.NewApprover(memstore.NewApprovals(nil))})
	asked, read := make(chan struct{}, 1), make(chan struct{})
	copts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		select { // the person is still reading when the server stops waiting
		case <-read:
		case <-ctx.Done():
		case <-time.After(srvWait):
		}
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}}
	cs := srvConnect(t, f, srvStateful, "/mcp", copts)
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- srvCall(t, cs, "wipe", map[string]any{"message": "disk"}) }()
	<-asked
	f.eng.EndApprovalWaits()
	var res *mcp.CallToolResult
	select {
	case res = <-done:
	case <-time.After(srvWait):
		close(read)
		t.Fatalf("the call still waits %v after the server stopped waiting for approvals", srvWait)
	}
	close(read)
	text := srvViewOf(res).Text
	if !res.IsError || len(text) != 1 || !strings.Contains(text[0], "the server shut down") || strings.Contains(text[0], "client left") {
		t.Errorf("the call whose question the shutdown ended: %v (error %v); want an error saying the server shut down", text, res.IsError)
	}
}
