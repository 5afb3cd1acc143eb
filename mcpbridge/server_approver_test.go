package mcpbridge_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/memstore"
	"github.com/wieldhq/wield/sqlite"
)

// srvAnswer is a client's answer to the approval question.
func srvAnswer(action string, content map[string]any, asked *[]string, mu *sync.Mutex) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		*asked = append(*asked, r.Params.Message)
		mu.Unlock()
		return &mcp.ElicitResult{Action: action, Content: content}, nil
	}}
}

func TestServerConfirmByElicitation(t *testing.T) {
	const question = "Allow the tool 'wipe' to run with these arguments?\n\n{\n  \"message\": \"disk\"\n}"
	tests := []struct {
		name       string
		tr         srvTransport
		action     string
		content    map[string]any
		noElicit   bool // the client cannot elicit
		want       srvView
		wantAsked  []string
		wantInbox  int // requests that reached the fallback
		inboxSaysY bool
	}{
		{name: "accepted", tr: srvStateful, action: "accept", content: map[string]any{"approve": true},
			want: srvView{Text: []string{"wiped disk"}}, wantAsked: []string{question}},
		{name: "accepted over stdio", tr: srvStdio, action: "accept", content: map[string]any{"approve": true},
			want: srvView{Text: []string{"wiped disk"}}, wantAsked: []string{question}},
		{name: "answered no", tr: srvStateful, action: "accept", content: map[string]any{"approve": false, "reason": "not today"},
			want: srvView{Text: []string{"Error: The user denied the call of tool 'wipe': not today"}, IsError: true}, wantAsked: []string{question}},
		{name: "declined", tr: srvStateful, action: "decline",
			want: srvView{Text: []string{"Error: The user denied the call of tool 'wipe': declined in the MCP client"}, IsError: true}, wantAsked: []string{question}},
		{name: "no elicitation: the inbox approves", tr: srvStateful, noElicit: true, inboxSaysY: true,
			want: srvView{Text: []string{"wiped disk"}}, wantInbox: 1},
		{name: "no elicitation: the inbox denies", tr: srvStdio, noElicit: true,
			want: srvView{Text: []string{"Error: The user denied the call of tool 'wipe': by the inbox"}, IsError: true}, wantInbox: 1},
		{name: "stateless: the inbox decides", tr: srvStateless, action: "accept", content: map[string]any{"approve": false}, inboxSaysY: true,
			want: srvView{Text: []string{"wiped disk"}}, wantInbox: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			inboxed := 0
			var inbox *memstore.Approvals
			inbox = memstore.NewApprovals(func(req *wield.ApprovalRequest) {
				mu.Lock()
				inboxed++
				mu.Unlock()
				d := wield.Decision{Approved: tt.inboxSaysY, Reason: "by the inbox"}
				if err := inbox.Decide(req.ID, req.Digest, d); err != nil {
					t.Error(err)
				}
			})
			f := srvNew(t, &mcpbridge.ServerOptions{Stateless: tt.tr == srvStateless}, &engine.Options{Approver: mcpbridge.NewApprover(inbox)})
			copts := srvAnswer(tt.action, tt.content, &asked, &mu)
			if tt.noElicit {
				copts = nil
			}
			cs := srvConnect(t, f, tt.tr, "/mcp", copts)
			got := srvViewOf(srvCall(t, cs, "wipe", map[string]any{"message": "disk"}))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tt.wantAsked, asked); diff != "" {
				t.Errorf("questions to the client (-want +got):\n%s", diff)
			}
			if inboxed != tt.wantInbox {
				t.Errorf("requests in the fallback inbox: %d, want %d", inboxed, tt.wantInbox)
			}
		})
	}
}

// TestServerConfirmWithDurableInbox checks the claim of a single-use
// approval: one given by elicitation is claimed by the wrapper, not looked
// up in the durable inbox, which never saw it.
func TestServerConfirmWithDurableInbox(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	inbox := approval.New(store, nil)
	approver := mcpbridge.NewApprover(inbox)
	if _, ok := approver.(wield.ApprovalClaimer); !ok {
		t.Fatal("the approver over a claiming inbox does not claim")
	}
	if _, ok := mcpbridge.NewApprover(memstore.NewApprovals(nil)).(wield.ApprovalClaimer); ok {
		t.Error("the approver over a non-claiming inbox claims")
	}
	f := srvNew(t, nil, &engine.Options{Store: store, Approver: approver})
	var mu sync.Mutex
	var asked []string
	cs := srvConnect(t, f, srvStateful, "/mcp", srvAnswer("accept", map[string]any{"approve": true}, &asked, &mu))
	for i := range 2 { // each call asks anew
		if diff := cmp.Diff(srvView{Text: []string{"wiped disk"}}, srvViewOf(srvCall(t, cs, "wipe", map[string]any{"message": "disk"}))); diff != "" {
			t.Errorf("call %d (-want +got):\n%s", i, diff)
		}
	}
	pending, err := inbox.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 0 || len(asked) != 2 {
		t.Errorf("pending approvals in the store: %d, questions: %d; want 0 and 2", len(pending), len(asked))
	}
	// Without an MCP client the durable inbox decides, and the wrapper
	// hands the claim to it.
	done := make(chan *wield.Result, 1)
	go func() {
		res, err := f.eng.Call(ctx, wield.Call{Tool: "wipe", Arguments: []byte(`{"message":"direct"}`)})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var pending1 []*wield.Approval
	srvEventually(t, "the direct call reaches the inbox", func() bool {
		pending1, err = inbox.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(pending1) == 1
	})
	if _, err := inbox.Decide(ctx, pending1[0].ID, pending1[0].Digest, wield.Decision{Approved: true, By: "test"}); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !strings.Contains(res.Text(), "wiped direct") {
		t.Errorf("direct call after the inbox approved: %s", res.Text())
	}
}

// srvEventually polls cond until it holds, for at most srvWait.
func srvEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(srvWait)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waited %s in vain: %s", srvWait, what)
		}
	}
}
